// Randomized differential tests: Merge() and MergeWithin() against the brute-force reference on
// every policy, option and list shape kubelet distinguishes, the reach engines against each
// other on machines too large for the brute force, and merges under tight limits, which must
// give the same answer or none.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

#include "lib/hints/expand.h"
#include "lib/hints/merge.h"
#include "lib/hints/merge_internal.h"
#include "tests/unit/hints/reference_merge.h"

namespace topologyd::hints {
namespace {

using internal::MergeWithEngineForTest;
using internal::MergeWithinForTest;
using internal::ReachEngine;

std::string Describe(const TopologyHint& h) {
  std::string s = "{";
  if (!h.affinity) {
    s += "nil";
  } else {
    s += "[";
    for (int id : h.affinity->Ids()) s += std::to_string(id) + " ";
    s += "]";
  }
  return s + (h.preferred ? ", true}" : ", false}");
}

std::string Describe(const MergeResult& r) {
  return Describe(r.hint) + (r.admit ? " admit" : " reject");
}

std::string Describe(const MergeInput& in) {
  std::string s = "nodes=" + std::to_string(in.num_nodes) +
                  " policy=" + std::string(PolicyName(in.policy)) +
                  " closest=" + (in.options.prefer_closest_numa_nodes ? "1" : "0") + "\n";
  for (const ProviderHints& p : in.providers) {
    if (!p) {
      s += "  provider: null\n";
      continue;
    }
    s += "  provider:\n";
    for (const auto& [name, list] : *p) {
      s += "    " + name + ": ";
      if (!list) {
        s += "null\n";
        continue;
      }
      if (list->upward_closed) s += "up(" + std::to_string(list->universe.bits()) + ") ";
      for (const TopologyHint& h : list->hints) s += Describe(h) + " ";
      s += "\n";
    }
  }
  return s;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  uint64_t RandomSubset(uint64_t of) {
    uint64_t m = 0;
    for (uint64_t rest = of; rest != 0; rest &= rest - 1) {
      if (Chance(0.5)) m |= rest & (~rest + 1);
    }
    return m;
  }

  uint64_t RandomNonEmptySubset(uint64_t of) {
    if (of == 0) return 0;
    uint64_t m = 0;
    while (m == 0) m = RandomSubset(of);
    return m;
  }

  uint64_t Mask() {
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.45 && !pool_.empty())
      return pool_[static_cast<size_t>(Uniform(0, int(pool_.size()) - 1))];
    if (r < 0.50) return 0;  // a legal empty mask; counts 0 for the narrowest size
    uint64_t m = RandomNonEmptySubset(default_);
    // Now and then a node beyond the machine: cut by the AND, counted for k.
    if (r > 0.97 && num_nodes_ < 62) m |= uint64_t{1} << (num_nodes_ + Uniform(0, 1));
    return m;
  }

  TopologyHint Hint() {
    TopologyHint h;
    if (!Chance(0.15)) h.affinity = NumaMask(Mask());
    h.preferred = Chance(0.5);
    return h;
  }

  ResourceHints UpwardClosed() {
    ResourceHints rh;
    rh.upward_closed = true;
    rh.universe = NumaMask(Chance(0.8) ? default_ : RandomSubset(default_ | (default_ << 1)));
    int n = Uniform(0, 3);
    for (int i = 0; i < n; ++i) {
      TopologyHint h;
      double r = std::uniform_real_distribution<double>(0, 1)(rng_);
      if (r < 0.05) {
        // nil entries describe nothing
      } else if (r < 0.10) {
        h.affinity = NumaMask(0);
      } else if (r < 0.50 && !pool_.empty()) {
        h.affinity = NumaMask(pool_[static_cast<size_t>(Uniform(0, int(pool_.size()) - 1))]);
      } else {
        h.affinity = NumaMask(RandomNonEmptySubset(rh.universe.bits()));
      }
      h.preferred = Chance(0.6);
      rh.hints.push_back(h);
    }
    return rh;
  }

