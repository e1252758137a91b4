#include "tests/support/containerd/kubelet_emulator.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include <nlohmann/json.hpp>

#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/host_checks.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;
namespace fs = std::filesystem;

std::string DefaultCgroupRoot() {
  static std::atomic<int> counter{0};
  return absl::StrCat("/topologyd-test-", ::getpid(), "-", counter++);
}

cri::NamespaceOption KubeletNamespaces() {
  // Host network (no CNI needed), a pid namespace per container, the pod's ipc namespace.
  cri::NamespaceOption ns;
  ns.set_network(cri::NODE);
  ns.set_pid(cri::CONTAINER);
  ns.set_ipc(cri::POD);
  return ns;
}

std::string PodLogDirectory(const std::string& root, const pod::Pod& pod) {
  return absl::StrCat(root, "/", pod.namespace_name, "_", pod.name, "_", pod.uid);
}

// What the sandbox shares in every stop/remove; `stub` is the endpoint's or the fallback's.
grpc::Status StopAndRemoveSandbox(cri::RuntimeService::Stub& stub, const std::string& id,
                                  std::chrono::milliseconds deadline) {
  grpc::ClientContext stop_context;
  stop_context.set_deadline(std::chrono::system_clock::now() + deadline);
  cri::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(id);
  cri::StopPodSandboxResponse stopped;
  grpc::Status status = stub.StopPodSandbox(&stop_context, stop, &stopped);
  if (!status.ok()) return status;
  grpc::ClientContext remove_context;
  remove_context.set_deadline(std::chrono::system_clock::now() + deadline);
  cri::RemovePodSandboxRequest remove;
  remove.set_pod_sandbox_id(id);
  cri::RemovePodSandboxResponse removed;
  return stub.RemovePodSandbox(&remove_context, remove, &removed);
}

// kubelet's pod container manager creates the pod cgroup before the sandbox, with the pod's
// CFS quota, unless it exists already (a re-created sandbox). Only the cpu hierarchy, where
// the quota is; the runtime creates the rest. Nothing on a host without a v1 cpu hierarchy.
absl::Status EnsurePodCpuCgroup(const std::string& cgroup_parent, const pod::Pod& pod) {
  absl::StatusOr<std::string> mount = V1MountPoint("cpu");
  if (!mount.ok()) return absl::OkStatus();
  const std::string dir = *mount + cgroup_parent;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return absl::OkStatus();
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::optional<int64_t> quota = PodCpuQuota(pod);
  if (!quota) return absl::OkStatus();
  if (absl::Status period = WriteCgroupValue(dir, "cpu.cfs_period_us", absl::StrCat(kCpuPeriod));
      !period.ok()) {
    return period;
  }
  return WriteCgroupValue(dir, "cpu.cfs_quota_us", absl::StrCat(*quota));
}

}  // namespace

KubeletEmulator::KubeletEmulator(EmulatorOptions options) : options_(std::move(options)) {
  if (options_.cgroup_root.empty()) options_.cgroup_root = DefaultCgroupRoot();
  if (options_.log_root.empty()) {
    char name[] = "/tmp/tpd-logs-XXXXXX";
    if (::mkdtemp(name) != nullptr) {
      options_.log_root = name;
      own_log_root_ = true;
    }
  }
  runtime_ = cri::RuntimeService::NewStub(CriChannel(options_.endpoint));
}

KubeletEmulator::~KubeletEmulator() { (void)Cleanup(); }

std::unique_ptr<grpc::ClientContext> KubeletEmulator::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + options_.deadline);
  context->set_wait_for_ready(options_.wait_for_ready);
  return context;
}

grpc::Status KubeletEmulator::Timed(std::string_view method,
                                    const std::function<grpc::Status(grpc::ClientContext*)>& call) {
  auto context = NewContext();
  auto start = std::chrono::steady_clock::now();
  grpc::Status status = call(context.get());
  timings_.push_back({std::string(method),
                      std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - start),
                      status.error_code()});
  return status;
}

const KubeletEmulator::PodRecord* KubeletEmulator::FindPod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

std::string KubeletEmulator::SandboxId(const std::string& uid) const {
  const PodRecord* record = FindPod(uid);
  return record == nullptr ? "" : record->sandbox_id;
}

std::string KubeletEmulator::CgroupParent(const std::string& uid) const {
  const PodRecord* record = FindPod(uid);
  return record == nullptr ? "" : record->config.linux().cgroup_parent();
}

