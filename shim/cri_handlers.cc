#include "shim/cri_handlers.h"

#include <algorithm>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

#include "lib/cgroup/container_cgroup.h"
#include "lib/common/absl_fmt.h"
#include "lib/shim/admission_plan.h"

#include "shim/placement_resources.h"
#include "shim/plan_request.h"

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

std::string_view MethodName(std::string_view method) {
  return method.starts_with(kRuntimeService) ? method.substr(kRuntimeService.size())
                                             : std::string_view();
}

// Whether topologyd's answer is about the pod (its spec is wrong or missing), not a sign that
// topologyd could not decide: then the failure policy does not apply.
bool AnsweredAboutThePod(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument ||
         status.code() == absl::StatusCode::kFailedPrecondition;
}

Forward Refuse(absl::Status status) { return Forward{std::move(status), std::string(), nullptr}; }

absl::Status Undecodable(std::string_view what) {
  return absl::InvalidArgumentError(
      fmt::format("topologyd-shim: cannot decode the {} request", what));
}

// The runtime's JSON (verbose status "info") for a config field, by its proto name.
const nlohmann::json* JsonPath(const nlohmann::json& root,
                               std::initializer_list<const char*> path) {
  const nlohmann::json* node = &root;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

}  // namespace

CriHandlers::CriHandlers(const ShimConfig& config, TopologydClient* topologyd,
                         PodSpecResolver* specs, AllocationCache* cache,
                         cri::RuntimeService::StubInterface* runtime,
                         const PodCgroupQuota* pod_quota)
    : config_(config),
      topologyd_(topologyd),
      specs_(specs),
      cache_(cache),
      runtime_(runtime),
      pod_quota_(pod_quota) {}

bool CriHandlers::Intercepts(std::string_view method) {
  static constexpr std::string_view kIntercepted[] = {
      "RunPodSandbox",  "CreateContainer",  "StartContainer",          "RemoveContainer",
      "StopPodSandbox", "RemovePodSandbox", "UpdateContainerResources"};
  const std::string_view name = MethodName(method);
  return std::find(std::begin(kIntercepted), std::end(kIntercepted), name) !=
         std::end(kIntercepted);
}

bool CriHandlers::AfterOnlyBooks(std::string_view method) {
  const std::string_view name = MethodName(method);
  return name == "RunPodSandbox" || name == "CreateContainer";
}

Forward CriHandlers::Before(std::string_view method, std::string request,
                            std::optional<Deadline> deadline) {
  const std::string_view name = MethodName(method);
  if (name == "RunPodSandbox") return BeforeRunPodSandbox(std::move(request), deadline);
  if (name == "CreateContainer") return BeforeCreateContainer(std::move(request), deadline);
  if (name == "UpdateContainerResources") {
    return BeforeUpdateContainerResources(std::move(request));
  }
  return Forward{absl::OkStatus(), std::move(request), nullptr};
}

void CriHandlers::After(std::string_view method, const std::string& forwarded_request, bool ok,
                        const std::string& response) {
  const std::string_view name = MethodName(method);
  if (ok) {
    if (name == "RunPodSandbox") AfterRunPodSandbox(forwarded_request, response);
    if (name == "CreateContainer") AfterCreateContainer(forwarded_request, response);
    if (name == "StartContainer") AfterStartContainer(forwarded_request);
    if (name == "StopPodSandbox") AfterPodSandboxEnds(forwarded_request, /*removed=*/false);
  }
  // kubelet removes what it no longer wants whatever the runtime answers; so does the shim.
  if (name == "RemoveContainer") AfterRemoveContainer(forwarded_request);
  if (name == "RemovePodSandbox") AfterPodSandboxEnds(forwarded_request, /*removed=*/true);
}

