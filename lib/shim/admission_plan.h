// What the shim asks topologyd for when kubelet creates a container, and how it answers kubelet
// when topologyd says no or cannot be reached. The CRI shows a pod one container at a time;
// these rules turn that into topologyd's whole-pod admission.
//
// Pure functions; thread-safe.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/pod/pod.h"

namespace topologyd::shim {

// The pod to send to Admit before `container` is created.
//   `spec`: the whole pod (from the API server or the resources annotation), or the containers
//     estimated so far (from the CRI resources; the newest one included).
//   `held`: the names of the pod's containers topologyd holds now; empty when it does not know
//     the pod.
// A pod topologyd does not know is admitted whole: kubelet decides all of a pod's containers
// together. A pod it knows is sent with the containers it holds plus `container`, in spec
// order: the held ones keep what they hold (Admit is idempotent for them) and a container
// released since (an init container kubelet removed after it finished) is not allocated
// again. NOT_FOUND when `spec` has no container of that name.
absl::StatusOr<pod::Pod> PodToAdmit(const pod::Pod& spec, const std::set<std::string>& held,
                                    std::string_view container);

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
