// A real kube-scheduler for tests, against a ControlPlane: the binary tools/build-kube.sh built
// (scheduler-plugins' build of it, with NodeResourceTopologyMatch among its plugins), as the
// administrator, leader election off, its secure port on loopback, its configuration and log in
// a directory the test owns.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

#include "tests/support/kube/control_plane.h"

namespace topologyd::testing::kube {

// Why kube-scheduler cannot run here (not built), or "".
std::string SchedulerSkipReason();

struct SchedulerOptions {
  // The KubeSchedulerConfiguration's keys other than apiVersion, kind, leaderElection and
  // clientConnection, as YAML lines: `profiles:`, `podMaxBackoffSeconds:`, ... Empty: the
  // default profile.
  std::string configuration;
  // More command-line flags.
  std::vector<std::string> flags;
};

class SchedulerProcess {
 public:
  SchedulerProcess() = default;
  SchedulerProcess(const SchedulerProcess&) = delete;
  SchedulerProcess& operator=(const SchedulerProcess&) = delete;
  ~SchedulerProcess() { Stop(); }

  // Writes the configuration into `dir` (an existing directory) and starts kube-scheduler;
  // returns once its /readyz answers ok (its informers have synced), or an error with its log.
  absl::Status Start(ControlPlane& control_plane, const std::string& dir,
                     const SchedulerOptions& options);
  // SIGTERM, SIGKILL after 10 s.
  void Stop();

  // The scheduler's output so far.
  std::string log() const;

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace topologyd::testing::kube
