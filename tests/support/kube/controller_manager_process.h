// A real kube-controller-manager for tests, against a ControlPlane, running only the controllers
// a test names (the garbage collector, say): the binary tools/build-kube.sh built, as the
// administrator, leader election off, its secure port on loopback, its log in a directory the
// test owns.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

#include "tests/support/kube/control_plane.h"

namespace topologyd::testing::kube {

// Why kube-controller-manager cannot run here (not built), or "".
std::string ControllerManagerSkipReason();

class ControllerManagerProcess {
 public:
  ControllerManagerProcess() = default;
  ControllerManagerProcess(const ControllerManagerProcess&) = delete;
  ControllerManagerProcess& operator=(const ControllerManagerProcess&) = delete;
  ~ControllerManagerProcess() { Stop(); }

  // Starts kube-controller-manager with `controllers` (its --controllers list, e.g.
  // "garbagecollector") in `dir` (an existing directory); returns once its /healthz answers ok,
  // or an error with its log. A controller may still be syncing its caches then.
  absl::Status Start(ControlPlane& control_plane, const std::string& dir,
                     const std::string& controllers);
  // SIGTERM, SIGKILL after 10 s.
  void Stop();

  // Its output so far.
  std::string log() const;

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace topologyd::testing::kube
