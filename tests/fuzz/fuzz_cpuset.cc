// CpuSet::Parse on arbitrary text (cpuset.cpus files, reservedSystemCPUs, kubelet checkpoints):
// no crash, ids within kMaxCpuId, and an accepted set prints as a list that parses back to it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/cpuset/cpuset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<topologyd::CpuSet> set = topologyd::CpuSet::Parse(text);
  if (!set.ok()) return 0;
  if (set->Max() > topologyd::CpuSet::kMaxCpuId) abort();
  if (static_cast<int>(set->ToVector().size()) != set->Size()) abort();
  const std::string shown = set->ToString();
  const absl::StatusOr<topologyd::CpuSet> back = topologyd::CpuSet::Parse(shown);
  if (!back.ok() || !(*back == *set)) {
    fprintf(stderr, "round trip failed: %s\n", shown.c_str());
    abort();
  }
  return 0;
}
