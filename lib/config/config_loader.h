// Loading topologyd's YAML configuration into a typed Config.
//
// Every problem is reported, not just the first: unknown keys, wrong types and bad values
// each give one line "FILE:LINE: KEY: what is wrong", so an operator fixes a file in one go.
// Nothing here touches the running daemon: callers swap in the result only when it is OK.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

#include "lib/config/config.h"

namespace topologyd::config {

// Parses YAML text: one document, a mapping without duplicate keys (or nothing, for all
// defaults). `file_name` is used in messages only. INVALID_ARGUMENT lists every problem
// found, one per line. Relative paths stay as written (and are checked so).
absl::StatusOr<Config> ParseConfig(std::string_view yaml_text, const std::string& file_name);

// Reads and parses a file; relative paths in it are taken from the file's directory (the
// socket path's length is checked after that). NOT_FOUND / PERMISSION_DENIED etc. when it
// cannot be read; INVALID_ARGUMENT when the path (after symlinks) is a directory or not a
// regular file.
absl::StatusOr<Config> LoadConfigFile(const std::string& path);

// `error`, one problem per line each starting with its configuration key ("KEY: what is
// wrong", as config::BuildNodePolicy reports what the machine refuses), as the loader reports
// its own: "FILE:LINE: KEY: what is wrong" (FILE: `file_name`, as the caller names the file), the
// line that of the key (or of the nearest enclosing key the file sets), in line order. The code is
// kept; OK stays OK.
absl::Status LocateKeyErrors(const Config& config, const absl::Status& error,
                             const std::string& file_name);

// What --check-config reports: every problem of the file at once, in line order. The file is
// read as LoadConfigFile reads it, but past its problems (a bad value keeps its default), and
// `check` runs on what was read (the node policy on the machine: one line per problem, each
// "KEY: what is wrong", as for LocateKeyErrors). OK when neither finds anything; else
// INVALID_ARGUMENT (or the reading error) with one "FILE:LINE: KEY: ..." line per problem.
absl::Status CheckConfigFile(const std::string& path,
                             const std::function<absl::Status(const Config&)>& check);

// The two steps of LoadConfigFile that other configuration files (the shim's) share: reading
// a file that must be a regular file, and taking the single YAML document of its text (a Null
// node when it has none; INVALID_ARGUMENT "FILE:LINE: ..." for a second document or text that
// is not YAML).
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);
absl::StatusOr<YAML::Node> LoadConfigDocument(const std::string& text,
                                              const std::string& file_name);

}  // namespace topologyd::config