cri::RunPodSandboxRequest KubeletEmulator::SandboxRequest(const pod::Pod& spec,
                                                          const PodOptions& options) const {
  pod::Pod pod = spec;
  pod::ApplyRequestDefaults(pod);
  cri::RunPodSandboxRequest request;
  cri::PodSandboxConfig& config = *request.mutable_config();
  auto* metadata = config.mutable_metadata();
  metadata->set_name(pod.name);
  metadata->set_uid(pod.uid);
  metadata->set_namespace_(pod.namespace_name);
  metadata->set_attempt(options.attempt);
  // No hostname: kubelet sets one only for pods with their own network namespace.
  config.set_log_directory(PodLogDirectory(options_.log_root, pod));
  auto& labels = *config.mutable_labels();
  for (const auto& [k, v] : options.labels) labels[k] = v;
  labels["io.kubernetes.pod.name"] = pod.name;
  labels["io.kubernetes.pod.namespace"] = pod.namespace_name;
  labels["io.kubernetes.pod.uid"] = pod.uid;
  auto& annotations = *config.mutable_annotations();
  for (const auto& [k, v] : pod.annotations) annotations[k] = v;
  annotations["kubernetes.io/config.source"] = "api";
  auto* linux = config.mutable_linux();
  linux->set_cgroup_parent(PodCgroupParent(options_.cgroup_root, pod::ComputeQos(pod), pod.uid));
  *linux->mutable_security_context()->mutable_namespace_options() = KubeletNamespaces();
  *linux->mutable_resources() = SandboxResources(pod);
  return request;
}

grpc::Status KubeletEmulator::RunPod(const pod::Pod& spec, const PodOptions& options) {
  cri::RunPodSandboxRequest request = SandboxRequest(spec, options);
  std::error_code ec;
  fs::create_directories(request.config().log_directory(), ec);  // kubelet makes it first
  pod::Pod defaulted = spec;
  pod::ApplyRequestDefaults(defaulted);
  if (absl::Status cgroup = EnsurePodCpuCgroup(request.config().linux().cgroup_parent(), defaulted);
      !cgroup.ok()) {
    return {grpc::StatusCode::INTERNAL, std::string(cgroup.message())};
  }
  cri::RunPodSandboxResponse response;
  grpc::Status status = Timed("RunPodSandbox", [&](grpc::ClientContext* context) {
    return runtime_->RunPodSandbox(context, request, &response);
  });
  if (!status.ok()) return status;
  PodRecord& record = pods_[spec.uid];
  record.pod = spec;
  pod::ApplyRequestDefaults(record.pod);
  record.config = request.config();
  record.sandbox_id = response.pod_sandbox_id();
  record.removed = false;
  return status;
}

grpc::Status KubeletEmulator::StopPod(const std::string& uid) {
  const PodRecord* record = FindPod(uid);
  if (record == nullptr) return {grpc::StatusCode::NOT_FOUND, "no pod " + uid};
  cri::StopPodSandboxRequest request;
  request.set_pod_sandbox_id(record->sandbox_id);
  cri::StopPodSandboxResponse response;
  return Timed("StopPodSandbox", [&](grpc::ClientContext* context) {
    return runtime_->StopPodSandbox(context, request, &response);
  });
}

grpc::Status KubeletEmulator::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return {grpc::StatusCode::NOT_FOUND, "no pod " + uid};
  cri::RemovePodSandboxRequest request;
  request.set_pod_sandbox_id(it->second.sandbox_id);
  cri::RemovePodSandboxResponse response;
  grpc::Status status = Timed("RemovePodSandbox", [&](grpc::ClientContext* context) {
    return runtime_->RemovePodSandbox(context, request, &response);
  });
  if (status.ok()) it->second.removed = true;
  return status;
}

