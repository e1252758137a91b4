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
