// Admission of a pod split over N NUMA nodes (the annotations of numa_split_request.h; the
// rules: docs/admission.md, "Pods split over N NUMA nodes"). kubelet has no such mode: for
// these pods it replaces the Topology Manager's hint merge.
//
//   - The pod must be Guaranteed with exclusive CPUs. Its containers that run for the pod's
//     lifetime (sidecars, then app containers, in start order) are split; regular init
//     containers run in the shared pool with unpinned memory (they finish before the rest).
//   - The nodes: the pod's own (topologyd.io/numa-placement) or ChooseSplitNodes().
//   - CPUs (cpuManagerPolicy static): the containers fill the cells in order, each container
//     taking what is left of the current cell before moving on, so a container may straddle
//     cells; each piece is taken on its cell's node by the CPU manager's own take-by-topology.
//   - Memory (memoryManagerPolicy Static): each split container's memory is one block over
//     all the pod's nodes (its cpuset.mems; the guest binds each cell's memory inside them),
//     under the memory manager's group rule; each node must have its cell's share free (a
//     group the pod joins: the group's pool, the cells' total).
//   - Devices: allocated as usual, inside the pod's nodes when they can be.
// Pure; `state` is the admission's working copy (partly updated after a failure).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/pod/pod.h"

namespace topologyd::admission {

struct SplitAdmission {
  // Set when the pod is rejected: the reason (kNumaSplitError, or the device manager's) and
  // the message.
  std::optional<std::pair<std::string, std::string>> failure;
  NumaSplit split;  // cells, with their nodes once chosen
  // The pod's nodes (OS ids, ascending): every container's NUMA affinity.
  std::vector<int> nodes;
  std::vector<std::string> notes;
};

SplitAdmission AdmitNumaSplit(const NodePolicy& node, AllocationState& state, const pod::Pod& pod,
                              const std::vector<pod::OrderedContainer>& order, bool guaranteed);

}  // namespace topologyd::admission
