// A test server in a child process that picks a free port and prints it as the first line of
// its stdout (the python stand-ins under tests/ do): started, its port read, SIGTERM on
// destruction.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace topologyd::testing {

class PortServer {
 public:
  PortServer() = default;
  ~PortServer() { Stop(); }
  PortServer(const PortServer&) = delete;
  PortServer& operator=(const PortServer&) = delete;

  // Runs argv (argv[0] looked up on PATH) and waits up to 10 s for the port. "" when it
  // printed one, else why not.
  std::string Start(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe(out) != 0) return "pipe failed";
    pid_ = ::fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    pollfd p{.fd = out[0], .events = POLLIN, .revents = 0};
    while (line.find('\n') == std::string::npos && ::poll(&p, 1, 10000) == 1) {
      char buffer[64];
      const ssize_t n = ::read(out[0], buffer, sizeof buffer);
      if (n <= 0) break;
      line.append(buffer, static_cast<size_t>(n));
    }
    ::close(out[0]);
    if (line.find('\n') == std::string::npos) return argv[0] + " printed no port";
    port_ = std::stoi(line);
    return "";
  }

  // SIGTERM, then waits for the exit. Safe to call twice.
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace topologyd::testing
