#include "tests/support/containerd/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace topologyd::testing::containerd {
namespace {

std::vector<char*> ArgvPointers(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return args;
}

std::string ReadAllFromFd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string FindExecutable(std::string_view name) {
  std::string path = ::getenv("PATH") != nullptr ? ::getenv("PATH") : "";
  // Test runners may start with a user's PATH; containerd and runc live in root's sbin.
  path += ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) {
      return candidate;
    }
  }
  return "";
}

ToolResult RunTool(const std::vector<std::string>& argv, std::chrono::seconds deadline) {
  ToolResult result;
  std::string binary = argv.empty() ? "" : FindExecutable(argv[0]);
  if (binary.empty()) {
    result.output = "not found on PATH: " + (argv.empty() ? std::string("(empty)") : argv[0]);
    return result;
  }
  // A temp file rather than a pipe: a chatty tool can never block on a full pipe.
  char out_name[] = "/tmp/tpd-tool-XXXXXX";
  int out_fd = ::mkstemp(out_name);
  if (out_fd < 0) {
    result.output = "mkstemp failed";
    return result;
  }
  ::unlink(out_name);
  auto args = ArgvPointers(argv);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(binary.c_str(), args.data());
    ::_exit(127);
  }
  if (pid < 0) {
    ::close(out_fd);
    result.output = "fork failed";
    return result;
  }
  auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  bool exited = false;
  while (!(exited = ::waitpid(pid, &status, WNOHANG) == pid) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  result.output = ReadAllFromFd(out_fd);
  ::close(out_fd);
  if (!exited) {
    result.output += "\n(killed: still running after " + std::to_string(deadline.count()) + " s)";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

pid_t SpawnServer(const std::vector<std::string>& argv, const std::string& log_path) {
  auto args = ArgvPointers(argv);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

bool WaitForChild(pid_t pid, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  do {
    pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

void StopChild(pid_t& pid, int sig, std::chrono::seconds patience) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  if (!WaitForChild(pid, patience)) {
    ::kill(pid, SIGKILL);
    WaitForChild(pid, std::chrono::seconds(10));
  }
  pid = -1;
}

}  // namespace topologyd::testing::containerd