SandboxRecord CriHandlers::SandboxFromConfig(const std::string& sandbox_id,
                                             const cri::PodSandboxConfig& config) const {
  SandboxRecord s;
  s.id = sandbox_id;
  s.pod_uid = config.metadata().uid();
  s.namespace_name = config.metadata().namespace_();
  s.pod_name = config.metadata().name();
  s.annotations.insert(config.annotations().begin(), config.annotations().end());
  s.cgroup_parent = config.linux().cgroup_parent();
  s.attempt = config.metadata().attempt();
  return s;
}

CriHandlers::Planned CriHandlers::PlanContainer(const SandboxRecord& sandbox,
                                                const std::string& name,
                                                const cri::LinuxContainerResources& resources,
                                                std::optional<Deadline> deadline,
                                                bool answer_when_decided) {
  Planned plan;
  // A container topologyd holds (a restart, a retried create) is pinned where it is, also
  // while topologyd restarts.
  if (std::optional<Placement> held = cache_->Find(sandbox.pod_uid, name)) {
    plan.placement = std::move(held);
    return plan;
  }
  const std::optional<pod::Pod> api_spec = specs_->ApiServerSpec(sandbox);
  KnownResources known;
  bool first;
  {
    absl::MutexLock lock(&mu_);
    known = book_.Resources(sandbox.pod_uid);
    first = book_.ContainersOfPod(sandbox.pod_uid).empty();
  }
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

Forward CriHandlers::BeforeRunPodSandbox(std::string request, std::optional<Deadline> deadline) {
  cri::RunPodSandboxRequest run;
  if (!run.ParseFromString(request)) return Refuse(Undecodable("RunPodSandbox"));
  const SandboxRecord sandbox = SandboxFromConfig("", run.config());
  // With the pod's full spec, topologyd decides the whole pod now, as kubelet admits a pod
  // before creating anything; without it the containers are learnt one CreateContainer at a
  // time.
  if (!cache_->HoldsPod(sandbox.pod_uid)) {
    const std::optional<pod::Pod> api_spec = specs_->ApiServerSpec(sandbox);
    const std::vector<planner::SpecSource> sources = DaemonSpecSources(config_);
    absl::StatusOr<v1::PlanContainerResponse> reply = topologyd_->PlanContainer(
        PlanRequest(sandbox, {}, std::nullopt, api_spec, sources, false), deadline);
    if (!reply.ok()) {
      if (AnsweredAboutThePod(reply.status())) return Refuse(reply.status());
      // No decision: the failure policy decides, on the spec topologyd would have used. A pod
      // known only from estimates is not admitted here anyway.
      absl::StatusOr<std::optional<planner::ResolvedSpec>> full = planner::FullSpec(
          RuntimePodOf(sandbox, {}), api_spec, sources, pod::kDefaultMaxContainersPerPod);
      if (full.ok() && !*full) return Forward{absl::OkStatus(), request, nullptr};
      bool needs = !full.ok();
      if (full.ok()) {
        for (const pod::OrderedContainer& c : pod::StartOrder((*full)->pod)) {
          needs = needs || NeedsPlacement((*full)->pod, c.spec->name);
        }
      }
      if (needs || config_.failure_policy == FailurePolicy::kFail) {
        return Refuse(absl::UnavailableError(
            fmt::format("topologyd-shim: pod {}/{} is not started until topologyd admits it: {}",
                        sandbox.namespace_name, sandbox.pod_name, reply.status().message())));
      }
      return Forward{absl::OkStatus(), request, nullptr};
    }
    if (reply->outcome() == v1::PlanContainerResponse::REFUSED) {
      return Refuse(RefusalStatus(reply->admission().reason(), reply->admission().message()));
    }
    if (reply->outcome() == v1::PlanContainerResponse::PLACED) {
      cache_->PutPod(sandbox.pod_uid, reply->admission());
    }
  }
  // A pod with exclusive CPUs: kubelet's static policy runs its sandbox and pod cgroup without
  // a CFS quota (a pod known only from estimates is learnt later: CreateContainer lifts its pod
  // cgroup).
  if (!cache_->PodCpuQuotaUnlimited(sandbox.pod_uid)) {
    return Forward{absl::OkStatus(), request, nullptr};
  }
  LiftPodQuota(sandbox);
  ApplyPodQuota(true, run.mutable_config());
  return Forward{absl::OkStatus(), run.SerializeAsString(), nullptr};
}

void CriHandlers::LiftPodQuota(const SandboxRecord& sandbox) {
  if (pod_quota_ == nullptr || !cache_->PodCpuQuotaUnlimited(sandbox.pod_uid)) return;
  {
    absl::MutexLock lock(&mu_);
    if (!book_.MarkPodQuotaLifted(sandbox.pod_uid)) return;
  }
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

void CriHandlers::AfterRunPodSandbox(const std::string& request, const std::string& response) {
  cri::RunPodSandboxRequest run;
  cri::RunPodSandboxResponse reply;
  if (!run.ParseFromString(request) || !reply.ParseFromString(response)) return;
  absl::MutexLock lock(&mu_);
  book_.PutSandbox(SandboxFromConfig(reply.pod_sandbox_id(), run.config()));
}

Forward CriHandlers::BeforeCreateContainer(std::string request, std::optional<Deadline> deadline) {
  cri::CreateContainerRequest create;
  if (!create.ParseFromString(request)) return Refuse(Undecodable("CreateContainer"));
  // The request repeats the sandbox's config, so a shim that never saw RunPodSandbox (it
  // restarted since) has all it needs.
  const SandboxRecord sandbox = SandboxFromConfig(create.pod_sandbox_id(), create.sandbox_config());
  {
    absl::MutexLock lock(&mu_);
    if (book_.Sandbox(sandbox.id) == nullptr) book_.PutSandbox(sandbox);
  }
  const std::string& name = create.config().metadata().name();
  Planned plan = PlanContainer(sandbox, name, create.config().linux().resources(), deadline,
                               /*answer_when_decided=*/true);
  if (!plan.status.ok()) return Refuse(plan.status);
  if (!plan.placement) return Forward{absl::OkStatus(), std::move(request), nullptr};
  ApplyPlacement(*plan.placement, create.mutable_config()->mutable_linux()->mutable_resources());
  LiftPodQuota(sandbox);
  return Forward{absl::OkStatus(), create.SerializeAsString(), std::move(plan.durability)};
}

absl::Status CriHandlers::AfterCreateNotDurable(const std::string& forwarded_request, bool created,
                                                const std::string& response,
                                                const absl::Status& why) {
  cri::CreateContainerRequest create;
  create.ParseFromString(forwarded_request);
  const cri::PodSandboxMetadata& pod = create.sandbox_config().metadata();
  const std::string& name = create.config().metadata().name();
  cache_->EraseContainer(pod.uid(), name);
  cri::CreateContainerResponse container;
  if (created && container.ParseFromString(response)) {
    grpc::ClientContext context;
    context.set_deadline(RuntimeDeadline());
    cri::RemoveContainerRequest remove;
    remove.set_container_id(container.container_id());
    cri::RemoveContainerResponse removed;
    if (grpc::Status status = runtime_->RemoveContainer(&context, remove, &removed); !status.ok()) {
      spdlog::error(
          "container {} ({}) of pod {}/{} was created on a placement topologyd did not make "
          "durable, and the runtime did not remove it: {}",
          name, container.container_id(), pod.namespace_(), pod.name(), status.error_message());
    }
    absl::MutexLock lock(&mu_);
    book_.ForgetContainer(container.container_id());
    pushed_.erase(container.container_id());
  }
  return absl::UnavailableError(fmt::format(
      "topologyd-shim: container {} of pod {}/{} is not created until topologyd has its "
      "placement on disk: {}",
      name, pod.namespace_(), pod.name(), why.message()));
}

void CriHandlers::AfterCreateContainer(const std::string& request, const std::string& response) {
  cri::CreateContainerRequest create;
  cri::CreateContainerResponse reply;
  if (!create.ParseFromString(request) || !reply.ParseFromString(response)) return;
  const SandboxRecord sandbox = SandboxFromConfig(create.pod_sandbox_id(), create.sandbox_config());
  ContainerRecord record;
  record.id = reply.container_id();
  record.sandbox_id = sandbox.id;
  record.pod_uid = sandbox.pod_uid;
  record.name = create.config().metadata().name();
  record.attempt = create.config().metadata().attempt();
  const cri::LinuxContainerResources& sent = create.config().linux().resources();
  record.resources = ToCriResources(sent);
  absl::MutexLock lock(&mu_);
  if (!sent.cpuset_cpus().empty()) {
    Placement given;
    given.cpus = sent.cpuset_cpus();
    given.mems = sent.cpuset_mems();
    pushed_[record.id] = given;
  }
  book_.PutContainer(std::move(record));
}

void CriHandlers::AfterStartContainer(const std::string& request) {
  cri::StartContainerRequest start;
  if (!start.ParseFromString(request)) return;
  std::optional<ContainerRecord> container;
  {
    absl::MutexLock lock(&mu_);
    if (const ContainerRecord* c = book_.Container(start.container_id())) container = *c;
  }
  if (container) Bind(*container);
}

void CriHandlers::Bind(const ContainerRecord& container) {
  std::string cgroup_parent;
  {
    absl::MutexLock lock(&mu_);
    const SandboxRecord* sandbox = book_.Sandbox(container.sandbox_id);
    if (sandbox == nullptr) return;
    cgroup_parent = sandbox->cgroup_parent;
  }
  if (!cache_->Find(container.pod_uid, container.name)) return;  // not placed by topologyd
  absl::StatusOr<std::string> cgroup =
      cgroup::ContainerCgroup(cgroup_parent, container.id, config_.cgroup_driver, config_.runtime);
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

void CriHandlers::AfterRemoveContainer(const std::string& request) {
  cri::RemoveContainerRequest remove;
  if (!remove.ParseFromString(request)) return;
  std::optional<ContainerRecord> container;
  bool newer_instance = false;
  {
    absl::MutexLock lock(&mu_);
    const ContainerRecord* c = book_.Container(remove.container_id());
    if (c == nullptr) return;
    container = *c;
    for (const ContainerRecord* other : book_.ContainersOfPod(c->pod_uid)) {
      newer_instance = newer_instance || (other->name == c->name && other->id != c->id &&
                                          other->attempt > c->attempt);
    }
    book_.ForgetContainer(remove.container_id());
    pushed_.erase(remove.container_id());
  }
  // kubelet's garbage collection removes old instances while a newer one runs or is about to
  // start: only the instance topologyd has bound, with no newer one created, is released.
  std::optional<Placement> held = cache_->Find(container->pod_uid, container->name);
  if (newer_instance || !held || held->container_id != container->id) return;
  absl::Status released = topologyd_->Release(container->pod_uid, container->name, container->id);
  if (released.ok() || released.code() == absl::StatusCode::kNotFound) {
    cache_->EraseContainer(container->pod_uid, container->name);
  } else {
    spdlog::warn("container {} ({}) of pod {} was removed but not released: {}", container->name,
                 container->id, container->pod_uid, released.message());
  }
}

void CriHandlers::AfterPodSandboxEnds(const std::string& request, bool removed) {
  // StopPodSandboxRequest and RemovePodSandboxRequest both carry pod_sandbox_id = 1.
  cri::StopPodSandboxRequest stop;
  if (!stop.ParseFromString(request)) return;
  std::string pod_uid;
  {
    absl::MutexLock lock(&mu_);
    const SandboxRecord* sandbox = book_.Sandbox(stop.pod_sandbox_id());
    if (sandbox == nullptr) return;
    pod_uid = sandbox->pod_uid;
    // A late stop of an older sandbox must not release what the pod's new sandbox holds.
    const bool newest = book_.SandboxOfPod(pod_uid)->id == sandbox->id;
    if (removed) book_.ForgetSandbox(stop.pod_sandbox_id());
    if (!newest) return;
  }
  if (cache_->HoldsPod(pod_uid))
    ReleasePod(pod_uid, removed ? "sandbox removed" : "sandbox stopped");
  if (removed) specs_->Forget(pod_uid);
}

void CriHandlers::ReleasePod(const std::string& pod_uid, std::string_view why) {
  absl::Status released = topologyd_->Release(pod_uid, "", "");
  if (released.ok() || released.code() == absl::StatusCode::kNotFound) {
    cache_->ErasePod(pod_uid);
    spdlog::info("pod {} released ({})", pod_uid, why);
  } else {
    spdlog::warn("pod {} not released ({}), the next resync retries: {}", pod_uid, why,
                 released.message());
  }
}

Forward CriHandlers::BeforeUpdateContainerResources(std::string request) {
  cri::UpdateContainerResourcesRequest update;
  if (!update.ParseFromString(request)) return Refuse(Undecodable("UpdateContainerResources"));
  std::optional<ContainerRecord> container;
  {
    absl::MutexLock lock(&mu_);
    if (const ContainerRecord* c = book_.Container(update.container_id())) container = *c;
  }
  if (!container) return Forward{absl::OkStatus(), std::move(request), nullptr};
  std::optional<Placement> placement = cache_->Find(container->pod_uid, container->name);
  if (!placement) return Forward{absl::OkStatus(), std::move(request), nullptr};
  cri::LinuxContainerResources* linux = update.mutable_linux();
  if (!linux->cpuset_cpus().empty() && linux->cpuset_cpus() != placement->cpus) {
    absl::MutexLock lock(&mu_);
    if (!warned_kubelet_cpuset_) {
      warned_kubelet_cpuset_ = true;
      spdlog::warn(
          "kubelet sent cpuset {} for container {}; topologyd's {} is kept. Set "
          "kubelet's cpuManagerPolicy, memoryManagerPolicy and topologyManagerPolicy "
          "to none (docs/shim.md)",
          linux->cpuset_cpus(), container->id, placement->cpus);
    }
  }
  ApplyPlacement(*placement, linux);
  {
    absl::MutexLock lock(&mu_);
    pushed_[container->id] = *placement;
  }
  return Forward{absl::OkStatus(), update.SerializeAsString(), nullptr};
}

bool CriHandlers::PushPlacement(const std::string& container_id, const Placement& placement) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + config_.topologyd_timeout);
  cri::UpdateContainerResourcesRequest update;
  update.set_container_id(container_id);
  ApplyPlacement(placement, update.mutable_linux());
  cri::UpdateContainerResourcesResponse reply;
  grpc::Status status = runtime_->UpdateContainerResources(&context, update, &reply);
  if (!status.ok()) {
    spdlog::warn("the runtime did not take cpuset {} for container {}: {}", placement.cpus,
                 container_id, status.error_message());
    return false;
  }
  spdlog::info("container {} now on CPUs {}", container_id, placement.cpus);
  return true;
}

void CriHandlers::PushPlacements() {
  std::vector<std::pair<std::string, Placement>> bound = cache_->Bound();
  std::vector<std::pair<std::string, Placement>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, placement] : bound) {
      auto pushed = pushed_.find(id);
      if (pushed == pushed_.end() || pushed->second.cpus != placement.cpus ||
          pushed->second.mems != placement.mems) {
        due.emplace_back(id, std::move(placement));
      }
    }
  }
  for (const auto& [id, placement] : due) {
    const bool taken = PushPlacement(id, placement);
    absl::MutexLock lock(&mu_);
    // A container the runtime no longer has is not tried again; topologyd releases it once
    // its cgroup has stayed gone.
    if (taken || !book_.Container(id)) pushed_[id] = placement;
  }
}

