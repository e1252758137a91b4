// Child processes for the containerd harness: tools run to completion with a deadline, and a
// long-running server (containerd) whose output goes to a log file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace topologyd::testing::containerd {

struct ToolResult {
  int exit_code = -1;  // -1 when killed (by a signal or at the deadline) or not started
  std::string output;  // stdout and stderr interleaved
};

// Runs argv (argv[0] looked up on PATH) and waits up to `deadline`; past it the child is
// SIGKILLed and the output says so.
ToolResult RunTool(const std::vector<std::string>& argv, std::chrono::seconds deadline);

// The absolute path of `name` on PATH (or /usr/sbin, /sbin: root's tools), or "" if none.
std::string FindExecutable(std::string_view name);

// The whole of a file (a server's log, a /proc entry); "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

// The last `bytes` of `text`, marked with "..." when cut: a log's end for a failure message.
std::string Tail(const std::string& text, size_t bytes);

// Starts argv[0] (an absolute path) with stdout and stderr appended to `log_path`. The child
// gets SIGTERM if this thread exits first, so a test killed mid-way does not leave it
// serving. Returns -1 when fork fails.
pid_t SpawnServer(const std::vector<std::string>& argv, const std::string& log_path);

// Waits up to `deadline` for `pid` (a child) to exit; true if it did (and was reaped).
bool WaitForChild(pid_t pid, std::chrono::milliseconds deadline);

// Sends `sig` to the child `pid` (nothing when it is not positive), SIGKILL when it has not
// exited after `patience`, reaps it and sets `pid` to -1.
void StopChild(pid_t& pid, int sig, std::chrono::seconds patience = std::chrono::seconds(10));

}  // namespace topologyd::testing::containerd
