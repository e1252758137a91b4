// The daemon's connection limits, against the real daemon. socket.maxConnectionsPerUid:
// connections of one uid beyond the cap are refused with RESOURCE_EXHAUSTED naming the uid
// and the cap, logged once, and closed by the daemon; once one of the uid's connections
// closes, a new one is served.
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "tests/integration/process.h"

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

class ConnectionLimitsTest : public ::testing::Test {
 protected:
  // Starts the daemon with `socket` as its socket settings.
  void StartDaemon(const std::string& socket) {
    WriteFile(dir_.File("config.yaml"), MinimalConfig(dir_.path(), "socket: " + socket + "\n"));
    daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));
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

  static grpc::Status CallStatus(const std::shared_ptr<grpc::Channel>& channel) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
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

}  // namespace
}  // namespace topologyd::testing