absl::Status CriHandlers::Resync() {
  absl::StatusOr<std::set<std::string>> live_pods = ReadSandboxes();
  if (!live_pods.ok()) return live_pods.status();
  absl::StatusOr<std::vector<ContainerRecord>> running = ReadContainers();
  if (!running.ok()) return running.status();
  absl::StatusOr<v1::ListAllocationsResponse> held = topologyd_->ListAllocations();
  if (!held.ok()) return held.status();
  cache_->Replace(*held);
  for (const ContainerRecord& container : *running) {
    std::optional<Placement> placement = cache_->Find(container.pod_uid, container.name);
    if (!placement) {
      if (live_pods->contains(container.pod_uid)) Adopt(container);
    } else if (placement->container_id != container.id) {
      Bind(container);
    }
  }
  if (config_.resync.release_orphans) ReleaseOrphans(*held, *live_pods);
  PushPlacements();
  return absl::OkStatus();
}

std::chrono::system_clock::time_point CriHandlers::RuntimeDeadline() const {
  return std::chrono::system_clock::now() + config_.topologyd_timeout;
}

absl::StatusOr<std::set<std::string>> CriHandlers::ReadSandboxes() {
  cri::ListPodSandboxResponse sandboxes;
  grpc::ClientContext list_context;
  list_context.set_deadline(RuntimeDeadline());
  if (grpc::Status status =
          runtime_->ListPodSandbox(&list_context, cri::ListPodSandboxRequest(), &sandboxes);
      !status.ok()) {
    return absl::UnavailableError(
        fmt::format("the runtime did not list its sandboxes: {}", status.error_message()));
  }
  std::set<std::string> live_pods;
  for (const cri::PodSandbox& s : sandboxes.items()) {
    if (s.state() == cri::SANDBOX_READY) live_pods.insert(s.metadata().uid());
    {
      absl::MutexLock lock(&mu_);
      if (book_.Sandbox(s.id()) != nullptr) continue;
    }
    // The cgroup parent is only in the verbose status: its "info" JSON holds the config.
    grpc::ClientContext context;
    context.set_deadline(RuntimeDeadline());
    cri::PodSandboxStatusRequest request;
    request.set_pod_sandbox_id(s.id());
    request.set_verbose(true);
    cri::PodSandboxStatusResponse status;
    if (!runtime_->PodSandboxStatus(&context, request, &status).ok()) continue;
    SandboxRecord record;
    record.id = s.id();
    record.pod_uid = s.metadata().uid();
    record.namespace_name = s.metadata().namespace_();
    record.pod_name = s.metadata().name();
    record.annotations.insert(s.annotations().begin(), s.annotations().end());
    record.attempt = s.metadata().attempt();
    if (auto info = status.info().find("info"); info != status.info().end()) {
      nlohmann::json json =
          nlohmann::json::parse(info->second, nullptr, /*allow_exceptions=*/false);
      const nlohmann::json* parent = JsonPath(json, {"config", "linux", "cgroup_parent"});
      if (parent != nullptr && parent->is_string()) {
        record.cgroup_parent = parent->get<std::string>();
      }
    }
    absl::MutexLock lock(&mu_);
    book_.PutSandbox(std::move(record));
  }
  return live_pods;
}

