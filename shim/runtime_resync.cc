#include "shim/runtime_resync.h"

#include <initializer_list>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

#include "lib/common/absl_fmt.h"

#include "shim/plan_request.h"

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

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

absl::Status RuntimeResync::Run() {
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
      placer_->Bind(container);
    }
  }
  if (config_.resync.release_orphans) ReleaseOrphans(*held, *live_pods);
  pusher_->PushChanged();
  return absl::OkStatus();
}

std::chrono::system_clock::time_point RuntimeResync::RuntimeDeadline() const {
  return std::chrono::system_clock::now() + config_.topologyd_timeout;
}

absl::StatusOr<std::set<std::string>> RuntimeResync::ReadSandboxes() {
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
    if (book_->HasSandbox(s.id())) continue;
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
    book_->PutSandbox(std::move(record));
  }
  return live_pods;
}

std::optional<cri::LinuxContainerResources> RuntimeResync::StoredResources(
    const std::string& container_id) {
  grpc::ClientContext context;
  context.set_deadline(RuntimeDeadline());
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  cri::ContainerStatusResponse status;
  if (!runtime_->ContainerStatus(&context, request, &status).ok()) return std::nullopt;
  return status.status().resources().linux();
}

absl::StatusOr<std::vector<ContainerRecord>> RuntimeResync::ReadContainers() {
  // Only containers known before the listing can be missing from it for good: one created
  // while the list is on its way is in the book but not yet in the list.
  const std::set<std::string> known_before = book_->ContainerIds();
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
    const std::optional<SandboxRecord> sandbox = book_->Sandbox(c.pod_sandbox_id());
    if (!sandbox) continue;
    std::optional<ContainerRecord> known = book_->Container(c.id());
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
      book_->PutContainer(*known, std::nullopt);
      if (!stored->cpuset_cpus().empty()) {
        book_->RecordGiven(known->id, Placement{stored->cpuset_cpus(), stored->cpuset_mems()},
                           /*only_if_unknown=*/true);
      }
    }
    if (c.state() == cri::CONTAINER_RUNNING) running.push_back(std::move(*known));
  }
  book_->ForgetUnlisted(known_before, listed);
  return running;
}

void RuntimeResync::Adopt(const ContainerRecord& container) {
  const std::optional<SandboxRecord> sandbox = book_->Sandbox(container.sandbox_id);
  std::optional<cri::LinuxContainerResources> stored = StoredResources(container.id);
  if (!sandbox || !stored) return;
  ContainerPlacer::Planned plan =
      placer_->PlanContainer(*sandbox, container.name, *stored, std::nullopt,
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
  pusher_->Push(container.id, *plan.placement);
  placer_->Bind(container);
}

void RuntimeResync::ReleaseOrphans(const v1::ListAllocationsResponse& held,
                                   const std::set<std::string>& live_pods) {
  // Seen without a live sandbox at two resyncs in a row: a pod admitted at RunPodSandbox has
  // no sandbox until the runtime answers.
  std::vector<std::string> orphans;
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
  for (const std::string& uid : orphans) placer_->ReleasePod(uid, "no sandbox in the runtime");
}

}  // namespace topologyd::shim