  MergeInput Input(int min_nodes, int max_nodes, int max_providers) {
    MergeInput in;
    in.num_nodes = Uniform(min_nodes, max_nodes);
    num_nodes_ = in.num_nodes;
    default_ = NumaMask::FirstN(in.num_nodes).bits();
    pool_.clear();
    for (int i = Uniform(1, 4); i > 0; --i) pool_.push_back(RandomNonEmptySubset(default_));
    in.policy = static_cast<Policy>(Uniform(0, 3));
    in.options.prefer_closest_numa_nodes = Chance(0.5);
    // Few distinct distances, so that equal averages (and the integer tie-break) happen.
    static constexpr double kDistances[] = {11, 12, 20, 21, 30};
    in.distances.assign(static_cast<size_t>(in.num_nodes),
                        std::vector<double>(static_cast<size_t>(in.num_nodes), 10));
    bool symmetric = Chance(0.8);
    for (int i = 0; i < in.num_nodes; ++i) {
      for (int j = symmetric ? i + 1 : 0; j < in.num_nodes; ++j) {
        if (i == j) continue;
        double d = kDistances[Uniform(0, 4)];
        in.distances[size_t(i)][size_t(j)] = d;
        if (symmetric) in.distances[size_t(j)][size_t(i)] = d;
      }
    }
    int providers = Uniform(0, max_providers);
    for (int p = 0; p < providers; ++p) {
      double r = std::uniform_real_distribution<double>(0, 1)(rng_);
      if (r < 0.12) {
        in.providers.emplace_back(std::nullopt);
        continue;
      }
      std::map<std::string, HintList> resources;
      if (r > 0.20) {
        int n = Uniform(1, 3);
        for (int i = 0; i < n; ++i) {
          std::string name = "r" + std::to_string(i);
          double q = std::uniform_real_distribution<double>(0, 1)(rng_);
          if (q < 0.12) {
            resources[name] = std::nullopt;
          } else if (q < 0.20) {
            resources[name] = ResourceHints{};
          } else if (q < 0.40) {
            resources[name] = UpwardClosed();
          } else {
            ResourceHints rh;
            for (int h = Uniform(1, 5); h > 0; --h) rh.hints.push_back(Hint());
            resources[name] = rh;
          }
        }
      }
      in.providers.emplace_back(std::move(resources));
    }
    return in;
  }