std::optional<cri::LinuxContainerResources> CriHandlers::StoredResources(
    const std::string& container_id) {
  grpc::ClientContext context;
  context.set_deadline(RuntimeDeadline());
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  cri::ContainerStatusResponse status;
  if (!runtime_->ContainerStatus(&context, request, &status).ok()) return std::nullopt;
  return status.status().resources().linux();
}

absl::StatusOr<std::vector<ContainerRecord>> CriHandlers::ReadContainers() {
  // Only containers known before the listing can be missing from it for good: one created
  // while the list is on its way is in the book but not yet in the list.
  std::set<std::string> known_before;
  {
    absl::MutexLock lock(&mu_);
    known_before = book_.ContainerIds();
  }
  cri::ListContainersResponse containers;
  grpc::ClientContext list_context;
  list_context.set_deadline(RuntimeDeadline());
  if (grpc::Status status =
          runtime_->ListContainers(&list_context, cri::ListContainersRequest(), &containers);
      !status.ok()) {
    return absl::UnavailableError(
        fmt::format("the runtime did not list its containers: {}", status.error_message()));
  }
  std::vector<ContainerRecord> running;
  std::set<std::string> listed;
  for (const cri::Container& c : containers.containers()) {
    listed.insert(c.id());
    if (c.state() != cri::CONTAINER_RUNNING && c.state() != cri::CONTAINER_CREATED) continue;
    std::optional<SandboxRecord> sandbox;
    std::optional<ContainerRecord> known;
    {
      absl::MutexLock lock(&mu_);
      if (const SandboxRecord* s = book_.Sandbox(c.pod_sandbox_id())) sandbox = *s;
      if (const ContainerRecord* k = book_.Container(c.id())) known = *k;
    }
    if (!sandbox) continue;
    if (!known) {
      // A container created while the shim was away: what the runtime stored of it is what
      // topologyd estimates from, and the cpuset the runtime was last given.
      std::optional<cri::LinuxContainerResources> stored = StoredResources(c.id());
      if (!stored) continue;
      known = ContainerRecord{c.id(),
                              c.pod_sandbox_id(),
                              sandbox->pod_uid,
                              c.metadata().name(),
                              c.metadata().attempt(),
                              ToCriResources(*stored)};
      absl::MutexLock lock(&mu_);
      book_.PutContainer(*known);
      if (!stored->cpuset_cpus().empty()) {
        pushed_.try_emplace(known->id, Placement{stored->cpuset_cpus(), stored->cpuset_mems()});
      }
    }
    if (c.state() == cri::CONTAINER_RUNNING) running.push_back(std::move(*known));
  }
  // Forget what the runtime no longer has.
  absl::MutexLock lock(&mu_);
  for (const std::string& id : known_before) {
    if (listed.contains(id)) continue;
    book_.ForgetContainer(id);
    pushed_.erase(id);
  }
  return running;
}

