// What a pod that asks to be split over N NUMA nodes asks for, read from its annotations
// (docs/admission.md, "Pods split over N NUMA nodes"):
//
//   topologyd.io/numa-nodes: "N"            N guest NUMA cells, each on its own NUMA node
//   topologyd.io/numa-cpus.<i>: "COUNT"     exclusive CPUs of cell i (every i in 0..N-1, or none)
//   topologyd.io/numa-mem.<i>: "QUANTITY"   memory of cell i, a Kubernetes quantity (likewise)
//   topologyd.io/numa-placement: "2,0"      the NUMA node (OS id) of each cell, in cell order
//
// Without numa-cpus / numa-mem the pod's exclusive CPUs / memory are divided evenly (as Nova
// divides a flavor's without hw:numa_cpus / hw:numa_mem), and must divide exactly. With them,
// they must add up to the pod's. Values are matched exactly: decimal digits, no sign, no
// spaces. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/hints/numa_index.h"
#include "lib/pod/pod.h"

namespace topologyd::admission {

struct NumaSplitRequest {
  // Per cell, in cell order; every vector has N entries.
  std::vector<int> cpus;
  std::vector<uint64_t> memory;  // bytes
  // Empty: topologyd chooses the nodes; else the OS id of each cell's node (distinct).
  std::vector<int> placement;
  int cells() const { return static_cast<int>(cpus.size()); }
  friend bool operator==(const NumaSplitRequest&, const NumaSplitRequest&) = default;
};

// Whether the pod carries any of the annotations above (anything else: admission as always).
bool HasNumaSplitAnnotations(const pod::Pod& pod);

// The request of `pod`, whose split containers ask `total_cpus` exclusive CPUs and
// `total_memory` bytes of memory in all. INVALID_ARGUMENT naming the annotation when one is
// malformed, missing, inconsistent with the others or with the totals, or names a NUMA node
// `numa` lacks (the admission rejects the pod with that message).
[[nodiscard]] absl::StatusOr<NumaSplitRequest> ParseNumaSplitRequest(const pod::Pod& pod,
                                                                     int total_cpus,
                                                                     uint64_t total_memory,
                                                                     const hints::NumaIndex& numa);

}  // namespace topologyd::admission
