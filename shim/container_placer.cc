#include "shim/container_placer.h"

#include <vector>

#include "fmt/format.h"
#include "spdlog/spdlog.h"

#include "lib/cgroup/container_cgroup.h"
#include "lib/common/absl_fmt.h"
#include "lib/shim/admission_plan.h"

#include "shim/plan_request.h"

namespace topologyd::shim {
namespace {

// Whether topologyd's answer is about the pod (its spec is wrong or missing), not a sign that
// topologyd could not decide: then the failure policy does not apply.
bool AnsweredAboutThePod(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument ||
         status.code() == absl::StatusCode::kFailedPrecondition;
}

}  // namespace

ContainerPlacer::ContainerPlacer(const ShimConfig& config, TopologydClient* topologyd,
                                 PodSpecResolver* specs, AllocationCache* cache, RuntimeBook* book,
                                 const PodCgroupQuota* pod_quota)
    : config_(config),
      topologyd_(topologyd),
      specs_(specs),
      cache_(cache),
      book_(book),
      pod_quota_(pod_quota) {}

absl::Status ContainerPlacer::PlanPod(const SandboxRecord& sandbox,
                                      std::optional<Deadline> deadline) {
  if (cache_->HoldsPod(sandbox.pod_uid)) return absl::OkStatus();
  const std::optional<pod::Pod> api_spec = specs_->ApiServerSpec(sandbox);
  const std::vector<planner::SpecSource> sources = DaemonSpecSources(config_);
  absl::StatusOr<v1::PlanContainerResponse> reply = topologyd_->PlanContainer(
      PlanRequest(sandbox, {}, std::nullopt, api_spec, sources, false), deadline);
  if (!reply.ok()) {
    if (AnsweredAboutThePod(reply.status())) return reply.status();
    // No decision: the failure policy decides, on the spec topologyd would have used. A pod
    // known only from estimates is not admitted here anyway.
    absl::StatusOr<std::optional<planner::ResolvedSpec>> full = planner::FullSpec(
        RuntimePodOf(sandbox, {}), api_spec, sources, pod::kDefaultMaxContainersPerPod);
    if (full.ok() && !*full) return absl::OkStatus();
    bool needs = !full.ok();
    if (full.ok()) {
      for (const pod::OrderedContainer& c : pod::StartOrder((*full)->pod)) {
        needs = needs || NeedsPlacement((*full)->pod, c.spec->name);
      }
    }
    if (needs || config_.failure_policy == FailurePolicy::kFail) {
      return absl::UnavailableError(
          fmt::format("topologyd-shim: pod {}/{} is not started until topologyd admits it: {}",
                      sandbox.namespace_name, sandbox.pod_name, reply.status().message()));
    }
    return absl::OkStatus();
  }
  if (reply->outcome() == v1::PlanContainerResponse::REFUSED) {
    return RefusalStatus(reply->admission().reason(), reply->admission().message());
  }
  if (reply->outcome() == v1::PlanContainerResponse::PLACED) {
    cache_->PutPod(sandbox.pod_uid, reply->admission());
  }
  return absl::OkStatus();
}

ContainerPlacer::Planned ContainerPlacer::PlanContainer(
    const SandboxRecord& sandbox, const std::string& name,
    const runtime::v1::LinuxContainerResources& resources, std::optional<Deadline> deadline,
    bool answer_when_decided) {
  Planned plan;
  // A container topologyd holds (a restart, a retried create) is pinned where it is, also
  // while topologyd restarts.
  if (std::optional<Placement> held = cache_->Find(sandbox.pod_uid, name)) {
    plan.placement = std::move(held);
    return plan;
  }
  const std::optional<pod::Pod> api_spec = specs_->ApiServerSpec(sandbox);
  const KnownResources known = book_->Resources(sandbox.pod_uid);
  const bool first = !book_->HasContainers(sandbox.pod_uid);
  const planner::RuntimeContainer container{name, ToCriResources(resources)};
  const std::vector<planner::SpecSource> sources = DaemonSpecSources(config_);
  absl::StatusOr<v1::PlanContainerResponse> reply = topologyd_->PlanContainer(
      PlanRequest(sandbox, known, container, api_spec, sources, answer_when_decided), deadline);
  if (!reply.ok()) {
    if (AnsweredAboutThePod(reply.status())) {
      plan.status = reply.status();
      return plan;
    }
    // No decision: the failure policy decides, on the spec topologyd would have used.
    absl::StatusOr<planner::ResolvedSpec> spec =
        planner::ResolveSpec(RuntimePodOf(sandbox, known), container, api_spec, sources,
                             pod::kDefaultMaxContainersPerPod);
    const bool needs = !spec.ok() || NeedsPlacement(spec->pod, name);
    if (needs || config_.failure_policy == FailurePolicy::kFail) {
      plan.status = absl::UnavailableError(fmt::format(
          "topologyd-shim: container {} of pod {}/{} is not created until topologyd places it: "
          "{}",
          name, sandbox.namespace_name, sandbox.pod_name, reply.status().message()));
    } else {
      spdlog::warn("container {} of pod {}/{} created unpinned (failurePolicy Ignore): {}", name,
                   sandbox.namespace_name, sandbox.pod_name, reply.status().message());
    }
    return plan;
  }
  if (first && reply->spec_source() == "estimate") {
    spdlog::info(
        "pod {}/{} (uid {}): no full spec; placing its containers from CRI estimates. "
        "Unknown: {}",
        sandbox.namespace_name, sandbox.pod_name, sandbox.pod_uid,
        fmt::join(reply->unknown(), "; "));
  }
  switch (reply->outcome()) {
    case v1::PlanContainerResponse::NOT_PLACED:
      spdlog::info("{}; creating it unchanged", reply->note());
      return plan;
    case v1::PlanContainerResponse::REFUSED:
      plan.status = RefusalStatus(reply->admission().reason(), reply->admission().message());
      return plan;
    case v1::PlanContainerResponse::PLACED:
      break;
    default:
      plan.status = absl::UnavailableError(fmt::format(
          "topologyd-shim: topologyd answered container {} of pod {}/{} with an "
          "outcome this shim does not know ({})",
          name, sandbox.namespace_name, sandbox.pod_name, static_cast<int>(reply->outcome())));
      return plan;
  }
  const v1::AdmitResponse& admission = reply->admission();
  if (admission.not_yet_durable()) {
    // The checkpoint is written while the runtime creates the container.
    plan.durability = std::make_shared<DurabilityWait>();
    topologyd_->AwaitDurableAsync(
        admission, deadline,
        [wait = plan.durability](absl::Status durable) { wait->Settle(std::move(durable)); });
  }
  cache_->PutPod(sandbox.pod_uid, admission);
  plan.placement = PlacementOf(reply->container());
  return plan;
}

void ContainerPlacer::LiftPodQuota(const SandboxRecord& sandbox) {
  if (pod_quota_ == nullptr || !cache_->PodCpuQuotaUnlimited(sandbox.pod_uid)) return;
  if (!book_->MarkPodQuotaLifted(sandbox.pod_uid)) return;
  absl::StatusOr<std::string> pod_cgroup =
      cgroup::PodCgroup(sandbox.cgroup_parent, config_.cgroup_driver);
  absl::Status lifted = pod_cgroup.ok() ? pod_quota_->Lift(*pod_cgroup) : pod_cgroup.status();
  if (lifted.ok()) {
    spdlog::info("pod {}/{}: pod cgroup {} runs without a CFS quota (exclusive CPUs)",
                 sandbox.namespace_name, sandbox.pod_name, *pod_cgroup);
    return;
  }
  // kubelet creates the pod cgroup before the sandbox; a missing one is not this call's to fail.
  spdlog::warn(
      "pod {}/{}: the CFS quota of its pod cgroup (parent \"{}\", under {}) was not lifted; its "
      "exclusive containers keep the pod's quota: {}",
      sandbox.namespace_name, sandbox.pod_name, sandbox.cgroup_parent, pod_quota_->path(),
      lifted.message());
}

void ContainerPlacer::Bind(const ContainerRecord& container) {
  const std::optional<SandboxRecord> sandbox = book_->Sandbox(container.sandbox_id);
  if (!sandbox) return;
  if (!cache_->Find(container.pod_uid, container.name)) return;  // not placed by topologyd
  absl::StatusOr<std::string> cgroup = cgroup::ContainerCgroup(
      sandbox->cgroup_parent, container.id, config_.cgroup_driver, config_.runtime);
  if (!cgroup.ok()) {
    spdlog::error("container {} ({}) of pod {} cannot be bound: {}", container.name, container.id,
                  container.pod_uid, cgroup.status().message());
    return;
  }
  absl::StatusOr<v1::AllocateResponse> bound =
      topologyd_->Allocate(container.pod_uid, container.name, container.id, *cgroup);
  if (!bound.ok()) {
    spdlog::warn("container {} ({}) of pod {} is not bound yet, the next resync retries: {}",
                 container.name, container.id, container.pod_uid, bound.status().message());
    return;
  }
  spdlog::info("container {} ({}) of pod {} bound to cgroup {} on CPUs {}", container.name,
               container.id, container.pod_uid, *cgroup, bound->container().cpus());
}

void ContainerPlacer::ReleaseRemoved(const RuntimeBook::Removed& removed) {
  const ContainerRecord& container = removed.container;
  std::optional<Placement> held = cache_->Find(container.pod_uid, container.name);
  if (removed.newer_instance || !held || held->container_id != container.id) return;
  absl::Status released = topologyd_->Release(container.pod_uid, container.name, container.id);
  if (released.ok() || released.code() == absl::StatusCode::kNotFound) {
    cache_->EraseContainer(container.pod_uid, container.name);
  } else {
    spdlog::warn("container {} ({}) of pod {} was removed but not released: {}", container.name,
                 container.id, container.pod_uid, released.message());
  }
}

void ContainerPlacer::ReleasePod(const std::string& pod_uid, std::string_view why) {
  absl::Status released = topologyd_->Release(pod_uid, "", "");
  if (released.ok() || released.code() == absl::StatusCode::kNotFound) {
    cache_->ErasePod(pod_uid);
    spdlog::info("pod {} released ({})", pod_uid, why);
  } else {
    spdlog::warn("pod {} not released ({}), the next resync retries: {}", pod_uid, why,
                 released.message());
  }
}

}  // namespace topologyd::shim
