#include "lib/topology/synthetic_precheck.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::topology {
namespace {

constexpr uint64_t kMaxIndex = CpuSet::kMaxCpuId;

// An `indexes=` value and the number of objects it numbers.
struct IndexList {
  std::string_view text;
  uint64_t width = 0;
};

// Reads the attributes after a '(' up to the first ')' as hwloc does, keeping the last
// `indexes=` value (hwloc lets a later one override). Attributes are separated by single
// spaces and no other value can hold "indexes=". nullptr without a ')': hwloc refuses that.
const char* ReadAttributes(const char* attrs, std::optional<std::string_view>* indexes) {
  const char* close = std::strchr(attrs, ')');
  if (close == nullptr) return nullptr;
  const std::string_view region(attrs, static_cast<size_t>(close - attrs));
  constexpr std::string_view kKey = "indexes=";
  for (size_t begin = 0; begin <= region.size();) {
    const size_t end = std::min(region.find(' ', begin), region.size());
    const std::string_view word = region.substr(begin, end - begin);
    if (word.substr(0, kKey.size()) == kKey) *indexes = word.substr(kKey.size());
    begin = end + 1;
  }
  return close + 1;
}

// The first entry hwloc would use that is above kMaxIndex. hwloc takes a value of digits and
// commas as an explicit list of at least `width` non-empty entries (else it ignores it); any
// other value is an interleaving, whose indexes hwloc keeps below `width`.
std::optional<std::string_view> IndexAboveLimit(const IndexList& list) {
  if (list.text.find_first_not_of("0123456789,") != std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> used;
  for (size_t begin = 0; used.size() < list.width && begin <= list.text.size();) {
    const size_t end = std::min(list.text.find(',', begin), list.text.size());
    used.push_back(list.text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (used.size() < list.width ||
      std::any_of(used.begin(), used.end(), [](std::string_view e) { return e.empty(); })) {
    return std::nullopt;
  }
  for (std::string_view entry : used) {
    uint64_t value = 0;  // saturates just above kMaxIndex
    for (char digit : entry) {
      value = std::min(value * 10 + static_cast<uint64_t>(digit - '0'), kMaxIndex + 1);
    }
    if (value > kMaxIndex) return entry;
  }
  return std::nullopt;
}

std::string TooMany(uint64_t so_far, uint64_t count) {
  if (count > std::numeric_limits<uint64_t>::max() / so_far) {
    return fmt::format("more than {}", std::numeric_limits<uint64_t>::max());
  }
  return fmt::format("at least {}", so_far * count);
}

}  // namespace

absl::Status PrecheckSyntheticDescription(const std::string& description, std::string_view what) {
  if (description.size() > kMaxSyntheticBytes) {
    return absl::InvalidArgumentError(fmt::format("{} is {} bytes long; at most {} are supported",
                                                  what, description.size(), kMaxSyntheticBytes));
  }
  std::vector<IndexList> lists;
  std::optional<std::string_view> attached_indexes;  // one numbering for all attached nodes
  uint64_t attached = 0;
  uint64_t width = 1;                     // objects at the current level
  const char* pos = description.c_str();  // hwloc reads the C string
  if (*pos == '(') {  // the root's attributes; hwloc does not number the root by them
    std::optional<std::string_view> ignored;
    pos = ReadAttributes(pos + 1, &ignored);
    if (pos == nullptr) return absl::OkStatus();
  }
  // Each `return absl::OkStatus()` below is a description hwloc refuses by itself, cheaply.
  while (true) {
    while (*pos == ' ' || *pos == '\n') ++pos;
    if (*pos == '\0') break;
    if (*pos == '[') {  // "[numa(attributes)]": one node per object of the current level
      const char* close = std::strchr(pos, ']');
      if (close == nullptr) return absl::OkStatus();
      attached += width;
      if (attached > kMaxSyntheticPus) {
        return absl::InvalidArgumentError(
            fmt::format("{} attaches at least {} NUMA nodes; at most {} are supported", what,
                        attached, kMaxSyntheticPus));
      }
      const std::string_view inside(pos, static_cast<size_t>(close - pos));
      if (const size_t open = inside.find('('); open != std::string_view::npos) {
        if (ReadAttributes(pos + open + 1, &attached_indexes) == nullptr) return absl::OkStatus();
      }
      pos = close + 1;
      continue;
    }
    if (*pos < '0' || *pos > '9') {  // "type:", which hwloc ends at the next ':'
      pos = std::strchr(pos, ':');
      if (pos == nullptr) return absl::OkStatus();
      ++pos;
    }
    char* end = nullptr;
    const uint64_t count = std::strtoul(pos, &end, 0);  // as hwloc reads it: 0x.., 0.., -..
    if (end == pos || count == 0) return absl::OkStatus();
    if (count > kMaxSyntheticPus / width) {
      return absl::InvalidArgumentError(
          fmt::format("{} describes {} PUs (the product of the level counts); at most {} are "
                      "supported",
                      what, TooMany(width, count), kMaxSyntheticPus));
    }
    if (count > kMaxSyntheticArity) {
      return absl::InvalidArgumentError(
          fmt::format("{} gives one level {} children per object; at most {} are supported", what,
                      count, kMaxSyntheticArity));
    }
    width *= count;
    pos = end;
    if (*pos == '(') {
      std::optional<std::string_view> indexes;
      pos = ReadAttributes(pos + 1, &indexes);
      if (pos == nullptr) return absl::OkStatus();
      if (indexes) lists.push_back({.text = *indexes, .width = width});
    }
  }
  if (attached_indexes) lists.push_back({.text = *attached_indexes, .width = attached});
  for (const IndexList& list : lists) {
    if (std::optional<std::string_view> index = IndexAboveLimit(list)) {
      return absl::InvalidArgumentError(fmt::format(
          "{} lists index {}; the largest supported is {}", what,
          index->size() <= 20 ? std::string(*index) : QuoteForMessage(*index, 20), kMaxIndex));
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::topology
