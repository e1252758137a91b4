// How topoctl reports a failure: one prefix for every command, `topoctl: COMMAND: MESSAGE`
// (COMMAND as typed, "placement sync" for a nested one), on stderr, and the exit code that
// goes with it (command.h); and reading an input file so that the message says why not.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace topoctl {

// Prints "topoctl: COMMAND: MESSAGE" and a newline on stderr; returns `code`.
int Fail(std::string_view command, int code, std::string_view message);

// The bytes of `path`, or of stdin for "-". `what` names what the file should hold ("a Pod
// manifest") for the message when it is empty. Errors start with the file ("<stdin>" for
// "-"): the system's reason when it cannot be read (NOT_FOUND, PERMISSION_DENIED, ...),
// INVALID_ARGUMENT for a directory or empty input.
absl::StatusOr<std::string> ReadInputFile(const std::string& path, std::string_view what);

}  // namespace topoctl
