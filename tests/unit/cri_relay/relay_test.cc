// Calls through the relay against the same calls made directly to the fake runtime: the
// caller must not be able to tell them apart, whatever the method, and whether the relay
// passes it on as a byte stream or, declared unary, as a unary call.
#include "lib/cri_relay/relay.h"

#include <chrono>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "tests/support/temp_dir.h"
#include "tests/unit/cri_relay/fake_runtime.h"
#include "tests/unit/cri_relay/test_client.h"

namespace topologyd::cri_relay::testing {
namespace {

using topologyd::testing::TempDir;

using ::testing::ElementsAre;
using ::testing::Pair;

// The relay's two paths for a call that is not intercepted.
enum class Path { kByteStream, kUnary };

std::string PathName(const ::testing::TestParamInfo<Path>& info) {
  return info.param == Path::kUnary ? "DeclaredUnary" : "ByteStream";
}

class RelayTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    runtime_ = std::make_unique<FakeRuntime>(dir_.File("runtime.sock"));
    RelayOptions options{.listen_path = dir_.File("relay.sock"),
                         .upstream_target = "unix:" + dir_.File("runtime.sock")};
    // The fake's one-message methods; Stream and the unknown methods stay byte streams.
    if (GetParam() == Path::kUnary) {
      options.unary_methods = {kEcho, kFail, kWaitForCancel, kInspect, kEmpty, kSilent};
    }
    absl::StatusOr<std::unique_ptr<Relay>> relay = Relay::Start(options, nullptr);
    ASSERT_TRUE(relay.ok()) << relay.status();
    relay_ = *std::move(relay);
    direct_ = ChannelTo(dir_.File("runtime.sock"));
    relayed_ = ChannelTo(dir_.File("relay.sock"));
  }

  // The call made directly and through the relay; both results must be identical.
  void ExpectRelayedLikeDirect(const std::string& method, const std::vector<std::string>& requests,
                               const CallResult& relayed) {
    const CallResult direct = Call(direct_, method, requests);
    EXPECT_EQ(relayed.status.error_code(), direct.status.error_code()) << method;
    EXPECT_EQ(relayed.status.error_message(), direct.status.error_message()) << method;
    EXPECT_EQ(relayed.status.error_details(), direct.status.error_details()) << method;
    EXPECT_EQ(relayed.responses, direct.responses) << method;
    EXPECT_EQ(relayed.initial_metadata, direct.initial_metadata) << method;
    EXPECT_EQ(relayed.trailing_metadata, direct.trailing_metadata) << method;
  }

  TempDir dir_;
  std::unique_ptr<FakeRuntime> runtime_;
  std::unique_ptr<Relay> relay_;
  std::shared_ptr<grpc::Channel> direct_;
  std::shared_ptr<grpc::Channel> relayed_;
};

TEST_P(RelayTest, UnaryAnswerAndMetadataAreThoseOfTheRuntime) {
  const CallResult relayed = Call(relayed_, kEcho, {std::string("hi\0there", 8)});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  EXPECT_THAT(relayed.responses, ElementsAre(std::string("echo:hi\0there", 13)));
  EXPECT_THAT(relayed.initial_metadata, ElementsAre(Pair("x-initial", "hello")));
  EXPECT_THAT(relayed.trailing_metadata, ElementsAre(Pair("x-trailer", "bye")));
  ExpectRelayedLikeDirect(kEcho, {std::string("hi\0there", 8)}, relayed);
}