void CriHandlers::Adopt(const ContainerRecord& container) {
  std::optional<SandboxRecord> sandbox;
  {
    absl::MutexLock lock(&mu_);
    if (const SandboxRecord* s = book_.Sandbox(container.sandbox_id)) sandbox = *s;
  }
  std::optional<cri::LinuxContainerResources> stored = StoredResources(container.id);
  if (!sandbox || !stored) return;
  Planned plan = PlanContainer(*sandbox, container.name, *stored, std::nullopt,
                               /*answer_when_decided=*/false);
  if (!plan.status.ok()) {
    spdlog::warn(
        "running container {} ({}) of pod {}/{} is not held by topologyd and was not adopted: {}",
        container.name, container.id, sandbox->namespace_name, sandbox->pod_name,
        plan.status.message());
    return;
  }
  if (!plan.placement) return;
  spdlog::info("adopting running container {} ({}) of pod {}/{} on CPUs {}", container.name,
               container.id, sandbox->namespace_name, sandbox->pod_name, plan.placement->cpus);
  if (PushPlacement(container.id, *plan.placement)) {
    absl::MutexLock lock(&mu_);
    pushed_[container.id] = *plan.placement;
  }
  Bind(container);
}

void CriHandlers::ReleaseOrphans(const v1::ListAllocationsResponse& held,
                                 const std::set<std::string>& live_pods) {
  // Seen without a live sandbox at two resyncs in a row: a pod admitted at RunPodSandbox has
  // no sandbox until the runtime answers.
  std::vector<std::string> orphans;
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, int> sightings;
    for (const v1::PodAllocation& pod : held.pods()) {
      if (live_pods.contains(pod.uid())) continue;
      const int seen = orphan_sightings_[pod.uid()] + 1;
      if (seen >= 2) {
        orphans.push_back(pod.uid());
      } else {
        sightings[pod.uid()] = seen;
      }
    }
    orphan_sightings_ = std::move(sightings);
  }
  for (const std::string& uid : orphans) ReleasePod(uid, "no sandbox in the runtime");
}

}  // namespace topologyd::shim
