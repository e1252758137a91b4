#include "tests/support/kube/scheduler_process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"

#include "lib/curl_easy/curl_easy.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/free_port.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/kube/local_get.h"

namespace topologyd::testing::kube {
namespace {

constexpr auto kSchedulerReadyPatience = std::chrono::seconds(60);

// GET https://127.0.0.1:port/path of the scheduler's own server; the body, or why not.
absl::StatusOr<std::string> GetScheduler(int port, const std::string& path) {
  return LocalGet(absl::StrCat("https://127.0.0.1:", port, path), 1 << 20);
}

}  // namespace

std::string SchedulerSkipReason() {
  const std::string binary = KubeBinary("kube-scheduler");
  if (binary.empty() || ::access(binary.c_str(), X_OK) != 0) {
    return "no kube-scheduler: configure with -DTOPOLOGYD_KUBE_BIN_DIR=$(tools/build-kube.sh "
           "kubelet etcd kube-apiserver kube-scheduler) or set TOPOLOGYD_KUBE_BIN_DIR";
  }
  return "";
}

absl::Status SchedulerProcess::Start(ControlPlane& control_plane, const std::string& dir,
                                     const SchedulerOptions& options) {
  dir_ = dir;
  absl::StatusOr<std::string> kubeconfig = control_plane.Kubeconfig(kAdminToken);
  if (!kubeconfig.ok()) return kubeconfig.status();
  port_ = FreeLoopbackPort();
  if (port_ == 0) return absl::InternalError("no free loopback port");
  const std::string config = dir + "/scheduler.yaml";
  // The client's default rate (50 requests/s) would pace binding a wave of pods.
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "leaderElection: {leaderElect: false}\n"
                           "clientConnection: {kubeconfig: "
                        << *kubeconfig << ", qps: 500, burst: 1000}\n"
                        << options.configuration;
  // No authentication or authorization kubeconfig: the test reads only /readyz, which the
  // scheduler serves to anyone.
  std::vector<std::string> argv = {KubeBinary("kube-scheduler"),
                                   "--config=" + config,
                                   "--bind-address=127.0.0.1",
                                   absl::StrCat("--secure-port=", port_),
                                   "--cert-dir=" + dir + "/scheduler-certs",
                                   "--v=2"};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  pid_ = containerd::SpawnServer(argv, dir + "/scheduler.log");
  if (pid_ < 0) return absl::InternalError("cannot start kube-scheduler");

  const auto until = std::chrono::steady_clock::now() + kSchedulerReadyPatience;
  absl::StatusOr<std::string> ready;
  while (std::chrono::steady_clock::now() < until) {
    if (containerd::WaitForChild(pid_, std::chrono::milliseconds(0))) {
      pid_ = -1;
      return absl::InternalError("kube-scheduler exited at start:\n" + log());
    }
    ready = GetScheduler(port_, "/readyz");
    if (ready.ok() && *ready == "ok") return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("kube-scheduler was not ready within ", kSchedulerReadyPatience.count(),
                   " s: ", ready.ok() ? *ready : ready.status().ToString(), "\n", log()));
}

void SchedulerProcess::Stop() { containerd::StopChild(pid_, SIGTERM); }

std::string SchedulerProcess::log() const {
  return containerd::Tail(containerd::ReadWholeFile(dir_ + "/scheduler.log"), 6000);
}

}  // namespace topologyd::testing::kube
