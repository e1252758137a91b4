// The table form of the offline `topoctl explain` (cmd_explain.cc), for people: per merge the
// providers' hints, the merged hint and the decision; then the decision and the allocation.
#pragma once

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/pod/pod.h"

namespace topoctl {

// Prints the report on stdout. A merge given up at its limits gets a line
// "Merge given up: MESSAGE" under its "Merged:" line.
void PrintOfflineExplainTable(const topologyd::admission::NodePolicy& node,
                              const topologyd::pod::Pod& pod,
                              const topologyd::admission::AdmissionResult& r);

}  // namespace topoctl
