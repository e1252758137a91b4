// The Topology Manager's policy name and options and the static CPU policy's options, from a
// fuzzed option map. Input: the first byte sets the CPU option gates (bit 0 alpha, bit 1 beta),
// then lines "name=value". Every piece also goes through the single-value parsers, and
// ParseGoInt is checked against Go's strconv.Atoi grammar with strtoll for the value.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "lib/cpu/policy_options.h"
#include "lib/hints/policy.h"

namespace {

// An optional sign, then one or more decimal digits.
bool IsAtoiSyntax(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

void CheckGoInt(std::string_view text) {
  const absl::StatusOr<int64_t> parsed = topologyd::hints::ParseGoInt(text);
  bool expected_ok = IsAtoiSyntax(text);
  long long expected = 0;
  if (expected_ok) {
    const std::string copy(text);
    errno = 0;
    expected = strtoll(copy.c_str(), nullptr, 10);
    expected_ok = errno == 0;
  }
  if (parsed.ok() != expected_ok || (expected_ok && *parsed != expected)) {
    fprintf(stderr, "ParseGoInt(\"%.*s\"): ok=%d, expected ok=%d\n", static_cast<int>(text.size()),
            text.data(), parsed.ok(), expected_ok);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const topologyd::cpu::PolicyOptionGates gates{.alpha_options = (data[0] & 1) != 0,
                                                .beta_options = (data[0] & 2) != 0};
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::map<std::string, std::string> options;
  while (true) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    const size_t equals = line.find('=');
    const std::string_view name = line.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : line.substr(equals + 1);
    options[std::string(name)] = std::string(value);
    (void)topologyd::hints::ParsePolicy(line);
    (void)topologyd::hints::ParseGoBool(value);
    (void)topologyd::cpu::ParseGoBool(value);
    CheckGoInt(value);
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  (void)topologyd::hints::ParsePolicyOptions(options);
  (void)topologyd::cpu::ParseStaticPolicyOptions(options, gates);
  (void)topologyd::cpu::ValidateNonePolicyOptions(options);
  return 0;
}