cri::CreateContainerRequest KubeletEmulator::CreateRequest(const std::string& uid,
                                                           const std::string& name,
                                                           uint32_t attempt,
                                                           const ContainerOptions& options) const {
  cri::CreateContainerRequest request;
  const PodRecord* record = FindPod(uid);
  if (record == nullptr) return request;
  const pod::Pod& pod = record->pod;
  const pod::Container* container = pod::FindContainer(pod, name);
  if (container == nullptr) return request;
  request.set_pod_sandbox_id(record->sandbox_id);
  *request.mutable_sandbox_config() = record->config;
  cri::ContainerConfig& config = *request.mutable_config();
  config.mutable_metadata()->set_name(container->name);
  config.mutable_metadata()->set_attempt(attempt);
  config.mutable_image()->set_image(options_.image);
  if (!options.command.empty()) {
    for (const auto& arg : options.command) config.add_command(arg);
  } else if (pod::IsRegularInitContainer(pod, name)) {
    config.add_command("true");
  } else {
    for (const char* arg : {"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.1; done"}) {
      config.add_command(arg);
    }
  }
  auto& labels = *config.mutable_labels();
  labels["io.kubernetes.container.name"] = container->name;
  labels["io.kubernetes.pod.name"] = pod.name;
  labels["io.kubernetes.pod.namespace"] = pod.namespace_name;
  labels["io.kubernetes.pod.uid"] = pod.uid;
  auto& annotations = *config.mutable_annotations();
  annotations["io.kubernetes.container.hash"] =
      absl::StrCat(absl::Hex(std::hash<std::string>{}(container->name) & 0xffffffff));
  annotations["io.kubernetes.container.restartCount"] = absl::StrCat(attempt);
  annotations["io.kubernetes.container.terminationMessagePath"] = "/dev/termination-log";
  annotations["io.kubernetes.container.terminationMessagePolicy"] = "File";
  annotations["io.kubernetes.pod.terminationGracePeriod"] = "30";
  config.set_log_path(absl::StrCat(container->name, "/", attempt, ".log"));
  auto* linux = config.mutable_linux();
  *linux->mutable_resources() = ContainerResources(pod, *container, options_.node);
  linux->mutable_resources()->set_cpuset_cpus(options.cpuset_cpus);
  linux->mutable_resources()->set_cpuset_mems(options.cpuset_mems);
  *linux->mutable_security_context()->mutable_namespace_options() = KubeletNamespaces();
  if (options.edit) options.edit(request);
  return request;
}

grpc::Status KubeletEmulator::CreateContainer(const std::string& uid, const std::string& name,
                                              uint32_t attempt, std::string* container_id,
                                              const ContainerOptions& options) {
  const PodRecord* record = FindPod(uid);
  if (record == nullptr) return {grpc::StatusCode::NOT_FOUND, "no pod " + uid};
  if (pod::FindContainer(record->pod, name) == nullptr) {
    return {grpc::StatusCode::NOT_FOUND, absl::StrCat("pod ", uid, " has no container ", name)};
  }
  cri::CreateContainerRequest request = CreateRequest(uid, name, attempt, options);
  std::error_code ec;  // kubelet makes the container's log directory first
  fs::create_directories(absl::StrCat(record->config.log_directory(), "/", name), ec);
  cri::CreateContainerResponse response;
  grpc::Status status = Timed("CreateContainer", [&](grpc::ClientContext* context) {
    return runtime_->CreateContainer(context, request, &response);
  });
  if (status.ok() && container_id != nullptr) *container_id = response.container_id();
  return status;
}

grpc::Status KubeletEmulator::StartContainer(const std::string& container_id) {
  cri::StartContainerRequest request;
  request.set_container_id(container_id);
  cri::StartContainerResponse response;
  return Timed("StartContainer", [&](grpc::ClientContext* context) {
    return runtime_->StartContainer(context, request, &response);
  });
}

grpc::Status KubeletEmulator::RunContainer(const std::string& uid, const std::string& name,
                                           uint32_t attempt, std::string* container_id,
                                           const ContainerOptions& options) {
  std::string id;
  grpc::Status status = CreateContainer(uid, name, attempt, &id, options);
  if (container_id != nullptr) *container_id = id;
  return status.ok() ? StartContainer(id) : status;
}

grpc::Status KubeletEmulator::StopContainer(const std::string& container_id, int64_t timeout) {
  cri::StopContainerRequest request;
  request.set_container_id(container_id);
  request.set_timeout(timeout < 0 ? options_.stop_timeout_seconds : timeout);
  cri::StopContainerResponse response;
  return Timed("StopContainer", [&](grpc::ClientContext* context) {
    return runtime_->StopContainer(context, request, &response);
  });
}

grpc::Status KubeletEmulator::RemoveContainer(const std::string& container_id) {
  cri::RemoveContainerRequest request;
  request.set_container_id(container_id);
  cri::RemoveContainerResponse response;
  return Timed("RemoveContainer", [&](grpc::ClientContext* context) {
    return runtime_->RemoveContainer(context, request, &response);
  });
}

grpc::Status KubeletEmulator::UpdateCpuset(const std::string& container_id,
                                           const std::string& cpus) {
  cri::LinuxContainerResources linux;
  linux.set_cpuset_cpus(cpus);
  return UpdateResources(container_id, linux);
}

