// Test helpers that run the real binaries: a child process with captured output, and a
// running topologyd with its own temp directory, config and socket.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace topologyd::testing {

struct CommandResult {
  int exit_code = -1;  // -1 if killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] with args, optionally with extra environment, waits for it to finish.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {});

std::string TopologydBinary();
std::string TopoctlBinary();

void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

// A topologyd child process.
class DaemonProcess {
 public:
  DaemonProcess() = default;
  ~DaemonProcess();  // SIGKILLs the daemon if still running

  // Starts `topologyd --config config_path`; stderr goes to log_path.
  void Start(const std::string& config_path, const std::string& log_path,
             const std::map<std::string, std::string>& env = {});
  // Waits until `topoctl status` succeeds on `socket` (or the deadline passes).
  bool WaitUntilServing(const std::string& socket, std::chrono::seconds deadline);
  void Signal(int sig);
  // Waits for exit; the exit code, or nullopt on timeout (-1 when killed by a signal).
  std::optional<int> WaitForExit(std::chrono::seconds deadline);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// A cgroup v2 root with the cpuset controller, as the kernel shows it, under `root`.
void MakeFakeCgroupRoot(const std::string& root);

// A config for a simulated 16-CPU machine with everything under `dir`; also lays out the
// fake cgroup root (dir/cgroup) the config names.
std::string MinimalConfig(const std::string& dir, const std::string& extra = "");

}  // namespace topologyd::testing
