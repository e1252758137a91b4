// Tests against real components (containerd, kubelet, Prometheus, Placement, ...) skip with the
// reason when one is missing on a developer's machine. The test command sets
// TOPOLOGYD_REQUIRE_COMPONENTS=1 (tools/quickstart.sh test, unless told otherwise), and then a
// missing component fails the test instead: CI must not pass by running nothing.
#pragma once

#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

namespace topologyd::testing {

inline bool ComponentsRequired() {
  const char* value = std::getenv("TOPOLOGYD_REQUIRE_COMPONENTS");
  return value != nullptr && std::string_view(value) == "1";
}

// The recorded-machine corpus (TOPOLOGYD_SHARED_TOPOLOGIES, beside the checkout) is required
// the same way, by its own switch: the test command sets TOPOLOGYD_REQUIRE_CORPUS=1 unless told
// to run without it, and the corpus, property and differential tests then fail without it.
inline bool CorpusRequired() {
  const char* value = std::getenv("TOPOLOGYD_REQUIRE_CORPUS");
  return value != nullptr && std::string_view(value) == "1";
}

inline const char* MissingComponentHeader() {
  return ComponentsRequired()
             ? "A component this test needs is missing (TOPOLOGYD_REQUIRE_COMPONENTS=1)"
             : "Skipped";
}

}  // namespace topologyd::testing

// Used as GTEST_SKIP(): `SKIP_OR_FAIL() << reason;` skips the test, or fails it when components
// are required. Returns from the calling function either way.
#define SKIP_OR_FAIL()                                                  \
  return GTEST_MESSAGE_(::topologyd::testing::MissingComponentHeader(), \
                        ::topologyd::testing::ComponentsRequired()      \
                            ? ::testing::TestPartResult::kFatalFailure  \
                            : ::testing::TestPartResult::kSkip)

// As SKIP_OR_FAIL(), for a test that reads the recorded-machine corpus.
#define CORPUS_SKIP_OR_FAIL()                                                            \
  return GTEST_MESSAGE_(                                                                 \
      ::topologyd::testing::CorpusRequired() ? "The recorded-machine corpus is missing " \
                                               "(TOPOLOGYD_REQUIRE_CORPUS=1)"            \
                                             : "Skipped",                                \
      ::topologyd::testing::CorpusRequired() ? ::testing::TestPartResult::kFatalFailure  \
                                             : ::testing::TestPartResult::kSkip)
