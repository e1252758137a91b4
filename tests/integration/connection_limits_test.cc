// The daemon's connection limits, against the real daemon. socket.maxConnectionsPerUid:
// connections of one uid beyond the cap are refused with RESOURCE_EXHAUSTED naming the uid
// and the cap, logged once, and closed by the daemon; once one of the uid's connections
// closes, a new one is served. Out of file descriptors (the daemon started under a low
// RLIMIT_NOFILE): new connections are closed at once, the accept thread does not spin, one
// warning, and connections are served again once clients have closed theirs.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include <grpcpp/grpcpp.h>

#include "tests/integration/process.h"
#include "tests/support/thread_cpu.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// User + system CPU time, in clock ticks, of the thread of process `pid` named `name`.
long ThreadCpuTicks(pid_t pid, const std::string& name) {
  std::optional<std::filesystem::path> stat = ThreadStatPath(std::to_string(pid), name);
  if (!stat) {
    ADD_FAILURE() << "process " << pid << " has no thread named " << name;
    return 0;
  }
  return CpuTicksOfStat(ReadFile(*stat));
}

// A soft descriptor limit the daemon starts under with room for a few dozen connections.
constexpr rlim_t kDaemonNofile = 64;

class ConnectionLimitsTest : public ::testing::Test {
 protected:
  // Starts the daemon with `socket` as its socket settings, under `nofile` as its soft
  // RLIMIT_NOFILE when given.
  void StartDaemon(const std::string& socket, std::optional<rlim_t> nofile = std::nullopt) {
    WriteFile(dir_.File("config.yaml"), MinimalConfig(dir_.path(), "socket: " + socket + "\n"));
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
    if (nofile) {
      rlimit lowered = saved;
      lowered.rlim_cur = *nofile;
      ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
    }
    daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));  // inherits the limit
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    ASSERT_TRUE(daemon_.WaitUntilServing(dir_.File("topologyd.sock"), seconds(30)))
        << ReadFile(dir_.File("log"));
  }

  // A channel with a connection of its own (gRPC shares connections between channels to one
  // target unless told not to).
  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel("unix:" + dir_.File("topologyd.sock"),
                                     grpc::InsecureChannelCredentials(), args);
  }

  static grpc::Status CallStatus(const std::shared_ptr<grpc::Channel>& channel,
                                 seconds deadline = seconds(10)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    v1::StatusResponse response;
    return v1::Topologyd::NewStub(channel)->Status(&context, {}, &response);
  }

  // A channel whose call was served. Connections just closed (topoctl's, a dropped channel)
  // count until the daemon has seen them close, so this tries new channels for a while.
  std::shared_ptr<grpc::Channel> ServedChannel() {
    for (int i = 0; i < 100; ++i) {
      std::shared_ptr<grpc::Channel> channel = NewChannel();
      if (CallStatus(channel).ok()) return channel;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return nullptr;
  }

  std::string Log() { return ReadFile(dir_.File("log")); }

  TempDir dir_;
  DaemonProcess daemon_;
};

TEST_F(ConnectionLimitsTest, ConnectionsBeyondTheUidCapAreRefusedUntilOneCloses) {
  StartDaemon("{maxConnectionsPerUid: 2}");
  std::shared_ptr<grpc::Channel> first = ServedChannel();
  ASSERT_NE(first, nullptr);
  std::shared_ptr<grpc::Channel> second = ServedChannel();
  ASSERT_NE(second, nullptr);

  // The third and fourth: refused, with the reason, and one warning for both.
  const size_t log_before = Log().size();
  std::shared_ptr<grpc::Channel> third = NewChannel();
  grpc::Status refused = CallStatus(third);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_THAT(refused.error_message(),
              HasSubstr(fmt::format("uid {} already has 2 connections open", ::getuid())));
  EXPECT_THAT(refused.error_message(), HasSubstr("socket.maxConnectionsPerUid allows (2)"));
  EXPECT_EQ(CallStatus(NewChannel()).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // The ones within the cap are still served.
  EXPECT_TRUE(CallStatus(first).ok());
  const std::string refusals = Log().substr(log_before);
  EXPECT_EQ(Occurrences(refusals, fmt::format("refusing connections from uid {}", ::getuid())), 1u)
      << refusals;

  // The daemon closes a refused connection soon after its reply. (Waiting for the state
  // change drives the client's I/O; nothing else reads from an idle channel here.)
  ASSERT_EQ(third->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_TRUE(
      third->WaitForStateChange(GRPC_CHANNEL_READY, std::chrono::system_clock::now() + seconds(5)))
      << "the refused connection is still open after 5 s";

  // One of the uid's connections closes: a new one is served.
  first.reset();
  EXPECT_NE(ServedChannel(), nullptr);
  EXPECT_THAT(Log(),
              HasSubstr(fmt::format("uid {} is below its cap of 2 connections again", ::getuid())));
}

TEST_F(ConnectionLimitsTest, OutOfDescriptorsNewConnectionsAreClosedAndServedAgainLater) {
  StartDaemon("{maxConnectionsPerUid: 1000}", kDaemonNofile);
  // Idle connections until the daemon has no descriptor left for the next one.
  std::vector<std::shared_ptr<grpc::Channel>> idle;
  grpc::Status status;
  while (idle.size() < kDaemonNofile) {
    std::shared_ptr<grpc::Channel> channel = NewChannel();
    status = CallStatus(channel, seconds(5));
    if (!status.ok()) break;
    idle.push_back(channel);
  }
  ASSERT_FALSE(status.ok()) << "the daemon kept accepting under a limit of " << kDaemonNofile;
  const size_t served = idle.size();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_FALSE(CallStatus(NewChannel(), seconds(5)).ok());

  // The connection the daemon cannot take must not keep its accept thread busy.
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  const long before = ThreadCpuTicks(daemon_.pid(), "tpd-accept");
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(milliseconds(1000));
  const long used = ThreadCpuTicks(daemon_.pid(), "tpd-accept") - before;
  const auto wall =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_LT(used * 1000 / ticks_per_second, wall.count() / 10)
      << "the accept thread used " << used << " clock ticks of CPU in " << wall.count() << " ms";

  // The clients close their connections: new ones are served again.
  idle.clear();
  EXPECT_NE(ServedChannel(), nullptr) << Log();
  const std::string log = Log();
  EXPECT_EQ(Occurrences(log, "cannot accept connections on"), 1u) << log;
  EXPECT_THAT(log, HasSubstr(fmt::format("Too many open files; {} connections open", served)));
  EXPECT_THAT(log, HasSubstr("accepting connections on " + dir_.File("topologyd.sock") + " again"));
}

}  // namespace
}  // namespace topologyd::testing
