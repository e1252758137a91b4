#include "lib/config/duration.h"

#include <cctype>
#include <cmath>

#include "fmt/format.h"

namespace topologyd::config {

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("invalid duration \"{}\": {} (examples: 10s, 1m30s, 500ms)", text, why));
  };
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return bad("empty");
  double total_ns = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (start == i) return bad("expected a number");
    std::string number(text.substr(start, i - start));
    if (number == "." || number.find('.') != number.rfind('.')) return bad("malformed number");
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "µs") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return bad(unit.empty() ? "missing unit" : "unknown unit");
    }
    total_ns += std::stod(number) * scale;
  }
  if (total_ns > 1e18) return bad("too large");
  return std::chrono::milliseconds(static_cast<int64_t>(total_ns / 1e6));
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
