// The topology reader on fuzzed hwloc synthetic descriptions: LoadTopology() (hwloc, then
// DescribeMachine and BuildTopology), its JSON and table renderings and the CPU manager's view.
// A crash with only libhwloc frames on the stack is hwloc's own.
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/cpu/cpu_topology.h"
#include "lib/topology/hwloc_source.h"
#include "lib/topology/topology_json.h"

using namespace topologyd;

namespace {

// hwloc builds whatever the description asks for, which only times the fuzzer out: a machine
// of "numa:406406 pu:9999", or a bitmap of 2^31 bits for "pu:2(indexes=0,2000000000)". The
// product of the counts outside parentheses bounds the number of leaves (digits of type names
// such as "l3" count too, which only overestimates); numbers inside parentheses (indexes,
// memory sizes) are bounded one by one.
constexpr uint64_t kMaxLeaves = 2048;
constexpr uint64_t kMaxAttributeNumber = uint64_t{1} << 22;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool SmallEnough(std::string_view desc) {
  uint64_t product = 1;
  int depth = 0;
  size_t i = 0;
  while (i < desc.size()) {
    if (!IsDigit(desc[i])) {
      if (desc[i] == '(') ++depth;
      if (desc[i] == ')' && depth > 0) --depth;
      ++i;
      continue;
    }
    const uint64_t limit = depth > 0 ? kMaxAttributeNumber : kMaxLeaves;
    uint64_t number = 0;
    for (; i < desc.size() && IsDigit(desc[i]); ++i) {
      number = number * 10 + static_cast<uint64_t>(desc[i] - '0');
      if (number > limit) return false;
    }
    if (depth > 0 || number == 0) continue;
    product *= number;
    if (product > kMaxLeaves) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string desc(reinterpret_cast<const char*>(data), size);
  if (desc.find('\0') != std::string::npos) return 0;  // hwloc takes a C string
  // hwloc 2.9 leaks 32 bytes for memory-side children ("[numa(memory=1GB)]"); hwloc's bug,
  // and recorded machines with such objects are covered by the corpus tests.
  if (desc.find('[') != std::string::npos) return 0;
  if (!SmallEnough(desc)) return 0;
  const auto machine = topology::LoadTopology(topology::TopologySource::Synthetic(desc));
  if (!machine.ok()) return 0;
  (void)topology::TopologyToJson(*machine).dump();
  (void)topology::TopologyToTable(*machine);
  (void)cpu::FromTopology(*machine);
  return 0;
}
