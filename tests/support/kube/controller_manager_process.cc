#include "tests/support/kube/controller_manager_process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"

#include "tests/support/containerd/subprocess.h"
#include "tests/support/free_port.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/kube/local_get.h"

namespace topologyd::testing::kube {
namespace {

constexpr auto kControllerManagerReadyPatience = std::chrono::seconds(60);

}  // namespace

std::string ControllerManagerSkipReason() {
  const std::string binary = KubeBinary("kube-controller-manager");
  if (binary.empty() || ::access(binary.c_str(), X_OK) != 0) {
    return "no kube-controller-manager: configure with -DTOPOLOGYD_KUBE_BIN_DIR=$(tools/"
           "build-kube.sh kubelet etcd kube-apiserver kube-scheduler kube-controller-manager) or "
           "set TOPOLOGYD_KUBE_BIN_DIR";
  }
  return "";
}

absl::Status ControllerManagerProcess::Start(ControlPlane& control_plane, const std::string& dir,
                                             const std::string& controllers) {
  dir_ = dir;
  absl::StatusOr<std::string> kubeconfig = control_plane.Kubeconfig(kAdminToken);
  if (!kubeconfig.ok()) return kubeconfig.status();
  const int port = FreeLoopbackPort();
  if (port == 0) return absl::InternalError("no free loopback port");
  // No authentication or authorization kubeconfig: the test reads only /healthz, which it
  // serves to anyone.
  const std::vector<std::string> argv = {KubeBinary("kube-controller-manager"),
                                         "--kubeconfig=" + *kubeconfig,
                                         "--controllers=" + controllers,
                                         "--leader-elect=false",
                                         "--bind-address=127.0.0.1",
                                         absl::StrCat("--secure-port=", port),
                                         "--cert-dir=" + dir + "/controller-manager-certs",
                                         "--v=2"};
  pid_ = containerd::SpawnServer(argv, dir + "/controller-manager.log");
  if (pid_ < 0) return absl::InternalError("cannot start kube-controller-manager");

  return WaitUntilAnswers(pid_, "kube-controller-manager",
                          absl::StrCat("https://127.0.0.1:", port, "/healthz"), "ok",
                          kControllerManagerReadyPatience, [this] { return log(); });
}

void ControllerManagerProcess::Stop() { containerd::StopChild(pid_, SIGTERM); }

std::string ControllerManagerProcess::log() const {
  return containerd::Tail(containerd::ReadWholeFile(dir_ + "/controller-manager.log"), 6000);
}

}  // namespace topologyd::testing::kube
