// Errors about one configuration key: "KEY: message". Shared by the config parser and the
// node policy so that both name the key the same way.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace topologyd {

// Prefixes a library error with the config key it concerns, keeping its code.
inline absl::Status KeyError(std::string_view key, const absl::Status& status) {
  return absl::Status(status.code(), fmt::format("{}: {}", key, status.message()));
}

inline absl::Status KeyInvalid(std::string_view key, std::string_view text) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", key, text));
}

}  // namespace topologyd