 private:
  std::mt19937_64 rng_;
  int num_nodes_ = 0;
  uint64_t default_ = 0;
  std::vector<uint64_t> pool_;
};

TEST(MergeDifferentialTest, EqualsBruteForceOnRandomInputs) {
  constexpr int kCases = 100000;
  constexpr double kMaxPermutations = 800;
  Generator gen(20240611);
  int compared = 0;
  int preferred_results = 0;
  int disagreements = 0;
  for (int attempt = 0; compared < kCases; ++attempt) {
    MergeInput in = gen.Input(1, 6, 6);
    if (reference::PermutationCount(in) > kMaxPermutations) continue;
    ++compared;
    MergeResult want = reference::ReferenceMerge(in);
    preferred_results += want.hint.preferred;
    // Merge() itself, and every other case each forced engine on its own.
    const ReachEngine forced = compared % 2 ? ReachEngine::kSparse : ReachEngine::kDense;
    for (ReachEngine engine : {ReachEngine::kAuto, forced}) {
      MergeResult got = MergeWithEngineForTest(in, engine);
      // The bounded form under the production limits, on the same engine.
      absl::StatusOr<MergeResult> bounded =
          MergeWithinForTest(in, MergeLimits(), engine, /*stats=*/nullptr);
      if (!bounded.ok() || *bounded != want) {
        ++disagreements;
        if (disagreements <= 5) {
          ADD_FAILURE() << "bounded, engine " << static_cast<int>(engine) << ": "
                        << (bounded.ok() ? Describe(*bounded) : bounded.status().ToString())
                        << " want " << Describe(want) << "\n"
                        << Describe(in);
        }
      }
      if (got != want) {
        ++disagreements;
        if (disagreements <= 5) {
          ADD_FAILURE() << "engine " << static_cast<int>(engine) << " got " << Describe(got)
                        << " want " << Describe(want) << "\n"
                        << Describe(in);
        }
      }
    }
  }
  EXPECT_EQ(disagreements, 0);
  // The generator must exercise both phases of the merge.
  EXPECT_GT(preferred_results, kCases / 10);
  EXPECT_LT(preferred_results, kCases * 9 / 10);
}

TEST(MergeDifferentialTest, UpwardClosedListsEqualTheirExpansionOnLargerMachines) {
  // Up to 12 nodes: the expanded lists are merged by the same library (already checked
  // against the brute force above), the compact ones through the interval path.
  Generator gen(7);
  for (int i = 0; i < 3000; ++i) {
    MergeInput compact = gen.Input(7, 12, 4);
    MergeInput expanded = compact;
    for (ProviderHints& p : expanded.providers) {
      if (!p) continue;
      for (auto& [name, list] : *p) {
        if (list && list->upward_closed) list = ResourceHints{Expand(*list), false, NumaMask()};
      }
    }
    const MergeResult want = Merge(expanded);
    ASSERT_EQ(Merge(compact), want) << Describe(compact);
    ASSERT_EQ(MergeWithin(compact).value_or(MergeResult{}), want) << Describe(compact);
    ASSERT_EQ(MergeWithin(expanded).value_or(MergeResult{}), want) << Describe(compact);
  }
}

TEST(MergeDifferentialTest, SparseAndDenseReachAgreeOnLargerMachines) {
  Generator gen(11);
  for (int i = 0; i < 2000; ++i) {
    MergeInput in = gen.Input(7, 16, 6);
    MergeResult sparse = MergeWithEngineForTest(in, ReachEngine::kSparse);
    ASSERT_EQ(sparse, MergeWithEngineForTest(in, ReachEngine::kDense)) << Describe(in);
    ASSERT_EQ(sparse, MergeWithEngineForTest(in, ReachEngine::kAuto)) << Describe(in);
    ASSERT_EQ(MergeWithin(in).value_or(MergeResult{}), sparse) << Describe(in);
  }
  // Dozens of lists: the dense engine's exact counts would pass 2^64 and must be reset.
  for (int i = 0; i < 300; ++i) {
    MergeInput in = gen.Input(7, 12, 40);
    MergeResult sparse = MergeWithEngineForTest(in, ReachEngine::kSparse);
    ASSERT_EQ(sparse, MergeWithEngineForTest(in, ReachEngine::kDense)) << Describe(in);
  }
}

// Limits change whether there is an answer, never which: with the steps an input needs it is
// answered, and under any tighter limits it is answered identically or not at all.
TEST(MergeDifferentialTest, LimitsNeverChangeTheAnswer) {
  Generator gen(13);
  std::mt19937_64 rng(17);
  int refused = 0;
  int answered = 0;
  for (int i = 0; i < 3000; ++i) {
    MergeInput in = gen.Input(1, 16, 6);
    const ReachEngine engine = static_cast<ReachEngine>(i % 3);
    const MergeResult want = MergeWithEngineForTest(in, engine);
    internal::MergeStats need;
    ASSERT_TRUE(MergeWithinForTest(in, MergeLimits::Unlimited(), engine, &need).ok());
    // Exactly the steps it needs. (A mask limit below 4x the reachable sets makes the sparse
    // engine deduplicate more often, which costs steps; the masks here leave that room.)
    const uint64_t room = std::max<uint64_t>(4 * need.peak_masks, uint64_t{1} << 16);
    absl::StatusOr<MergeResult> exact = MergeWithinForTest(in, {room, need.steps}, engine, nullptr);
    ASSERT_TRUE(exact.ok()) << exact.status() << "\n" << Describe(in);
    ASSERT_EQ(*exact, want) << Describe(in);
    const MergeLimits tight{need.peak_masks == 0 ? 0 : rng() % need.peak_masks,
                            need.steps == 0 ? 0 : rng() % need.steps};
    absl::StatusOr<MergeResult> r = MergeWithinForTest(in, tight, engine, nullptr);
    if (r.ok()) {
      ++answered;
      ASSERT_EQ(*r, want) << Describe(in);
    } else {
      ++refused;
      ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
    }
  }
  // Both outcomes happen (tighter mask limits can still be answered by the sparse engine).
  EXPECT_GT(refused, 100);
  EXPECT_GT(answered, 100);
}

TEST(MergeDifferentialTest, ResultDoesNotDependOnProviderOrder) {
  Generator gen(3);
  std::mt19937_64 shuffle(5);
  for (int i = 0; i < 5000; ++i) {
    MergeInput in = gen.Input(1, 8, 6);
    MergeInput shuffled = in;
    std::shuffle(shuffled.providers.begin(), shuffled.providers.end(), shuffle);
    ASSERT_EQ(Merge(in), Merge(shuffled)) << Describe(in);
  }
}

}  // namespace
}  // namespace topologyd::hints
