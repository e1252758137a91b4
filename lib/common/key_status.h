// Errors about one configuration key: "KEY: message". Shared by the config parser and the
// node policy so that both name the key the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace topologyd {

// Prefixes a library error with the config key it concerns, keeping its code.
inline absl::Status KeyError(std::string_view key, const absl::Status& status) {
  return absl::Status(status.code(), fmt::format("{}: {}", key, status.message()));
}

inline absl::Status KeyInvalid(std::string_view key, std::string_view text) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", key, text));
}

// The problems of keys checked each on its own, so that one run names them all: one line per
// problem, the shape config::LocateKeyErrors gives a line number to.
class KeyProblems {
 public:
  // Notes `status` when it is an error.
  void Add(const absl::Status& status) {
    if (status.ok()) return;
    if (lines_.empty()) first_code_ = status.code();
    lines_.emplace_back(status.message());
  }
  bool empty() const { return lines_.empty(); }
  // OK when nothing was noted; else `code` (by default the first problem's) with every line.
  absl::Status ToStatus(std::optional<absl::StatusCode> code = std::nullopt) const {
    if (lines_.empty()) return absl::OkStatus();
    return absl::Status(code.value_or(first_code_), fmt::format("{}", fmt::join(lines_, "\n")));
  }

 private:
  std::vector<std::string> lines_;
  absl::StatusCode first_code_ = absl::StatusCode::kOk;
};

}  // namespace topologyd
