// A CpuSet from a test's literal in kernel list syntax ("0-3,8"). The literal is the test's
// own, so it must parse; shared so that test files built as one unit do not redefine it.
#pragma once

#include <string_view>

#include "lib/cpuset/cpuset.h"

namespace topologyd::testing {

inline CpuSet S(std::string_view text) { return *CpuSet::Parse(text); }

}  // namespace topologyd::testing
