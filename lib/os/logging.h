// Logging setup: spdlog's default logger writes to stderr (journald captures it under
// systemd) in text or JSON-lines format. Reconfiguring at run time (SIGHUP) is safe while
// other threads log.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace topologyd::os {

// `level`: trace|debug|info|warn|error|critical|off; `format`: text|json.
absl::Status ConfigureLogging(const std::string& level, const std::string& format);

}  // namespace topologyd::os
