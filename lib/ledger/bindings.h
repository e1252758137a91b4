// Rules for the runtime bindings recorded with each container (container id, cgroup path),
// shared by Bind, which creates them, and Restore, which reads them back from a state file
// that may have been edited: a path that escapes the cgroup root, or two containers on nested
// cgroups, must never reach the cgroup writer.
#pragma once

#include <string_view>

#include "absl/status/status.h"

#include "lib/state/state.h"

namespace topologyd::ledger {

// Whether one cgroup path is the other or contains it: the writes for one container would
// land on (or above) the other's cgroup.
bool NestedPaths(std::string_view a, std::string_view b);

// Checks every pod uid (the API's rule: 1 to 64 of [A-Za-z0-9-]), container id and cgroup
// path in `state`, and that no two containers share a container id or have nested cgroups.
// FAILED_PRECONDITION naming the pod and container.
absl::Status ValidateBindings(const state::State& state);

// A binding as a request carries it: a valid container id and, unless empty (to be derived),
// a valid relative cgroup path. INVALID_ARGUMENT naming the field.
absl::Status ValidateBindingRequest(std::string_view container_id, std::string_view cgroup);

// Whether pod `uid` container `container` may be bound to `container_id` and `cgroup` in
// `state`: no other container is bound to that id, or to that cgroup or one nested with it.
// INVALID_ARGUMENT naming the other container.
absl::Status CheckFreeBinding(const state::State& state, std::string_view uid,
                              std::string_view container, std::string_view container_id,
                              std::string_view cgroup);

}  // namespace topologyd::ledger
