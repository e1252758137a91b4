// TopologyHint and the shape of a hint provider's answer, with kubelet's distinctions:
//
//   ProviderHints (a provider's whole answer)
//     std::nullopt            -> the provider returned no map ("no preference at all")
//     map resource -> HintList
//       HintList std::nullopt -> no preference for that resource
//       HintList empty vector -> the resource cannot be satisfied
//       TopologyHint{affinity = std::nullopt} -> any NUMA node
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/hints/numa_mask.h"

namespace topologyd::hints {

struct TopologyHint {
  std::optional<NumaMask> affinity;  // nullopt = any NUMA node
  bool preferred = false;
  friend bool operator==(const TopologyHint&, const TopologyHint&) = default;
};

using HintList = std::optional<std::vector<TopologyHint>>;
using ProviderHints = std::optional<std::map<std::string, HintList>>;

}  // namespace topologyd::hints
