#include "tests/integration/placement_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>

#include "lib/placement/placement_http.h"
#include "tests/integration/process.h"
#include "tests/support/free_port.h"

namespace topologyd::testing {
namespace {

// The scripts start with #!/usr/bin/python3: the Debian modules are in the system Python's
// dist-packages, not in a python3 earlier on PATH.
constexpr char kPython[] = "/usr/bin/python3";
constexpr char kApi[] = "/usr/bin/placement-api";
constexpr char kManage[] = "/usr/bin/placement-manage";

}  // namespace

std::string PlacementMissing() {
  for (const char* path : {kPython, kApi, kManage}) {
    if (!std::filesystem::exists(path)) {
      return std::string(path) +
             " not found: install python3-placement (tools/install-deps.sh test)";
    }
  }
  return "";
}

PlacementServer::~PlacementServer() { Stop(); }

std::string PlacementServer::Start(const std::string& dir) {
  const std::string conf = dir + "/placement.conf";
  WriteFile(conf,
            "[DEFAULT]\ndebug = False\nuse_stderr = True\n"
            "[api]\nauth_strategy = noauth2\n"
            "[placement_database]\nconnection = sqlite:///" +
                dir + "/placement.sqlite\n");
  const CommandResult sync = RunCommand({kPython, kManage, "--config-file", conf, "db", "sync"});
  if (sync.exit_code != 0) return "placement-manage db sync:\n" + sync.out + sync.err;

  const int port = FreeLoopbackPort();
  if (port <= 0) return "no free loopback port";
  url_ = "http://127.0.0.1:" + std::to_string(port);
  log_ = dir + "/placement.log";
  pid_ = ::fork();
  if (pid_ < 0) return "fork failed";
  if (pid_ == 0) {
    const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // placement-api reads only $OS_PLACEMENT_CONFIG_DIR/placement.conf.
    ::setenv("OS_PLACEMENT_CONFIG_DIR", dir.c_str(), 1);
    const std::string port_text = std::to_string(port);
    ::execl(kPython, kPython, kApi, "--host", "127.0.0.1", "--port", port_text.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  absl::StatusOr<placement::CurlPlacementTransport> transport =
      placement::CurlPlacementTransport::Create({.url = url_});
  if (!transport.ok()) return std::string(transport.status().message());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    absl::StatusOr<placement::HttpResponse> r = transport->Send({"GET", "/", std::nullopt}, "");
    if (r.ok() && r->status == 200) return "";
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != 0) {
      pid_ = -1;
      return "placement-api exited:\n" + ReadFile(log_);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return "placement-api not answering:\n" + ReadFile(log_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void PlacementServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void PlacementServer::KeepLog(const std::string& prefix) const {
  if (log_.empty()) return;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string testing_dir = std::string(TOPOLOGYD_BINARY_DIR) + "/Testing";
  const std::string artifact = testing_dir + "/" + prefix + "." + info->name() + ".log";
  std::error_code ec;
  std::filesystem::create_directories(testing_dir, ec);
  std::filesystem::copy_file(log_, artifact, std::filesystem::copy_options::overwrite_existing, ec);
  std::cerr << "Placement server log kept at " << artifact << "\n";
}

}  // namespace topologyd::testing
