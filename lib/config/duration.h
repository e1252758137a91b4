// Go-style durations ("10s", "1m30s", "500ms", "1h"), the syntax kubelet uses for
// durations such as reconcile periods.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topologyd::config {

// Go's time.ParseDuration: an optional sign, then one or more <number><unit> pairs, the
// number decimal ("10", "1.5", ".5", "5.") and the unit one of ns, us, µs (U+00B5), μs
// (U+03BC), ms, s, m, h; "0" alone is zero. Negative durations are refused ("-0s" is zero). The
// arithmetic is exact in nanoseconds (a fraction finer than 1ns is dropped, as Go does), and more
// than INT64_MAX nanoseconds (about 2562047h) is "out of range". The result is then truncated to
// whole milliseconds: "1.001s" is 1001ms, "1500us" 1ms, "999us" 0ms. INVALID_ARGUMENT quotes the
// text.
absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Shortest exact rendering, e.g. 90000ms -> "1m30s", 1500ms -> "1.5s". For every d from 0 to
// the largest parseable duration, ParseDuration(FormatDuration(d)) == d.
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace topologyd::config
