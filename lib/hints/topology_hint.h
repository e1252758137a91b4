// TopologyHint and the shape of a hint provider's answer, with kubelet's distinctions:
//
//   ProviderHints (a provider's whole answer)
//     std::nullopt             -> the provider returned no map ("no preference at all")
//     map resource -> HintList
//       HintList std::nullopt  -> no preference for that resource
//       ResourceHints, explicit form, empty `hints` -> the resource cannot be satisfied
//       TopologyHint{affinity = std::nullopt}       -> any NUMA node
//
// Masks are over NUMA positions (see numa_mask.h).
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

// The hints a provider offers for one resource, in one of two forms.
//
// Explicit form (`upward_closed == false`): `hints` is the whole list, exactly as kubelet's
// provider would return it (nil affinities allowed; empty = cannot be satisfied).
//
// Upward-closed form (`upward_closed == true`): the list kubelet would return is every
// non-empty mask M within `universe` that contains the affinity of some entry of `hints`;
// M is preferred iff it equals the affinity of an entry marked preferred. Every entry has a
// non-nil, non-empty affinity within `universe`. kubelet's CPU and device hint lists have
// this shape (a superset of a feasible mask is feasible and, being wider than the minimal
// size, never preferred), so listing only the minimal feasible masks describes them exactly
// without enumerating 2^N masks on machines with many NUMA nodes.
struct ResourceHints {
  std::vector<TopologyHint> hints;
  bool upward_closed = false;
  NumaMask universe;  // only meaningful in the upward-closed form
  friend bool operator==(const ResourceHints&, const ResourceHints&) = default;
};

using HintList = std::optional<ResourceHints>;
using ProviderHints = std::optional<std::map<std::string, HintList>>;

}  // namespace topologyd::hints
