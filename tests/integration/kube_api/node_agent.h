// What each worker's kubelet (with a topologyd front end) does with the pods the scheduler binds
// to it, for the cluster test where no kubelet runs: admits each newly bound pod through that
// node's topologyd (the Admit RPC with the pod's spec from the API server), then writes the
// pod's status as kubelet would: Running when admitted; on a refusal phase Failed with
// kubelet's reason (TopologyAffinityError, ...) and message, so the scheduler no longer counts
// the pod on the node.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"

#include "tests/integration/kube_api/worker_node.h"
#include "tests/support/kube/control_plane.h"

namespace topologyd::testing::kube {

class NodeAgent {
 public:
  // `workers` by node name; every one outlives the agent.
  NodeAgent(const ControlPlane& control_plane, std::map<std::string, WorkerNode*> workers)
      : control_plane_(control_plane), workers_(std::move(workers)) {}

  // One pass over the pods of namespace "default": each pod bound to a worker and not yet
  // handled is admitted and its status written. An error when the API server or a topologyd
  // does not answer.
  absl::Status Poll();

  // What the passes so far decided: admitted pods, and refused ones by kubelet's reason.
  int admitted() const { return admitted_; }
  const std::map<std::string, int>& refused() const { return refused_; }

 private:
  absl::Status WriteStatus(const std::string& name, const nlohmann::json& status) const;

  const ControlPlane& control_plane_;
  std::map<std::string, WorkerNode*> workers_;
  std::set<std::string> handled_;  // pod uids
  int admitted_ = 0;
  std::map<std::string, int> refused_;
};

}  // namespace topologyd::testing::kube
