// The arrivals of a simulated workload: Pod manifests (templates) repeated, ordered and given
// unique identities, each with an optional lifetime after which the simulation releases it.
// A run is a pure function of the templates and these options, so the same seed gives the
// same arrivals on every machine this binary runs on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/pod/pod.h"

namespace topologyd::simulate {

// A pod's lifetime in the simulation: released just before the K-th arrival after its own is
// decided ("1" = gone before the next pod arrives). Overrides --release-after for that pod.
inline constexpr std::string_view kLifetimeAnnotation = "topologyd.io/simulate-lifetime";

enum class Order { kGiven, kShuffle };

struct WorkloadOptions {
  int repeat = 1;  // every template this many times (copies follow each other before ordering)
  Order order = Order::kGiven;
  uint64_t seed = 0;  // kShuffle only
  // Lifetime of pods without the annotation, in arrivals; nullopt = they stay to the end.
  std::optional<int> release_after;
};

struct Arrival {
  pod::Pod pod;                 // uid "sim-<n>" (n = position in arrival order), unique name
  std::optional<int> lifetime;  // in arrivals; nullopt = held to the end
};

// The arrivals of `templates` under `options`. Copy r > 0 of a template is named
// "<name>-<r>"; uids are "sim-00000", "sim-00001", ... in arrival order. INVALID_ARGUMENT for
// repeat < 1, release_after < 1, or a lifetime annotation that is not a whole number >= 1
// (naming the pod).
absl::StatusOr<std::vector<Arrival>> BuildArrivals(const std::vector<pod::Pod>& templates,
                                                   const WorkloadOptions& options);

// Fisher-Yates with a 64-bit Mersenne Twister, written out rather than std::shuffle, whose
// sequence the standard leaves to each library: the permutation of 0..n-1 for `seed`.
std::vector<size_t> ShuffledIndices(size_t n, uint64_t seed);

}  // namespace topologyd::simulate
