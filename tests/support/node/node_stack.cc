#include "tests/support/node/node_stack.h"

#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/subprocess.h"

#include "cri/v1/runtime.grpc.pb.h"

namespace topologyd::testing {
namespace {

using containerd::CriChannel;
using containerd::SocketAccepts;
using containerd::SpawnServer;
using containerd::WaitForChild;
using std::chrono::seconds;

std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// How often `needle` occurs in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

std::string BuiltNriPlugin() {
#ifdef TOPOLOGYD_NRI_BINARY
  return TOPOLOGYD_NRI_BINARY;
#else
  return "";
#endif
}

bool PollUntil(const std::function<bool()>& done, std::chrono::seconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

absl::Status ServerProcess::Start(const std::vector<std::string>& argv,
                                  const std::string& log_path) {
  pid_ = SpawnServer(argv, log_path);
  if (pid_ < 0) return absl::InternalError("cannot start " + argv[0]);
  return absl::OkStatus();
}

void ServerProcess::Stop(int sig) {
  if (pid_ <= 0) return;
  ::kill(pid_, sig);
  if (!WaitForChild(pid_, seconds(10))) {
    ::kill(pid_, SIGKILL);
    WaitForChild(pid_, seconds(10));
  }
  pid_ = -1;
}

bool ServerProcess::alive() { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

NodeStack::NodeStack(std::string dir, std::string runtime_socket, NodeStackOptions options)
    : dir_(std::move(dir)),
      runtime_socket_(std::move(runtime_socket)),
      options_(std::move(options)) {
  if (options_.topologyd_binary.empty()) {
    options_.topologyd_binary = std::string(TOPOLOGYD_BINARY_DIR) + "/daemon/topologyd";
  }
  if (options_.shim_binary.empty()) {
    options_.shim_binary = std::string(TOPOLOGYD_BINARY_DIR) + "/shim/topologyd-shim";
  }
  Write(dir_ + "/topologyd.yaml",
        "listen: unix://" + topologyd_socket() + "\nallowedPeers: {uids: [0]}\nstateDir: " + dir_ +
            "/state\n"
            "topology: {source: live}\n"
            "cgroup: {root: /sys/fs/cgroup/cpuset, driver: cgroupfs, version: v1, apply: true}\n"
            "reconcilePeriod: 1s\n" +
            options_.topologyd_policy);
  Write(dir_ + "/shim.yaml", options_.shim_config);
  if (options_.nri_binary.empty()) options_.nri_binary = BuiltNriPlugin();
  Write(dir_ + "/nri.yaml", options_.nri_config);
}

absl::Status NodeStack::Start() {
  if (absl::Status s = StartTopologyd(); !s.ok()) return s;
  return StartShim();
}

absl::Status NodeStack::StartTopologyd() {
  const std::string log = dir_ + "/topologyd.log";
  if (absl::Status s =
          topologyd_.Start({options_.topologyd_binary, "--config", dir_ + "/topologyd.yaml"}, log);
      !s.ok()) {
    return s;
  }
  // A first call on a channel made before the socket accepts waits out its deadline: probe
  // the socket first.
  bool serving = PollUntil([&] { return topologyd_.alive() && SocketAccepts(topologyd_socket()); });
  if (serving) {
    channel_ = CriChannel(topologyd_socket());
    stub_ = v1::Topologyd::NewStub(channel_);
    serving = PollUntil([&] {
      v1::ListAllocationsResponse response;
      return Allocations(&response).ok();
    });
  }
  if (!serving) return absl::UnavailableError("topologyd does not answer:\n" + ReadLog(log));
  return absl::OkStatus();
}

absl::Status NodeStack::StartShim() {
  const std::string log = dir_ + "/shim.log";
  if (absl::Status s =
          shim_.Start({options_.shim_binary, "--config", dir_ + "/shim.yaml", "--listen",
                       shim_endpoint(), "--runtime-endpoint", "unix://" + runtime_socket_,
                       "--topologyd-socket", topologyd_socket()},
                      log);
      !s.ok()) {
    return s;
  }
  bool serving = PollUntil([&] { return shim_.alive() && SocketAccepts(shim_socket()); });
  if (serving) {
    auto runtime = runtime::v1::RuntimeService::NewStub(CriChannel(shim_socket()));
    serving = PollUntil([&] {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + seconds(2));
      runtime::v1::VersionResponse version;
      return shim_.alive() && runtime->Version(&context, {}, &version).ok();
    });
  }
  if (!serving) return absl::UnavailableError("the shim does not answer:\n" + ReadLog(log));
  return absl::OkStatus();
}

absl::Status NodeStack::StartNri(const std::string& nri_socket) {
  const std::string log = dir_ + "/nri.log";
  if (options_.nri_binary.empty()) {
    return absl::FailedPreconditionError("this build has no NRI plugin (TOPOLOGYD_BUILD_NRI)");
  }
  // The log is appended to: a restart is registered once its own line is there.
  const int registered_before = NriRegistrations();
  if (absl::Status s =
          nri_.Start({options_.nri_binary, "--config", dir_ + "/nri.yaml", "--nri-socket",
                      nri_socket, "--topologyd-socket", topologyd_socket()},
                     log);
      !s.ok()) {
    return s;
  }
  if (!PollUntil([&] { return nri_.alive() && NriRegistrations() > registered_before; })) {
    return absl::UnavailableError("the NRI plugin did not register:\n" + ReadLog(log));
  }
  return absl::OkStatus();
}

int NodeStack::NriRegistrations() const {
  return Count(ReadLog(dir_ + "/nri.log"), "msg=registered");
}

grpc::Status NodeStack::Allocations(v1::ListAllocationsResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  return stub_->ListAllocations(&context, {}, response);
}

std::optional<v1::ContainerAllocation> NodeStack::Allocation(const std::string& uid,
                                                             const std::string& name) {
  v1::ListAllocationsResponse response;
  if (!Allocations(&response).ok()) return std::nullopt;
  for (const auto& pod : response.pods()) {
    if (pod.uid() != uid) continue;
    for (const auto& container : pod.containers()) {
      if (container.name() == name) return container;
    }
  }
  return std::nullopt;
}

std::string NodeStack::SharedPool() {
  v1::ListAllocationsResponse response;
  grpc::Status status = Allocations(&response);
  return status.ok() ? response.shared_pool() : "<" + status.error_message() + ">";
}

std::string NodeStack::Logs() const {
  return "--- topologyd log\n" + ReadLog(dir_ + "/topologyd.log") + "--- shim log\n" +
         ReadLog(dir_ + "/shim.log") + "--- NRI plugin log\n" + ReadLog(dir_ + "/nri.log");
}

}  // namespace topologyd::testing
