// Running shell commands from tests: the binaries under test (topoctl, hwloc's tools) are
// exercised the way users run them, with stdout and stderr captured separately.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace topologyd::testing {

struct ShellResult {
  int exit_code = -1;  // -1 when the command could not run or was killed by a signal
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh -c. stderr is collected through a temp file, so a command that
// writes a lot to both streams cannot block.
inline ShellResult RunShell(const std::string& command) {
  ShellResult result;
  char err_name[] = "/tmp/topologyd-test-stderr-XXXXXX";
  int err_fd = ::mkstemp(err_name);
  if (err_fd < 0) return result;
  ::close(err_fd);
  FILE* pipe = ::popen(("(" + command + ") 2>" + err_name).c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
    int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_name);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  ::unlink(err_name);
  return result;
}

// `text` as one single-quoted shell word.
inline std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The topoctl binary of this build tree.
inline std::string TopoctlPath() {
  return std::string(TOPOLOGYD_BINARY_DIR) + "/tools/topoctl/topoctl";
}

}  // namespace topologyd::testing
