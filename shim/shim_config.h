// The kubelet shim's configuration (config/shim.yaml; docs/shim.md lists every key): where it
// listens for kubelet, where the runtime and topologyd are, where a pod's full spec comes from,
// and what it does while topologyd cannot be reached.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/cgroup/types.h"

namespace topologyd::shim {

// What happens to a container that needs no placement (shared pool) while topologyd is down.
enum class FailurePolicy {
  kFail,    // the call fails and kubelet retries it (the default: nothing runs unpinned)
  kIgnore,  // the call goes to the runtime unchanged; the shim adopts the container later
};

// Where the shim learns a pod's containers and their resources, tried in the configured order.
enum class PodSpecSource { kApiServer, kAnnotation, kEstimate };

std::string_view ToString(FailurePolicy policy);
std::string_view ToString(PodSpecSource source);

struct ShimConfig {
  std::string source_file;
  // The socket kubelet's --container-runtime-endpoint names.
  std::string listen = "unix:///run/topologyd/shim.sock";
  uint32_t socket_mode = 0660;
  // containerd's (or CRI-O's) CRI socket.
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string topologyd_socket = "/run/topologyd/topologyd.sock";
  // Each call to topologyd; kubelet's own deadline applies when it is shorter.
  std::chrono::milliseconds topologyd_timeout{std::chrono::seconds(5)};
  FailurePolicy failure_policy = FailurePolicy::kFail;
  // kubelet's gRPC message limit, both ways.
  int max_message_bytes = 16 << 20;
  cgroup::CgroupDriver cgroup_driver = cgroup::CgroupDriver::kCgroupfs;
  cgroup::Runtime runtime = cgroup::Runtime::kContainerd;
  // The cgroup filesystem, where the shim lifts the CFS quota of a pod cgroup whose pod has
  // exclusive CPUs; it writes nothing else, and nothing outside it.
  std::string cgroup_root = "/sys/fs/cgroup";
  cgroup::CgroupVersionSetting cgroup_version = cgroup::CgroupVersionSetting::kAuto;
  struct PodSpec {
    std::vector<PodSpecSource> sources = {PodSpecSource::kAnnotation, PodSpecSource::kEstimate};
    // For kApiServer: a kubeconfig file, or "in-cluster" for the pod's service account.
    std::string kubeconfig;
    std::chrono::milliseconds api_server_timeout{std::chrono::seconds(5)};
  } pod_spec;
  struct Resync {
    // How often the shim compares the runtime with topologyd (and after every reconnection).
    std::chrono::milliseconds period{std::chrono::seconds(30)};
    // Release pods topologyd holds that the runtime has no sandbox for.
    bool release_orphans = true;
  } resync;
  struct Log {
    std::string level = "info";
    std::string format = "text";
  } log;

  // The socket paths without their "unix://" scheme.
  std::string ListenPath() const;
  std::string RuntimePath() const;
};

// Parses YAML text; INVALID_ARGUMENT lists every problem, one "FILE:LINE: key: ..." per line.
absl::StatusOr<ShimConfig> ParseShimConfig(std::string_view yaml_text,
                                           const std::string& file_name);
// The checks that concern several keys, or values given as command-line flags: every socket an
// absolute path (listen and runtimeEndpoint as unix://PATH), and the shim not relaying to
// itself. INVALID_ARGUMENT naming the option.
absl::StatusOr<ShimConfig> ValidateShimConfig(ShimConfig config);
// Reads and parses a file.
absl::StatusOr<ShimConfig> LoadShimConfigFile(const std::string& path);

}  // namespace topologyd::shim