TEST_P(RelayTest, ErrorStatusKeepsCodeMessageBinaryDetailsAndTrailers) {
  const CallResult relayed = Call(relayed_, kFail, {"x"});
  EXPECT_EQ(relayed.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(relayed.status.error_message(), kFailMessage);
  EXPECT_EQ(relayed.status.error_details(), kFailDetails);
  EXPECT_THAT(relayed.trailing_metadata,
              ElementsAre(Pair("x-blob-bin", kBlob), Pair("x-reason", "gone")));
  ExpectRelayedLikeDirect(kFail, {"x"}, relayed);
}

TEST_P(RelayTest, MethodTheRelayHasNeverHeardOfIsRelayed) {
  const std::string method = "/runtime.v9.FutureService/SomethingNew";
  const CallResult relayed = Call(relayed_, method, {"?"});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  EXPECT_THAT(relayed.responses, ElementsAre(method));
  EXPECT_EQ(runtime_->calls(method), 1);
  ExpectRelayedLikeDirect(method, {"?"}, relayed);
}

TEST_P(RelayTest, ServerStreamingMessagesArriveAllAndInOrder) {
  const CallResult relayed = Call(relayed_, kStream, {"50"});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  ASSERT_EQ(relayed.responses.size(), 50u);
  for (size_t i = 0; i < relayed.responses.size(); ++i) {
    EXPECT_EQ(relayed.responses[i], "item-" + std::to_string(i));
  }
  ExpectRelayedLikeDirect(kStream, {"50"}, relayed);
}

TEST_P(RelayTest, EveryRequestMessageOfAByteStreamArrivesAndOnlyTheFirstOfAUnaryCall) {
  // The fake echoes the concatenation of every request message it read. A unary caller sends
  // one; the relay's unary call carries exactly that one.
  const CallResult relayed = Call(relayed_, kEcho, {"a", "b", "c"});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  EXPECT_THAT(relayed.responses, ElementsAre(GetParam() == Path::kUnary ? "echo:a" : "echo:abc"));
}

TEST_P(RelayTest, EmptyMessageIsAMessage) {
  const CallResult relayed = Call(relayed_, kEmpty, {""});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  EXPECT_THAT(relayed.responses, ElementsAre(""));
  ExpectRelayedLikeDirect(kEmpty, {""}, relayed);
}

TEST_P(RelayTest, RuntimeThatAnswersOkWithoutAMessage) {
  const CallResult relayed = Call(relayed_, kSilent, {"?"});
  if (GetParam() == Path::kUnary) {
    // gRPC's unary client would pass an OK without its message on as OK.
    EXPECT_EQ(relayed.status.error_code(), grpc::StatusCode::INTERNAL);
    EXPECT_EQ(relayed.status.error_message(),
              std::string(kSilent) + " is a unary method but the runtime answered no message");
  } else {
    ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
    EXPECT_TRUE(relayed.responses.empty());
    ExpectRelayedLikeDirect(kSilent, {"?"}, relayed);
  }
}

TEST_P(RelayTest, CallerThatSendsNoRequest) {
  const CallResult relayed = Call(relayed_, kEcho, {});
  if (GetParam() == Path::kUnary) {
    // A unary method needs its request: the runtime is not called.
    EXPECT_EQ(relayed.status.error_code(), grpc::StatusCode::INTERNAL);
    EXPECT_EQ(relayed.status.error_message(),
              std::string(kEcho) + " is a unary method but the caller sent no request");
    EXPECT_EQ(runtime_->calls(kEcho), 0);
  } else {
    ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
    ExpectRelayedLikeDirect(kEcho, {}, relayed);
  }
}

TEST_P(RelayTest, TenMebibyteMessagePassesBothWays) {
  std::string big(10 * 1024 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  const CallResult relayed = Call(relayed_, kEcho, {big});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  ASSERT_EQ(relayed.responses.size(), 1u);
  EXPECT_TRUE(relayed.responses[0] == "echo:" + big) << "the 10 MiB answer came back altered";
}

TEST_P(RelayTest, CallerCancellationReachesTheRuntime) {
  AsyncCall call(relayed_, kWaitForCancel, {"wait"});
  runtime_->AwaitCalls(kWaitForCancel, 1);
  call.Cancel();
  runtime_->AwaitCancellation();
  EXPECT_EQ(call.Wait().status.error_code(), grpc::StatusCode::CANCELLED);
}

TEST_P(RelayTest, CallerDeadlineIsTheRuntimeCallsDeadline) {
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(100);
  const CallResult relayed = Call(relayed_, kInspect, {"?"},
                                  [&](grpc::ClientContext& ctx) { ctx.set_deadline(deadline); });
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  // On the wire a deadline is a timeout that gRPC rounds up to a coarse unit (a second
  // here) at each hop; the bounds leave room for that and nothing like a missing deadline.
  const auto seen = runtime_->inspected_deadline();
  EXPECT_LE(seen, deadline + std::chrono::seconds(5)) << "the runtime saw no deadline";
  EXPECT_GE(seen, deadline - std::chrono::seconds(50)) << "the runtime saw another deadline";
}

TEST_P(RelayTest, CallerMetadataIsCopiedButNotGrpcsOwnKeys) {
  const CallResult relayed = Call(relayed_, kInspect, {"?"}, [](grpc::ClientContext& ctx) {
    ctx.AddMetadata("x-request-id", "42");
    ctx.AddMetadata("x-request-id", "43");
    ctx.AddMetadata("x-trace-bin", std::string("\x00\x01\x02", 3));
  });
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  const auto seen = runtime_->inspected_metadata();
  auto ids = seen.equal_range("x-request-id");
  std::vector<std::string> id_values;
  for (auto it = ids.first; it != ids.second; ++it) id_values.push_back(it->second);
  EXPECT_THAT(id_values, ElementsAre("42", "43"));
  ASSERT_EQ(seen.count("x-trace-bin"), 1u);
  EXPECT_EQ(seen.find("x-trace-bin")->second, std::string("\x00\x01\x02", 3));
  // gRPC writes these itself on the relay's call: copies would be duplicates.
  EXPECT_LE(seen.count("user-agent"), 1u);
  EXPECT_LE(seen.count("content-type"), 1u);
  EXPECT_LE(seen.count("te"), 1u);
}

TEST_P(RelayTest, CallerUserAgentIsNotPassedOn) {
  grpc::ChannelArguments args;
  args.SetUserAgentPrefix("kubelet-under-test");
  auto channel = grpc::CreateCustomChannel("unix:" + dir_.File("relay.sock"),
                                           grpc::InsecureChannelCredentials(), args);
  const CallResult relayed = Call(channel, kInspect, {"?"});
  ASSERT_TRUE(relayed.status.ok()) << relayed.status.error_message();
  for (const auto& [key, value] : runtime_->inspected_metadata()) {
    EXPECT_EQ(value.find("kubelet-under-test"), std::string::npos) << key << ": " << value;
  }
}

TEST_P(RelayTest, RuntimeDownIsUnavailableForTheCaller) {
  runtime_.reset();
  const CallResult relayed = Call(relayed_, kEcho, {"anyone?"});
  EXPECT_EQ(relayed.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << relayed.status.error_message();
}

TEST_P(RelayTest, ShutdownCancelsCallsInFlightOnBothSides) {
  AsyncCall call(relayed_, kWaitForCancel, {"wait"});
  runtime_->AwaitCalls(kWaitForCancel, 1);
  relay_->Shutdown(std::chrono::system_clock::now());
  runtime_->AwaitCancellation();
  EXPECT_FALSE(call.Wait().status.ok());
}

TEST_P(RelayTest, UpstreamChannelServesTheShimsOwnCalls) {
  const CallResult own = Call(relay_->upstream_channel(), kEcho, {"mine"});
  ASSERT_TRUE(own.status.ok()) << own.status.error_message();
  EXPECT_THAT(own.responses, ElementsAre("echo:mine"));
}

INSTANTIATE_TEST_SUITE_P(Paths, RelayTest, ::testing::Values(Path::kByteStream, Path::kUnary),
                         PathName);

}  // namespace
}  // namespace topologyd::cri_relay::testing
