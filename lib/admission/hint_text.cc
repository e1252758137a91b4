#include "lib/admission/hint_text.h"

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace topologyd::admission {

std::string MaskText(hints::NumaMask mask, const hints::NumaIndex& numa) {
  return fmt::format("[{}]", fmt::join(numa.Ids(mask), ","));
}

std::string HintText(const hints::TopologyHint& hint, const hints::NumaIndex& numa) {
  if (!hint.affinity.has_value()) {
    return hint.preferred ? "any NUMA node (preferred)" : "any NUMA node (not preferred)";
  }
  return fmt::format("NUMA {} {}", MaskText(*hint.affinity, numa),
                     hint.preferred ? "preferred" : "not preferred");
}

std::string HintListText(const hints::HintList& list, const hints::NumaIndex& numa, int max_masks) {
  if (!list.has_value()) return "no preference";
  if (list->hints.empty()) return "cannot be satisfied";
  std::vector<std::string> preferred;
  std::vector<std::string> other;
  bool any_preferred = false;
  for (const hints::TopologyHint& h : list->hints) {
    const std::string text = h.affinity.has_value() ? MaskText(*h.affinity, numa) : "any";
    if (h.preferred) {
      any_preferred = true;
      preferred.push_back(text);
    } else {
      other.push_back(text);
    }
  }
  auto join = [max_masks](const std::vector<std::string>& masks) {
    const size_t shown = std::min(masks.size(), static_cast<size_t>(std::max(max_masks, 1)));
    std::string out = fmt::format(
        "{}", fmt::join(std::vector<std::string>(masks.begin(), masks.begin() + shown), " or "));
    if (shown < masks.size()) out += fmt::format(" and {} more", masks.size() - shown);
    return out;
  };
  const std::string closed = list->upward_closed ? " (or any wider set)" : "";
  if (any_preferred) return fmt::format("preferred {}{}", join(preferred), closed);
  return fmt::format("no preferred placement (possible: {}{})", join(other), closed);
}

std::string ProviderHintsText(std::string_view provider, const hints::ProviderHints& hints,
                              const hints::NumaIndex& numa) {
  if (!hints.has_value() || hints->empty()) return fmt::format("{}: no preference", provider);
  std::vector<std::string> parts;
  for (const auto& [resource, list] : *hints) {
    parts.push_back(fmt::format("{}: {}", resource, HintListText(list, numa)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace topologyd::admission
