// Go-style durations ("10s", "1m30s", "500ms", "1h"), the syntax kubelet uses for
// durations such as reconcile periods.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topologyd::config {

// Accepts one or more <number><unit> pairs with units ns, us, ms, s, m, h and integer or
// decimal numbers; "0" alone is zero. Negative durations are refused. Sub-millisecond
// remainders are truncated.
absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Shortest exact rendering, e.g. 90000ms -> "1m30s", 1500ms -> "1.5s".
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace topologyd::config
