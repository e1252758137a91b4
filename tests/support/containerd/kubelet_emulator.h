// A kubelet as the CRI sees it: the requests kubelet sends for a pod's lifecycle, with the
// labels, annotations, log paths, namespaces, cgroup parent and resources kubelet computes
// (kubelet_resources.h), over any CRI endpoint: containerd's socket directly, or a relay in
// front of it. Every call has a deadline and returns the grpc::Status, so tests can assert
// refusals and their messages.
//
// It keeps the pods it ran; Cleanup() (also run by the destructor) removes those still there,
// through the endpoint and else through the fallback endpoint, then the test's cgroup
// directories. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include <grpcpp/client_context.h>

#include "lib/pod/pod.h"
#include "tests/support/containerd/kubelet_resources.h"

#include "cri/v1/runtime.grpc.pb.h"

namespace topologyd::testing::containerd {

struct EmulatorOptions {
  std::string endpoint;           // socket path or unix:// URI kubelet talks to
  std::string fallback_endpoint;  // containerd's own socket, for Cleanup(); may be empty
  std::string image;              // what CreateContainer names: an image id or reference
  // Existing directory the pods' log directories go under ("" = a temporary one).
  std::string log_root;
  // The prefix of every pod cgroup ("" = "/topologyd-test-<pid>-<n>", unique per emulator),
  // so nothing collides with a real kubelet's /kubepods.
  std::string cgroup_root;
  std::chrono::milliseconds deadline = std::chrono::seconds(30);  // per call
  int64_t stop_timeout_seconds = 10;                              // StopContainer's grace period
  // Calls wait for the endpoint to (re)connect until their deadline, rather than failing at
  // once while it restarts.
  bool wait_for_ready = true;
  NodeFacts node = ReadNodeFacts();
};

struct PodOptions {
  uint32_t attempt = 0;  // the sandbox's attempt (kubelet counts sandbox re-creations)
  std::map<std::string, std::string> labels;
};

struct ContainerOptions {
  // Default: regular init containers `true`; sidecars and app containers a shell loop that
  // exits on SIGTERM (StopContainer is quick).
  std::vector<std::string> command;
  // What the CPU and memory managers' static policies put in the create request.
  std::string cpuset_cpus;
  std::string cpuset_mems;
  // Last edit of the request before it is sent.
  std::function<void(runtime::v1::CreateContainerRequest&)> edit;
};

struct CallTiming {
  std::string method;
  std::chrono::microseconds duration;
  grpc::StatusCode code;
};

class KubeletEmulator {
 public:
  explicit KubeletEmulator(EmulatorOptions options);
  KubeletEmulator(const KubeletEmulator&) = delete;
  KubeletEmulator& operator=(const KubeletEmulator&) = delete;
  ~KubeletEmulator();  // Cleanup(), errors ignored

  const std::string& cgroup_root() const { return options_.cgroup_root; }
  const EmulatorOptions& options() const { return options_; }

  // --- pods, by uid. The pod's requests are defaulted from limits first (as the API server).
  // Like kubelet, RunPod creates the pod cgroup with the pod's CFS quota first (v1 cpu
  // hierarchy), unless it exists.
  grpc::Status RunPod(const pod::Pod& pod, const PodOptions& options = {});
  grpc::Status StopPod(const std::string& uid);
  grpc::Status RemovePod(const std::string& uid);
  // The sandbox id of the pod's last RunPod, "" if none.
  std::string SandboxId(const std::string& uid) const;
  // The pod cgroup (cgroup_parent) by the pod's QoS class, under cgroup_root().
  std::string CgroupParent(const std::string& uid) const;
  // The requests kubelet would send, for tests that edit and send their own.
  runtime::v1::RunPodSandboxRequest SandboxRequest(const pod::Pod& pod,
                                                   const PodOptions& options = {}) const;
  runtime::v1::CreateContainerRequest CreateRequest(const std::string& uid, const std::string& name,
                                                    uint32_t attempt,
                                                    const ContainerOptions& options = {}) const;

  // --- containers, by name (of the pod's spec) and attempt (kubelet's restart count).
  grpc::Status CreateContainer(const std::string& uid, const std::string& name, uint32_t attempt,
                               std::string* container_id, const ContainerOptions& options = {});
  grpc::Status StartContainer(const std::string& container_id);
  // Create + Start.
  grpc::Status RunContainer(const std::string& uid, const std::string& name, uint32_t attempt,
                            std::string* container_id, const ContainerOptions& options = {});
  // timeout < 0: options().stop_timeout_seconds.
  grpc::Status StopContainer(const std::string& container_id, int64_t timeout = -1);
  grpc::Status RemoveContainer(const std::string& container_id);
  // kubelet's CPU manager form: UpdateContainerResources with only cpuset_cpus set.
  grpc::Status UpdateCpuset(const std::string& container_id, const std::string& cpus);
  grpc::Status UpdateResources(const std::string& container_id,
                               const runtime::v1::LinuxContainerResources& linux);
  grpc::Status ContainerStatus(const std::string& container_id,
                               runtime::v1::ContainerStatusResponse* response, bool verbose = true);
  grpc::Status ListContainers(const runtime::v1::ContainerFilter& filter,
                              std::vector<runtime::v1::Container>* containers);
  // The container's init process on the host (verbose ContainerStatus, info["info"].pid).
  grpc::Status ContainerPid(const std::string& container_id, pid_t* pid);
  // What the runtime stored for the container (ContainerStatus status.resources.linux).
  grpc::Status StoredResources(const std::string& container_id,
                               runtime::v1::LinuxContainerResources* linux);
  // Polls ContainerStatus until the container is in `state` (e.g. an init container has
  // exited); DEADLINE_EXCEEDED with the last state after `patience`.
  grpc::Status WaitForState(const std::string& container_id, runtime::v1::ContainerState state,
                            std::chrono::milliseconds patience);

  // For calls not wrapped here; set a deadline with NewContext().
  runtime::v1::RuntimeService::Stub& runtime() { return *runtime_; }
  std::unique_ptr<grpc::ClientContext> NewContext() const;

  // Stops and removes the pods still there (endpoint, then fallback), then every cgroup
  // directory under cgroup_root() and a temporary log root. Safe to call more than once.
  absl::Status Cleanup();

  // Method, wall time and status code of every call so far.
  const std::vector<CallTiming>& timings() const { return timings_; }

 private:
  struct PodRecord {
    pod::Pod pod;
    runtime::v1::PodSandboxConfig config;
    std::string sandbox_id;
    bool removed = false;
  };

  const PodRecord* FindPod(const std::string& uid) const;
  grpc::Status Timed(std::string_view method,
                     const std::function<grpc::Status(grpc::ClientContext*)>& call);

  EmulatorOptions options_;
  bool own_log_root_ = false;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime_;
  std::map<std::string, PodRecord, std::less<>> pods_;
  std::vector<CallTiming> timings_;
};

}  // namespace topologyd::testing::containerd
