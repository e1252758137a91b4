#include "lib/simulate/workload.h"

#include <charconv>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/absl_fmt.h"

namespace topologyd::simulate {
namespace {

absl::StatusOr<std::optional<int>> Lifetime(const pod::Pod& pod,
                                            const std::optional<int>& fallback) {
  auto it = pod.annotations.find(std::string(kLifetimeAnnotation));
  if (it == pod.annotations.end()) return fallback;
  const std::string& text = it->second;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return absl::InvalidArgumentError(
        fmt::format("pod {}/{}: annotation {}: \"{}\" is not a whole number of arrivals >= 1",
                    pod.namespace_name, pod.name, kLifetimeAnnotation, text));
  }
  return std::optional<int>(value);
}

}  // namespace

std::vector<size_t> ShuffledIndices(size_t n, uint64_t seed) {
  std::vector<size_t> index(n);
  for (size_t i = 0; i < n; ++i) index[i] = i;
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) {
    // The modulo bias (below 2^-40 for any workload that fits in memory) does not matter here;
    // being the same everywhere does.
    const size_t j = static_cast<size_t>(rng() % i);
    std::swap(index[i - 1], index[j]);
  }
  return index;
}

absl::StatusOr<std::vector<Arrival>> BuildArrivals(const std::vector<pod::Pod>& templates,
                                                   const WorkloadOptions& options) {
  if (options.repeat < 1) {
    return absl::InvalidArgumentError(fmt::format("--repeat {}: must be >= 1", options.repeat));
  }
  if (options.release_after && *options.release_after < 1) {
    return absl::InvalidArgumentError(
        fmt::format("--release-after {}: must be >= 1", *options.release_after));
  }
  std::vector<Arrival> given;
  given.reserve(templates.size() * static_cast<size_t>(options.repeat));
  for (const pod::Pod& t : templates) {
    absl::StatusOr<std::optional<int>> lifetime = Lifetime(t, options.release_after);
    if (!lifetime.ok()) return lifetime.status();
    for (int r = 0; r < options.repeat; ++r) {
      Arrival a{t, *lifetime};
      if (r > 0) a.pod.name = fmt::format("{}-{}", t.name, r);
      given.push_back(std::move(a));
    }
  }
  std::vector<Arrival> out;
  if (options.order == Order::kShuffle) {
    out.reserve(given.size());
    for (size_t i : ShuffledIndices(given.size(), options.seed)) out.push_back(given[i]);
  } else {
    out = std::move(given);
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].pod.uid = fmt::format("sim-{:05d}", i);
  return out;
}

}  // namespace topologyd::simulate
