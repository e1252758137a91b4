// The table `topoctl explain` prints for people, online and offline alike: it renders the
// JSON document both forms print with -o json (lib/admission/admission_json.h), so the two
// cannot drift apart. First the decision as `admit` prints it (the same words, columns and
// "-" for an empty cell), then the policy, the notes and, per merge, every provider's hints
// and the merged hint.
#pragma once

#include "nlohmann/json.hpp"

#include "tools/topoctl/support_pods.h"

namespace topoctl {

// Prints the table of an explain document on stdout. `marks` names init containers and
// sidecars in the CONTAINER column. The merged row says "refused by the topology manager"
// when the merge refused the pod, and nothing about admission otherwise: a merge that admits
// is not a decision (the CPU, memory or device managers can still refuse the pod). A merge
// given up at its limits gets a line "merge given up: MESSAGE" under its table.
void PrintExplainTable(const nlohmann::json& doc, const ContainerMarks& marks = {});

}  // namespace topoctl
