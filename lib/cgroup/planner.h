// The write planner: from the cpusets cgroups hold now and the ones they should hold, the
// ordered list of cpuset.cpus / cpuset.mems writes that gets there without the kernel refusing
// any step. Pure: no I/O, no clock, deterministic output. Thread-safe.
//
// The kernel rules it respects:
//   * v1: a cgroup's cpus and mems must stay a subset of its parent's (recent kernels refuse a
//     child leaving its parent with EACCES and a parent narrowed below a child with EBUSY;
//     older ones said EINVAL), and a cgroup with tasks may not become empty (ENOSPC). v2 has
//     neither rule (the effective set is clamped to the parent's instead), but is given the
//     same order, which is harmless.
// The plan has two phases:
//   1. kWiden, parents before children (ascending depth): every value that grows, plus, for a
//      v1 cgroup with managed descendants whose new value is neither a superset nor a subset of
//      the old one, the union old|new as a stepping stone. In each cgroup mems before cpus.
//   2. kNarrow, children before parents (descending depth): every value that shrinks, and the
//      final value of those stepping stones. In each cgroup cpus before mems.
// A cgroup with no managed descendant whose value moves sideways (e.g. an exclusive container
// re-pinned from CPU 2 to CPU 3) is written directly in phase 1: its parent already holds the
// new value by then, so no stepping stone (and no transient sharing) is needed.
// Values that are already right are not written. A target whose current value is unknown is
// written in phase 1. Empty values are never produced (targets must have non-empty cpus and,
// when set, mems - CpusetManager refuses the others before planning).
//
// Within a phase, ties are broken by cgroup path, so equal inputs give equal plans.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lib/cgroup/types.h"
#include "lib/cpuset/cpuset.h"

namespace topologyd::cgroup {

enum class WritePhase { kWiden, kNarrow };

// One write: `value` (list syntax) into `file` of `cgroup`.
struct CpusetWrite {
  std::string cgroup;
  CpusetFile file = CpusetFile::kCpus;
  CpuSet value;
  WritePhase phase = WritePhase::kWiden;

  friend bool operator==(const CpusetWrite&, const CpusetWrite&) = default;
};

// What is known about each cgroup's current cpuset, keyed by cgroup path. Missing entries and
// unset fields are "unknown". For v2 an empty value means "inherits the parent" and is treated
// as unknown too.
using CurrentCpusets = std::map<std::string, CurrentCpuset, std::less<>>;

// Precondition: target cgroup paths are distinct (later duplicates are ignored) and valid.
std::vector<CpusetWrite> PlanWrites(CgroupVersion version, const CurrentCpusets& current,
                                    const std::vector<CpusetTarget>& desired);

}  // namespace topologyd::cgroup
