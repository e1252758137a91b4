// The parts of an AllocationState a restart must reproduce: everything but the reuse
// bookkeeping of init containers, which kubelet keeps in memory only (and changes on every
// re-admission, docs/admission.md). Shared by the admission tests and the fuzz harness.
#pragma once

#include "lib/admission/node_policy.h"

namespace topologyd::testing {

inline admission::AllocationState Durable(admission::AllocationState s) {
  s.cpu.cpus_to_reuse.clear();
  s.memory.init_reusable.clear();
  return s;
}

}  // namespace topologyd::testing
