// One cluster of the cluster test, from nothing to a settled wave of pods: etcd and
// kube-apiserver with the NodeResourceTopology CRD; per worker a Node object and a topologyd
// that publishes the Node's NodeResourceTopology object itself; kube-scheduler; the node agent
// admitting what the scheduler binds. Everything is private to the run and stopped with it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "tests/integration/kube_api/pod_wave.h"
#include "tests/integration/kube_api/worker_node.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/kube/scheduler_process.h"
#include "tests/support/temp_dir.h"

namespace topologyd::testing::kube {

struct Worker {
  std::string node;         // the Node's name
  std::string machine_xml;  // its recorded machine
};

// Where the wave's pods ended, as the API server shows them.
struct WaveOutcome {
  int running = 0;                          // bound and admitted
  std::map<std::string, int> failed;        // refused, by the reason in the pod's status
  int pending = 0;                          // never bound
  int unschedulable = 0;                    // of those, marked so by the scheduler
  std::map<std::string, int> cpus_by_node;  // the CPUs the running pods ask for, per node
  double seconds = 0;                       // from the first pod's creation

  int Decided() const;
  int Refused(const std::string& reason) const;
  // "36 running, 0 refused, 4 pending", the refusals by reason when there are any.
  std::string Summary() const;
};

class ClusterRun {
 public:
  ClusterRun(std::vector<Worker> workers, SchedulerOptions scheduler)
      : worker_specs_(std::move(workers)), scheduler_options_(std::move(scheduler)) {}

  // Starts the control plane and applies the CRD from `crd_path`; creates each worker's Node and
  // starts its topologyd; waits until every worker's object is in the API server, owned by its
  // Node; then starts the scheduler (its NodeResourceTopologyMatch cache lists the objects once,
  // at start: a node without one would count as topology-unaware).
  absl::Status Start(const std::string& crd_path);

  // Creates the wave's pods and runs the node agent on what the scheduler binds until every
  // pod is decided, or the pods left are unbound and nothing has changed for `quiet`.
  absl::StatusOr<WaveOutcome> Run(const std::vector<WavePod>& wave, std::chrono::seconds quiet,
                                  std::chrono::seconds patience);

  // Polls until every worker's object in the API server counts, over its NUMA zones, as many
  // CPUs taken (allocatable - available) as `cpus_by_node` says: topologyd published what it
  // admitted and nothing it refused.
  absl::Status WaitForPublishedCpus(const std::map<std::string, int>& cpus_by_node) const;

  // The scheduler's and every topologyd's log (their ends), for a failure.
  std::string Logs() const;

 private:
  absl::Status StartWorker(const Worker& spec, const std::string& kubeconfig);
  absl::Status WaitForNrt(const WorkerNode& worker) const;
  absl::StatusOr<WaveOutcome> Observe() const;

  std::vector<Worker> worker_specs_;
  SchedulerOptions scheduler_options_;
  TempDir dir_{"tpd-cluster"};
  ControlPlane control_plane_;
  std::vector<std::unique_ptr<WorkerNode>> workers_;
  SchedulerProcess scheduler_;
};

}  // namespace topologyd::testing::kube
