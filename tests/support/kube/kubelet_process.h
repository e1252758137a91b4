// A real kubelet for tests: standalone (no API server) or registered to one, static pods from a
// directory of manifests, on any CRI endpoint (containerd's own socket, or a relay such as the
// shim), with its managers set to none, its root directory, logs and cgroup root private to the
// test, and its servers on loopback. The binary comes from tools/build-kube.sh (docs/testing.md).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace topologyd::testing::kube {

// A program tools/build-kube.sh built ("kubelet", "kube-apiserver", "etcd", ...):
// $TOPOLOGYD_KUBE_BIN_DIR/NAME, else in the directory the build was configured with
// (-DTOPOLOGYD_KUBE_BIN_DIR); "" when neither names one.
std::string KubeBinary(std::string_view name);
inline std::string KubeletBinary() { return KubeBinary("kubelet"); }

// Why a real kubelet cannot run here (no binary, not root, no cgroup v1 hierarchy for the
// controllers kubelet needs), or "" when it can.
std::string KubeletSkipReason();

struct KubeletOptions {
  // unix:///path of the CRI runtime service kubelet talks to.
  std::string runtime_endpoint;
  // kubelet's own CPU manager: "none" when topologyd decides (through the shim); "static",
  // with `reserved_system_cpus`, to compare with kubelet's own decisions.
  std::string cpu_manager_policy = "none";
  std::string reserved_system_cpus;
  // A kubeconfig for an API server: kubelet registers the Node kNodeName there and runs the
  // pods bound to it besides the static ones. "" = standalone.
  std::string kubeconfig;
};

class KubeletProcess {
 public:
  // The node's name (--hostname-override): static pods are named "<name>-topologyd-e2e".
  static constexpr char kNodeName[] = "topologyd-e2e";

  KubeletProcess() = default;
  KubeletProcess(const KubeletProcess&) = delete;
  KubeletProcess& operator=(const KubeletProcess&) = delete;
  // Stops kubelet (SIGKILL), unmounts what it left mounted under its root directory and
  // removes its cgroup tree (which fails while containers still run in it: the runtime's
  // containers are the runtime owner's to remove first).
  ~KubeletProcess();

  // Writes the configuration under `dir` (an existing directory the test owns), creates the
  // cgroup root in every hierarchy and starts kubelet; returns once its healthz answers.
  absl::Status Start(const std::string& dir, KubeletOptions options);
  // SIGKILL, then the same kubelet again on the same configuration and root directory.
  absl::Status Restart();
  // Sends `sig` and waits for the exit (SIGKILL after 10 s).
  void Stop(int sig);
  bool running() const { return pid_ > 0; }

  // Static pods: writes or removes <manifests>/<name>.yaml. kubelet reads the directory every
  // second.
  absl::Status WriteManifest(const std::string& name, const std::string& yaml) const;
  absl::Status RemoveManifest(const std::string& name) const;

  // kubelet's own view: the pods of its read-only /pods endpoint (a v1 PodList's items).
  absl::StatusOr<std::vector<nlohmann::json>> Pods() const;
  // The pod named `name` in namespace `ns` from Pods(); NOT_FOUND when kubelet has none.
  absl::StatusOr<nlohmann::json> Pod(const std::string& ns, const std::string& name) const;

  // kubelet's output so far.
  std::string log() const;

 private:
  absl::Status Launch();
  absl::StatusOr<std::string> Get(int port, const std::string& path) const;

  std::string dir_;
  std::string manifests_;
  std::string config_path_;
  std::string cgroup_root_;
  std::string kubeconfig_;
  int healthz_port_ = 0;
  int read_only_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace topologyd::testing::kube
