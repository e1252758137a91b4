#include "lib/config/duration.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::config {
namespace {

constexpr int64_t kMaxNanoseconds = std::numeric_limits<int64_t>::max();
constexpr char kOutOfRange[] = "out of range (at most 2562047h47m16.854775807s)";

// Nanoseconds per unit (Go's spellings), or 0 for an unknown unit. Microseconds may be written
// with MICRO SIGN (U+00B5) or GREEK SMALL LETTER MU (U+03BC), in UTF-8, as Go accepts both.
int64_t UnitNanoseconds(std::string_view unit) {
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"ns", 1},         {"us", 1'000},        {"\u00b5s", 1'000},    {"\u03bcs", 1'000},
      {"ms", 1'000'000}, {"s", 1'000'000'000}, {"m", 60'000'000'000}, {"h", 3'600'000'000'000}};
  for (const auto& [name, ns] : kUnits) {
    if (name == unit) return ns;
  }
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The longest run of text[*pos...] whose bytes satisfy `pred`; *pos moves past it.
template <typename Pred>
std::string_view TakeWhile(std::string_view text, size_t* pos, Pred pred) {
  const size_t start = *pos;
  while (*pos < text.size() && pred(text[*pos])) ++*pos;
  return text.substr(start, *pos - start);
}

// `integer`.`fraction` (decimal digits) times `unit_ns`, in whole nanoseconds; nullopt above
// INT64_MAX. Exact for any number of digits: no floating point.
std::optional<int64_t> ScaleToNanoseconds(std::string_view integer, std::string_view fraction,
                                          int64_t unit_ns) {
  int64_t whole = 0;
  for (const char c : integer) {
    if (whole > (kMaxNanoseconds - (c - '0')) / 10) return std::nullopt;
    whole = whole * 10 + (c - '0');
  }
  if (whole > kMaxNanoseconds / unit_ns) return std::nullopt;
  // floor(unit_ns * 0.f1f2...fk), digit by digit from the last: flooring at every step gives
  // the same result, since floor((a + floor(x)) / 10) == floor((a + x) / 10) for integer a.
  int64_t part = 0;
  for (auto it = fraction.rbegin(); it != fraction.rend(); ++it) {
    part = ((*it - '0') * unit_ns + part) / 10;
  }
  if (part > kMaxNanoseconds - whole * unit_ns) return std::nullopt;
  return whole * unit_ns + part;
}

// Reads the <number><unit> term at text[*pos] and moves *pos past it. As in Go, the unit is
// everything up to the next digit or '.'. An error carries the reason only.
absl::StatusOr<int64_t> ReadTerm(std::string_view text, size_t* pos) {
  const std::string_view integer = TakeWhile(text, pos, IsDigit);
  std::string_view fraction;
  if (*pos < text.size() && text[*pos] == '.') {
    ++*pos;
    fraction = TakeWhile(text, pos, IsDigit);
  }
  if (integer.empty() && fraction.empty()) return absl::InvalidArgumentError("expected a number");
  const std::string_view unit =
      TakeWhile(text, pos, [](char c) { return !IsDigit(c) && c != '.'; });
  if (unit.empty()) return absl::InvalidArgumentError("missing unit");
  const int64_t unit_ns = UnitNanoseconds(unit);
  if (unit_ns == 0) {
    return absl::InvalidArgumentError(fmt::format("unknown unit {}", QuoteForMessage(unit)));
  }
  const std::optional<int64_t> ns = ScaleToNanoseconds(integer, fraction, unit_ns);
  if (!ns) return absl::InvalidArgumentError(kOutOfRange);
  return *ns;
}

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format(
      "invalid duration {}: {} (examples: 10s, 1m30s, 500ms)", QuoteForMessage(text), why));
}

}  // namespace

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  // As in Go, one sign may lead and "0" needs no unit ("-0" and "+0s" are zero too).
  const bool negative = !text.empty() && text.front() == '-';
  const size_t start = !text.empty() && (text.front() == '-' || text.front() == '+') ? 1 : 0;
  if (text.substr(start) == "0") return std::chrono::milliseconds(0);
  if (text.size() == start) return Invalid(text, "empty");
  int64_t total_ns = 0;
  size_t pos = start;
  while (pos < text.size()) {
    const absl::StatusOr<int64_t> ns = ReadTerm(text, &pos);
    if (!ns.ok()) return Invalid(text, std::string(ns.status().message()));
    if (*ns > kMaxNanoseconds - total_ns) return Invalid(text, kOutOfRange);
    total_ns += *ns;
  }
  if (negative && total_ns > 0) return Invalid(text, "negative durations are not allowed");
  return std::chrono::milliseconds(total_ns / 1'000'000);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  int64_t hours = ms / 3'600'000;
  ms %= 3'600'000;
  int64_t minutes = ms / 60'000;
  ms %= 60'000;
  if (hours) out += fmt::format("{}h", hours);
  if (minutes) out += fmt::format("{}m", minutes);
  if (ms) {
    if (ms % 1000 == 0) {
      out += fmt::format("{}s", ms / 1000);
    } else if (ms < 1000 && out.empty()) {
      out += fmt::format("{}ms", ms);
    } else {
      std::string frac = fmt::format("{:03d}", ms % 1000);
      while (frac.back() == '0') frac.pop_back();
      out += fmt::format("{}.{}s", ms / 1000, frac);
    }
  }
  return out;
}

}  // namespace topologyd::config
