#include "lib/hints/policy.h"

#include <cstdint>
#include <limits>

#include "fmt/format.h"

namespace topologyd::hints {

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kNone:
      return "none";
    case Policy::kBestEffort:
      return "best-effort";
    case Policy::kRestricted:
      return "restricted";
    case Policy::kSingleNumaNode:
      return "single-numa-node";
  }
  return "none";
}

absl::StatusOr<Policy> ParsePolicy(std::string_view name) {
  for (Policy p :
       {Policy::kNone, Policy::kBestEffort, Policy::kRestricted, Policy::kSingleNumaNode}) {
    if (name == PolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(fmt::format("unknown policy: {}", GoQuote(name)));
}

std::string GoQuote(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        // Bytes >= 0x80 are passed through: Go keeps printable UTF-8 as is.
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

absl::StatusOr<bool> ParseGoBool(std::string_view text) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return false;
  }
  return absl::InvalidArgumentError(
      fmt::format("strconv.ParseBool: parsing {}: invalid syntax", GoQuote(text)));
}

absl::StatusOr<int64_t> ParseGoInt(std::string_view text) {
  auto syntax = [&] {
    return absl::InvalidArgumentError(
        fmt::format("strconv.Atoi: parsing {}: invalid syntax", GoQuote(text)));
  };
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return syntax();
  // Accumulate as a negative number so that INT64_MIN is representable.
  int64_t value = 0;
  bool overflow = false;
  for (char c : digits) {
    if (c < '0' || c > '9') return syntax();
    int d = c - '0';
    if (value < (std::numeric_limits<int64_t>::min() + d) / 10) overflow = true;
    if (!overflow) value = value * 10 - d;
  }
  if (!overflow && !negative && value == std::numeric_limits<int64_t>::min()) overflow = true;
  if (overflow) {
    return absl::InvalidArgumentError(
        fmt::format("strconv.Atoi: parsing {}: value out of range", GoQuote(text)));
  }
  return negative ? value : -value;
}

absl::StatusOr<PolicyOptions> ParsePolicyOptions(
    const std::map<std::string, std::string>& options) {
  static constexpr std::string_view kPreferClosest = "prefer-closest-numa-nodes";
  static constexpr std::string_view kMaxAllowable = "max-allowable-numa-nodes";
  PolicyOptions parsed;
  for (const auto& [name, value] : options) {
    if (name == kPreferClosest) {
      absl::StatusOr<bool> b = ParseGoBool(value);
      if (!b.ok()) {
        return absl::InvalidArgumentError(fmt::format("bad value for option {}: {}", GoQuote(name),
                                                      std::string(b.status().message())));
      }
      parsed.prefer_closest_numa_nodes = *b;
    } else if (name == kMaxAllowable) {
      absl::StatusOr<int64_t> n = ParseGoInt(value);
      if (!n.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("unable to convert policy option to integer {}: {}", GoQuote(name),
                        std::string(n.status().message())));
      }
      if (*n < kKubeletDefaultMaxAllowableNumaNodes) {
        return absl::InvalidArgumentError(
            fmt::format("the minimum value of {} should not be less than {}", GoQuote(name),
                        kKubeletDefaultMaxAllowableNumaNodes));
      }
      parsed.max_allowable_numa_nodes = *n > std::numeric_limits<int>::max()
                                            ? std::numeric_limits<int>::max()
                                            : static_cast<int>(*n);
    } else {
      return absl::InvalidArgumentError(
          fmt::format("unknown Topology Manager Policy option: {}", GoQuote(name)));
    }
  }
  return parsed;
}

absl::Status CheckNumaNodeLimit(int num_nodes, Policy policy, const PolicyOptions& options) {
  if (policy == Policy::kNone || num_nodes <= options.max_allowable_numa_nodes) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(fmt::format(
      "unsupported on machines with more than {} NUMA Nodes", options.max_allowable_numa_nodes));
}

bool Admits(Policy policy, bool preferred) {
  return policy == Policy::kNone || policy == Policy::kBestEffort || preferred;
}

}  // namespace topologyd::hints
