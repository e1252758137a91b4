// `topoctl replay`'s work: one parity case (a machine as `topoctl topology --details -o json`
// prints it, a node configuration in kubelet's keys, pod admissions and removals) run through
// a ledger::Ledger, the engine's record of the node, and every decision as JSON. The shape is
// the one tests/parity/oracle's kubelet-oracle prints for kubelet's own managers (docs/cli.md,
// `replay`).
#pragma once

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace topoctl {

// {"setup_error": MESSAGE, "decisions": []} when the configuration is refused on the machine;
// otherwise {"decisions": [...]}, one per operation. INVALID_ARGUMENT when the case cannot be
// read (a malformed machine, manifest or operation). Removing a pod that is not admitted (a
// refused one) releases nothing, as deleting it does under kubelet.
absl::StatusOr<nlohmann::json> ReplayCase(const nlohmann::json& parity_case);

}  // namespace topoctl
