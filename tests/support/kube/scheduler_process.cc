#include "tests/support/kube/scheduler_process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"

#include "tests/support/containerd/subprocess.h"
#include "tests/support/free_port.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/kube/local_get.h"

namespace topologyd::testing::kube {
namespace {

constexpr auto kSchedulerReadyPatience = std::chrono::seconds(60);

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

  return WaitUntilAnswers(pid_, "kube-scheduler",
                          absl::StrCat("https://127.0.0.1:", port_, "/readyz"), "ok",
                          kSchedulerReadyPatience, [this] { return log(); });
}

void SchedulerProcess::Stop() { containerd::StopChild(pid_, SIGTERM); }

std::string SchedulerProcess::log() const {
  return containerd::Tail(containerd::ReadWholeFile(dir_ + "/scheduler.log"), 6000);
}

}  // namespace topologyd::testing::kube
