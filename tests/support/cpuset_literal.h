// A CpuSet from a test's literal in kernel list syntax ("0-3,8"). Test data is static, so a
// list that does not parse aborts the test binary, naming the list. Shared so that test files
// built as one unit (CMAKE_UNITY_BUILD) do not each define it.
#pragma once

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/cpuset/cpuset.h"

namespace topologyd::testing {

inline CpuSet S(std::string_view text) {
  absl::StatusOr<CpuSet> set = CpuSet::Parse(text);
  if (!set.ok()) {
    std::cerr << "bad cpu list in test data: " << text << "\n";
    std::abort();
  }
  return *std::move(set);
}

}  // namespace topologyd::testing
