// A private containerd for tests: its own root, state, sockets and runc root under a directory
// the test owns, the CRI plugin configured as a kubelet node needs it (host network only, no
// CNI), and a busybox image imported as both the sandbox ("pause") and the workload image. It
// never touches the system's containerd socket or root.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace topologyd::testing::containerd {

// Which containerd a ContainerdInstance runs.
struct ContainerdOptions {
  // The directory of containerd and containerd-shim-runc-v2 (tools/build-containerd.sh builds
  // containerd 2.x there); "" = the ones on PATH (Debian's containerd 1.6).
  std::string bin_dir;
  // Serve NRI (containerd 1.7 and later) on dir/nri.sock, plugins not started by containerd.
  bool nri = false;
};

// Why tests against a real containerd cannot run here (not root; containerd, runc, ctr, tar,
// sha256sum or a static busybox missing; no cgroup v1 cpuset hierarchy), or "" when they can.
// Tests call SKIP_OR_FAIL() << reason.
std::string ContainerdSkipReason(const ContainerdOptions& options = {});

// The directory tools/build-containerd.sh built containerd 2.x into:
// $TOPOLOGYD_CONTAINERD2_BIN_DIR, else the one named at configure time; "" when neither is set.
std::string Containerd2BinDir();

class ContainerdInstance {
 public:
  // Both names point at the same busybox image (oci_image.h).
  static constexpr const char* kSandboxImage = "topologyd.test/pause:1";
  static constexpr const char* kImage = "topologyd.test/busybox:1";

  explicit ContainerdInstance(ContainerdOptions options = {}) : options_(std::move(options)) {}
  ContainerdInstance(const ContainerdInstance&) = delete;
  ContainerdInstance& operator=(const ContainerdInstance&) = delete;
  // Removes every pod through the CRI, stops containerd, then removes by force what is left:
  // runc containers, shims, mounts under the directory.
  ~ContainerdInstance();

  // Writes dir/config.toml and starts containerd on it; returns once the CRI answers. The
  // first start also builds and imports the images. `dir` must exist and be short enough for
  // a socket path (under /tmp); "" = a fresh directory under /tmp that the destructor
  // removes. Returns containerd's socket.
  absl::StatusOr<std::string> Start(const std::string& dir = "");
  // SIGTERM, and SIGKILL after 10 s. Running containers and their shims keep running.
  absl::Status Stop();
  // Stop, then Start on the same config: containerd re-attaches to the running shims.
  absl::Status Restart();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& socket() const { return socket_; }
  // Where containerd serves NRI plugins; "" without ContainerdOptions::nri.
  std::string nri_socket() const { return options_.nri ? dir_ + "/nri.sock" : ""; }
  const std::string& dir() const { return dir_; }
  // The workload image's id as ImageStatus reports it: what kubelet passes in CreateContainer.
  const std::string& image_id() const { return image_id_; }
  // Whether the config clamps oom_score_adj (restrict_oom_score_adj): set when this process
  // lacks CAP_SYS_RESOURCE, without which runc cannot lower a container's score and every
  // container fails to start.
  bool restricts_oom_score_adj() const { return restrict_oom_score_adj_; }
  // containerd's output so far (dir/containerd.log).
  std::string log() const;

  // Stops and removes every pod sandbox, and with it every container, through containerd's
  // CRI. Everything in this containerd is the test's own.
  absl::Status RemoveAllPods();

 private:
  absl::Status WaitUntilServing();
  absl::Status ImportImages();
  void RemoveLeftovers();

  const ContainerdOptions options_;
  std::string dir_;
  bool own_dir_ = false;
  std::string socket_;
  std::string image_id_;
  pid_t pid_ = -1;
  bool images_imported_ = false;
  bool restrict_oom_score_adj_ = false;
};

// True if CAP_SYS_RESOURCE is in this process's effective capabilities.
bool HasCapSysResource();

}  // namespace topologyd::testing::containerd
