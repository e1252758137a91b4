// Short, human-readable renderings of masks, hints and hint lists with NUMA OS ids, for
// rejection messages and the `topoctl explain` table.
//
// Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/hints/merge.h"
#include "lib/hints/numa_index.h"
#include "lib/hints/numa_mask.h"
#include "lib/hints/topology_hint.h"

namespace topologyd::admission {

// "[0,1]".
std::string MaskText(hints::NumaMask mask, const hints::NumaIndex& numa);

// "NUMA [0,1] preferred", "NUMA [0] not preferred", "any NUMA node (preferred)".
std::string HintText(const hints::TopologyHint& hint, const hints::NumaIndex& numa);

// One resource's list: "no preference", "cannot be satisfied", "preferred [0] or [1]",
// "no preferred placement (narrowest [0,1])", "[0] or any superset, preferred [0]" ...
// At most `max_masks` masks are named, then "and N more".
std::string HintListText(const hints::HintList& list, const hints::NumaIndex& numa,
                         int max_masks = 4);

// "<provider>: no preference" or "<resource>: <list>; <resource>: <list>".
std::string ProviderHintsText(std::string_view provider, const hints::ProviderHints& hints,
                              const hints::NumaIndex& numa);

}  // namespace topologyd::admission
