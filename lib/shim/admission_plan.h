// How the shim answers kubelet when topologyd says no to a container or cannot be reached
// (what to admit is topologyd's PlanContainer: lib/planner).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/pod/pod.h"

namespace topologyd::shim {

// Whether `container` cannot run as intended without topologyd's decision: exclusive CPUs and
// pinned memory are given only to Guaranteed pods, aligned devices only to containers that
// request an extended resource. Everything else runs on the shared pool, where the shim's
// failure policy decides what happens while topologyd is unreachable.
bool NeedsPlacement(const pod::Pod& pod, std::string_view container);

// A refusal as the status of the CRI call kubelet made: RESOURCE_EXHAUSTED for kubelet's
// OutOf<resource> reasons, FAILED_PRECONDITION for the rest (topology, SMT alignment, ...). The
// message is what `kubectl describe pod` shows: "topologyd: <reason>: <message>".
absl::Status RefusalStatus(std::string_view reason, std::string_view message);

}  // namespace topologyd::shim
