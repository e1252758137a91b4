#include "lib/admission/numa_split_request.h"

#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "fmt/format.h"

#include "lib/admission/reasons.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/pod/quantity.h"

namespace topologyd::admission {
namespace {

// A hint mask's size: more cells than that would need more NUMA nodes than any machine has.
constexpr int kMaxCells = 64;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A decimal number of at most 9 digits (no sign, no spaces), or nullopt.
std::optional<int> SmallNumber(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

absl::Status Bad(std::string_view annotation, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("annotation {}: {} {}", annotation, QuoteForMessage(value), why));
}

// The per-cell annotations with `prefix`, by cell index: every index below `cells`, and all
// of them or none.
absl::StatusOr<std::map<int, std::string>> PerCell(const pod::Pod& pod, std::string_view prefix,
                                                   int cells) {
  std::map<int, std::string> out;
  for (const auto& [key, value] : pod.annotations) {
    if (!StartsWith(key, prefix)) continue;
    std::optional<int> index = SmallNumber(std::string_view(key).substr(prefix.size()));
    if (!index.has_value() || *index >= cells) {
      return absl::InvalidArgumentError(
          fmt::format("annotation {}: the cell index must be 0 to {} ({}: \"{}\")",
                      QuoteForMessage(key), cells - 1, kNumaNodesAnnotation, cells));
    }
    out[*index] = value;
  }
  if (out.empty()) return out;
  for (int i = 0; i < cells; ++i) {
    if (!out.contains(i)) {
      return absl::InvalidArgumentError(
          fmt::format("annotation {}{} is missing: give one for every cell 0 to {}, or none",
                      prefix, i, cells - 1));
    }
  }
  return out;
}

absl::StatusOr<std::vector<int>> CellCpus(const pod::Pod& pod, int cells, int total) {
  TOPOLOGYD_ASSIGN_OR_RETURN(auto given, PerCell(pod, kNumaCpusAnnotationPrefix, cells));
  std::vector<int> out;
  if (given.empty()) {
    if (total % cells != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "the pod's {} exclusive CPUs do not divide evenly over {} NUMA nodes: give {}0 to {}{}",
          total, cells, kNumaCpusAnnotationPrefix, kNumaCpusAnnotationPrefix, cells - 1));
    }
    return std::vector<int>(cells, total / cells);
  }
  int64_t sum = 0;
  for (const auto& [i, value] : given) {
    std::optional<int> count = SmallNumber(value);
    if (!count.has_value() || *count == 0) {
      return Bad(fmt::format("{}{}", kNumaCpusAnnotationPrefix, i), value,
                 "is not a positive whole number of CPUs (every cell needs a CPU)");
    }
    out.push_back(*count);
    sum += *count;
  }
  if (sum != total) {
    return absl::InvalidArgumentError(
        fmt::format("annotations {}*: the cells' CPUs add up to {}, but the pod's containers ask "
                    "for {} exclusive CPUs",
                    kNumaCpusAnnotationPrefix, sum, total));
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> CellMemory(const pod::Pod& pod, int cells, uint64_t total) {
  TOPOLOGYD_ASSIGN_OR_RETURN(auto given, PerCell(pod, kNumaMemAnnotationPrefix, cells));
  std::vector<uint64_t> out;
  if (given.empty()) {
    if (total % static_cast<uint64_t>(cells) != 0) {
      return absl::InvalidArgumentError(
          fmt::format("the pod's {} bytes of memory do not divide evenly over {} NUMA nodes: give "
                      "{}0 to {}{}",
                      total, cells, kNumaMemAnnotationPrefix, kNumaMemAnnotationPrefix, cells - 1));
    }
    return std::vector<uint64_t>(cells, total / cells);
  }
  uint64_t sum = 0;
  for (const auto& [i, value] : given) {
    const std::string name = fmt::format("{}{}", kNumaMemAnnotationPrefix, i);
    absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(value);
    std::optional<int64_t> bytes = q.ok() ? q->AsInt64() : std::nullopt;
    if (!bytes.has_value() || *bytes <= 0) {
      return Bad(name, value, "is not a positive whole number of bytes (a quantity such as 2Gi)");
    }
    out.push_back(static_cast<uint64_t>(*bytes));
    sum += static_cast<uint64_t>(*bytes);
  }
  if (sum != total) {
    return absl::InvalidArgumentError(
        fmt::format("annotations {}*: the cells' memory adds up to {} bytes, but the pod's "
                    "containers ask for {} bytes",
                    kNumaMemAnnotationPrefix, sum, total));
  }
  return out;
}

absl::StatusOr<std::vector<int>> Placement(const pod::Pod& pod, int cells,
                                           const hints::NumaIndex& numa) {
  auto it = pod.annotations.find(std::string(kNumaPlacementAnnotation));
  if (it == pod.annotations.end()) return std::vector<int>();
  const std::string& value = it->second;
  std::vector<int> out;
  std::set<int> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    const std::string_view part =
        std::string_view(value).substr(start, comma == std::string::npos ? comma : comma - start);
    std::optional<int> id = SmallNumber(part);
    if (!id.has_value()) {
      return Bad(kNumaPlacementAnnotation, value,
                 "is not a comma-separated list of NUMA node ids, one per cell (e.g. \"0,2\")");
    }
    if (numa.Position(*id) < 0) {
      return Bad(kNumaPlacementAnnotation, value,
                 fmt::format("names NUMA node {}, which this machine lacks", *id));
    }
    if (!seen.insert(*id).second) {
      return Bad(kNumaPlacementAnnotation, value,
                 fmt::format("names NUMA node {} twice: every cell needs its own node", *id));
    }
    out.push_back(*id);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(out.size()) != cells) {
    return Bad(kNumaPlacementAnnotation, value,
               fmt::format("names {} NUMA nodes, but {} is \"{}\"", out.size(),
                           kNumaNodesAnnotation, cells));
  }
  return out;
}

}  // namespace

bool HasNumaSplitAnnotations(const pod::Pod& pod) {
  for (const auto& [key, value] : pod.annotations) {
    if (key == kNumaNodesAnnotation || key == kNumaPlacementAnnotation ||
        StartsWith(key, kNumaCpusAnnotationPrefix) || StartsWith(key, kNumaMemAnnotationPrefix)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<NumaSplitRequest> ParseNumaSplitRequest(const pod::Pod& pod, int total_cpus,
                                                       uint64_t total_memory,
                                                       const hints::NumaIndex& numa) {
  auto it = pod.annotations.find(std::string(kNumaNodesAnnotation));
  if (it == pod.annotations.end()) {
    return absl::InvalidArgumentError(
        fmt::format("annotations {}<i>, {}<i> and {} need {} (the number of NUMA nodes)",
                    kNumaCpusAnnotationPrefix, kNumaMemAnnotationPrefix, kNumaPlacementAnnotation,
                    kNumaNodesAnnotation));
  }
  std::optional<int> cells = SmallNumber(it->second);
  if (!cells.has_value() || *cells < 1 || *cells > kMaxCells) {
    return Bad(kNumaNodesAnnotation, it->second,
               fmt::format("is not a number of NUMA nodes (1 to {})", kMaxCells));
  }
  NumaSplitRequest out;
  TOPOLOGYD_ASSIGN_OR_RETURN(out.cpus, CellCpus(pod, *cells, total_cpus));
  TOPOLOGYD_ASSIGN_OR_RETURN(out.memory, CellMemory(pod, *cells, total_memory));
  TOPOLOGYD_ASSIGN_OR_RETURN(out.placement, Placement(pod, *cells, numa));
  return out;
}

}  // namespace topologyd::admission
