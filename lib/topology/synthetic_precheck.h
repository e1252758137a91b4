// PrecheckSyntheticDescription(): refuses an hwloc synthetic description that is certainly too
// big, before hwloc sees it.
//
// hwloc builds whatever a synthetic description asks for before any check of ours can run:
// "pu:2(indexes=0,4000000000)" costs it 11 s and 4 GB, "pack:1000 core:1000 pu:1000" more than
// a minute (hwloc 2.9). This scan moves through the text the way hwloc 2.9's parser does, only far
// enough to multiply the level counts and read explicit index lists. Whatever it does not recognise
// is passed on unchanged: hwloc stays the authority on the grammar. It refuses only
//   - a description longer than kMaxSyntheticBytes;
//   - more than kMaxSyntheticPus PUs (the product of the level counts, e.g. 2*2*4*2 for
//     "pack:2 numa:2 core:4 pu:2"), or more than kMaxSyntheticPus NUMA nodes attached with
//     "[numa]" (each adds one node per object of the level before it);
//   - a level count above kMaxSyntheticArity (children of each object of the level above);
//   - an OS index above CpuSet::kMaxCpuId in an explicit list ("pu:4(indexes=0,2,4,6)") that
//     hwloc would use: it reads the first N entries of a level of N objects and ignores a list
//     with fewer. Interleaved indexes ("indexes=core:pack") stay below N by hwloc's own check.
// The PU limit is the most CPUs a Linux kernel can be built for (NR_CPUS), and the arity limit
// keeps hwloc's build, which grows with the square of one object's children (pu:4096 takes
// seconds, pu:8192 15 s), well under a second. Listed indexes may be sparse, so they are
// bounded by CpuSet's largest CPU id instead.
//
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

#include "lib/cpuset/cpuset.h"

namespace topologyd::topology {

inline constexpr size_t kMaxSyntheticBytes = 64 * 1024;
inline constexpr uint64_t kMaxSyntheticPus = 8192;
inline constexpr uint64_t kMaxSyntheticArity = 1024;

// OK, or INVALID_ARGUMENT "`what` ..." naming the limit exceeded; `what` names the source
// (DescribeSource()). Like hwloc, reads `description` up to its first NUL, except that the
// length limit counts every byte.
absl::Status PrecheckSyntheticDescription(const std::string& description, std::string_view what);

}  // namespace topologyd::topology
