#include "tests/integration/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace topologyd::testing {
namespace {

std::string DrainFd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

[[noreturn]] void ExecWithEnv(const std::vector<std::string>& argv,
                              const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env) {
  // Output goes to temp files rather than pipes, so a chatty child can never block.
  char out_name[] = "/tmp/topologyd-test-out-XXXXXX";
  char err_name[] = "/tmp/topologyd-test-err-XXXXXX";
  int out_fd = ::mkstemp(out_name);
  int err_fd = ::mkstemp(err_name);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ExecWithEnv(argv, env);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  ::lseek(out_fd, 0, SEEK_SET);
  ::lseek(err_fd, 0, SEEK_SET);
  result.out = DrainFd(out_fd);
  result.err = DrainFd(err_fd);
  ::close(out_fd);
  ::close(err_fd);
  ::unlink(out_name);
  ::unlink(err_name);
  return result;
}

std::string TopologydBinary() { return std::string(TOPOLOGYD_BINARY_DIR) + "/daemon/topologyd"; }
std::string TopoctlBinary() { return std::string(TOPOLOGYD_BINARY_DIR) + "/tools/topoctl/topoctl"; }

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  out << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void DaemonProcess::Start(const std::string& config_path, const std::string& log_path,
                          const std::map<std::string, std::string>& env) {
  pid_ = ::fork();
  if (pid_ == 0) {
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(log, 2);
    ::dup2(log, 1);
    ExecWithEnv({TopologydBinary(), "--config", config_path}, env);
  }
}

bool DaemonProcess::WaitUntilServing(const std::string& socket, std::chrono::seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;  // it died
      return false;
    }
    if (std::filesystem::exists(socket) &&
        RunCommand({TopoctlBinary(), "--socket", socket, "status"}).exit_code == 0) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void DaemonProcess::Signal(int sig) {
  // Once the daemon has been reaped pid_ is -1, and kill(-1, sig) would signal every process.
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> DaemonProcess::WaitForExit(std::chrono::seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

void MakeFakeCgroupRoot(const std::string& root) {
  std::filesystem::create_directories(root);
  WriteFile(root + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  WriteFile(root + "/cgroup.subtree_control", "cpuset\n");
  WriteFile(root + "/cgroup.procs", "");
  WriteFile(root + "/cpuset.cpus", "0-15\n");
  WriteFile(root + "/cpuset.mems", "0-1\n");
  WriteFile(root + "/cpuset.cpus.effective", "0-15\n");
}

std::string MinimalConfig(const std::string& dir, const std::string& extra) {
  MakeFakeCgroupRoot(dir + "/cgroup");
  return "listen: unix://" + dir + "/topologyd.sock\n" +
         "allowedPeers: {uids: [0], sameUser: true}\n"
         "stateDir: " +
         dir + "/state\n" +
         "topology: {source: synthetic, description: \"pack:2 numa:1 core:4 pu:2\"}\n"
         "cpuManagerPolicy: static\n"
         "reservedSystemCPUs: \"0\"\n"
         "topologyManagerPolicy: best-effort\n"
         "cgroup: {root: " +
         dir + "/cgroup, driver: cgroupfs, version: v2, apply: false}\n" + extra;
}

}  // namespace topologyd::testing
