#include "shim/cri_handlers.h"

#include <optional>
#include <utility>

#include "fmt/format.h"
#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"

#include "shim/placement_resources.h"
#include "shim/plan_request.h"

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

SandboxRecord SandboxFromConfig(const std::string& sandbox_id,
                                const cri::PodSandboxConfig& config) {
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

}  // namespace

absl::Status CriHandlers::BeforeRunPodSandbox(CriCall& call) {
  auto& run = std::get<cri::RunPodSandboxRequest>(call.request);
  call.sandbox = SandboxFromConfig("", run.config());
  if (absl::Status planned = placer_->PlanPod(call.sandbox, call.deadline); !planned.ok()) {
    return planned;
  }
  // A pod with exclusive CPUs: kubelet's static policy runs its sandbox and pod cgroup without
  // a CFS quota (a pod known only from estimates is learnt later: CreateContainer lifts its pod
  // cgroup).
  if (!cache_->PodCpuQuotaUnlimited(call.sandbox.pod_uid)) return absl::OkStatus();
  placer_->LiftPodQuota(call.sandbox);
  ApplyPodQuota(true, run.mutable_config());
  call.edited = true;
  return absl::OkStatus();
}

void CriHandlers::AfterRunPodSandbox(CriCall& call, const std::string& response) {
  cri::RunPodSandboxResponse reply;
  if (!reply.ParseFromString(response)) return;
  call.sandbox.id = reply.pod_sandbox_id();
  book_->PutSandbox(call.sandbox);
}

absl::Status CriHandlers::BeforeCreateContainer(CriCall& call) {
  auto& create = std::get<cri::CreateContainerRequest>(call.request);
  // The request repeats the sandbox's config, so a shim that never saw RunPodSandbox (it
  // restarted since) has all it needs.
  call.sandbox = SandboxFromConfig(create.pod_sandbox_id(), create.sandbox_config());
  book_->PutSandboxIfNew(call.sandbox);
  ContainerPlacer::Planned plan =
      placer_->PlanContainer(call.sandbox, create.config().metadata().name(),
                             create.config().linux().resources(), call.deadline,
                             /*answer_when_decided=*/true);
  if (!plan.status.ok()) return plan.status;
  if (!plan.placement) return absl::OkStatus();
  ApplyPlacement(*plan.placement, create.mutable_config()->mutable_linux()->mutable_resources());
  call.edited = true;
  placer_->LiftPodQuota(call.sandbox);
  call.durability = std::move(plan.durability);
  return absl::OkStatus();
}

void CriHandlers::AfterCreateContainer(CriCall& call, const std::string& response) {
  const auto& create = std::get<cri::CreateContainerRequest>(call.request);
  cri::CreateContainerResponse reply;
  if (!reply.ParseFromString(response)) return;
  ContainerRecord record;
  record.id = reply.container_id();
  record.sandbox_id = call.sandbox.id;
  record.pod_uid = call.sandbox.pod_uid;
  record.name = create.config().metadata().name();
  record.attempt = create.config().metadata().attempt();
  const cri::LinuxContainerResources& sent = create.config().linux().resources();
  record.resources = ToCriResources(sent);
  std::optional<Placement> given;
  if (!sent.cpuset_cpus().empty()) given = Placement{sent.cpuset_cpus(), sent.cpuset_mems()};
  book_->PutContainer(std::move(record), std::move(given));
}

absl::Status CriHandlers::AfterCreateNotDurable(const CriCall& call, bool created,
                                                const std::string& response,
                                                const absl::Status& why) {
  const auto& create = std::get<cri::CreateContainerRequest>(call.request);
  const std::string& name = create.config().metadata().name();
  cache_->EraseContainer(call.sandbox.pod_uid, name);
  cri::CreateContainerResponse container;
  if (created && container.ParseFromString(response)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + runtime_timeout_);
    cri::RemoveContainerRequest remove;
    remove.set_container_id(container.container_id());
    cri::RemoveContainerResponse removed;
    if (grpc::Status status = runtime_->RemoveContainer(&context, remove, &removed); !status.ok()) {
      spdlog::error(
          "container {} ({}) of pod {}/{} was created on a placement topologyd did not make "
          "durable, and the runtime did not remove it: {}",
          name, container.container_id(), call.sandbox.namespace_name, call.sandbox.pod_name,
          status.error_message());
    }
    book_->ForgetContainer(container.container_id());
  }
  return absl::UnavailableError(fmt::format(
      "topologyd-shim: container {} of pod {}/{} is not created until topologyd has its "
      "placement on disk: {}",
      name, call.sandbox.namespace_name, call.sandbox.pod_name, why.message()));
}

void CriHandlers::AfterStartContainer(CriCall& call, const std::string& /*response*/) {
  const auto& start = std::get<cri::StartContainerRequest>(call.request);
  if (std::optional<ContainerRecord> container = book_->Container(start.container_id())) {
    placer_->Bind(*container);
  }
}

void CriHandlers::AfterRemoveContainer(CriCall& call, const std::string& /*response*/) {
  const auto& remove = std::get<cri::RemoveContainerRequest>(call.request);
  if (std::optional<RuntimeBook::Removed> removed = book_->RemoveContainer(remove.container_id())) {
    placer_->ReleaseRemoved(*removed);
  }
}

void CriHandlers::AfterStopPodSandbox(CriCall& call, const std::string& /*response*/) {
  SandboxEnds(std::get<cri::StopPodSandboxRequest>(call.request).pod_sandbox_id(),
              /*removed=*/false);
}

void CriHandlers::AfterRemovePodSandbox(CriCall& call, const std::string& /*response*/) {
  SandboxEnds(std::get<cri::RemovePodSandboxRequest>(call.request).pod_sandbox_id(),
              /*removed=*/true);
}

void CriHandlers::SandboxEnds(const std::string& sandbox_id, bool removed) {
  std::optional<std::string> pod_uid = book_->EndSandbox(sandbox_id, removed);
  if (!pod_uid) return;
  if (cache_->HoldsPod(*pod_uid)) {
    placer_->ReleasePod(*pod_uid, removed ? "sandbox removed" : "sandbox stopped");
  }
  if (removed) specs_->Forget(*pod_uid);
}

absl::Status CriHandlers::BeforeUpdateContainerResources(CriCall& call) {
  auto& update = std::get<cri::UpdateContainerResourcesRequest>(call.request);
  std::optional<ContainerRecord> container = book_->Container(update.container_id());
  if (!container) return absl::OkStatus();
  std::optional<Placement> placement = cache_->Find(container->pod_uid, container->name);
  if (!placement) return absl::OkStatus();
  cri::LinuxContainerResources* linux = update.mutable_linux();
  if (!linux->cpuset_cpus().empty() && linux->cpuset_cpus() != placement->cpus &&
      !warned_kubelet_cpuset_.exchange(true)) {
    spdlog::warn(
        "kubelet sent cpuset {} for container {}; topologyd's {} is kept. Set "
        "kubelet's cpuManagerPolicy, memoryManagerPolicy and topologyManagerPolicy "
        "to none (docs/shim.md)",
        linux->cpuset_cpus(), container->id, placement->cpus);
  }
  ApplyPlacement(*placement, linux);
  call.edited = true;
  book_->RecordGiven(container->id, *placement);
  return absl::OkStatus();
}

}  // namespace topologyd::shim