grpc::Status KubeletEmulator::UpdateResources(const std::string& container_id,
                                              const cri::LinuxContainerResources& linux) {
  cri::UpdateContainerResourcesRequest request;
  request.set_container_id(container_id);
  *request.mutable_linux() = linux;
  cri::UpdateContainerResourcesResponse response;
  return Timed("UpdateContainerResources", [&](grpc::ClientContext* context) {
    return runtime_->UpdateContainerResources(context, request, &response);
  });
}

grpc::Status KubeletEmulator::ContainerStatus(const std::string& container_id,
                                              cri::ContainerStatusResponse* response,
                                              bool verbose) {
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  request.set_verbose(verbose);
  return Timed("ContainerStatus", [&](grpc::ClientContext* context) {
    return runtime_->ContainerStatus(context, request, response);
  });
}

grpc::Status KubeletEmulator::ListContainers(const cri::ContainerFilter& filter,
                                             std::vector<cri::Container>* containers) {
  cri::ListContainersRequest request;
  *request.mutable_filter() = filter;
  cri::ListContainersResponse response;
  grpc::Status status = Timed("ListContainers", [&](grpc::ClientContext* context) {
    return runtime_->ListContainers(context, request, &response);
  });
  containers->assign(response.containers().begin(), response.containers().end());
  return status;
}

grpc::Status KubeletEmulator::ContainerPid(const std::string& container_id, pid_t* pid) {
  cri::ContainerStatusResponse response;
  grpc::Status status = ContainerStatus(container_id, &response, /*verbose=*/true);
  if (!status.ok()) return status;
  auto info = response.info().find("info");
  if (info == response.info().end()) {
    return {grpc::StatusCode::INTERNAL, "verbose ContainerStatus has no info[\"info\"]"};
  }
  auto json = nlohmann::json::parse(info->second, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("pid") || !json["pid"].is_number_integer() ||
      json["pid"].get<int64_t>() <= 0) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            absl::StrCat("container ", container_id, " has no running process")};
  }
  *pid = static_cast<pid_t>(json["pid"].get<int64_t>());
  return status;
}

grpc::Status KubeletEmulator::StoredResources(const std::string& container_id,
                                              cri::LinuxContainerResources* linux) {
  cri::ContainerStatusResponse response;
  grpc::Status status = ContainerStatus(container_id, &response, /*verbose=*/false);
  if (status.ok()) *linux = response.status().resources().linux();
  return status;
}

grpc::Status KubeletEmulator::WaitForState(const std::string& container_id,
                                           cri::ContainerState state,
                                           std::chrono::milliseconds patience) {
  auto until = std::chrono::steady_clock::now() + patience;
  while (true) {
    cri::ContainerStatusResponse response;
    grpc::Status status = ContainerStatus(container_id, &response, /*verbose=*/false);
    if (!status.ok() || response.status().state() == state) return status;
    if (std::chrono::steady_clock::now() > until) {
      return {grpc::StatusCode::DEADLINE_EXCEEDED,
              absl::StrCat("container ", container_id, " still ",
                           cri::ContainerState_Name(response.status().state()))};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

absl::Status KubeletEmulator::Cleanup() {
  std::unique_ptr<cri::RuntimeService::Stub> fallback;
  if (!options_.fallback_endpoint.empty()) {
    fallback = cri::RuntimeService::NewStub(CriChannel(options_.fallback_endpoint));
  }
  absl::Status result;
  for (auto& [uid, record] : pods_) {
    if (record.removed || record.sandbox_id.empty()) continue;
    grpc::Status status = StopAndRemoveSandbox(*runtime_, record.sandbox_id, options_.deadline);
    if (!status.ok() && fallback != nullptr) {
      status = StopAndRemoveSandbox(*fallback, record.sandbox_id, options_.deadline);
    }
    if (status.ok()) {
      record.removed = true;
    } else if (result.ok()) {
      result = absl::InternalError(absl::StrCat("pod ", uid, " (sandbox ", record.sandbox_id,
                                                "): ", status.error_message()));
    }
  }
  // Even after a failed removal: the directories of processes that are gone go now.
  absl::Status cgroups = RemoveCgroupTree(options_.cgroup_root, std::chrono::seconds(5));
  if (result.ok()) result = cgroups;
  if (own_log_root_) {
    std::error_code ec;
    fs::remove_all(options_.log_root, ec);
    own_log_root_ = false;
  }
  return result;
}

}  // namespace topologyd::testing::containerd
