// The interceptor's view of the unary calls it claims: it can rewrite the request and the
// answer, refuse a call, see the runtime's errors; it answers from its own thread; and while
// it holds a call, other calls go on; it may also answer on the calling thread.
#include "lib/cri_relay/interceptor.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/cri_relay/relay.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/cri_relay/fake_runtime.h"
#include "tests/unit/cri_relay/test_client.h"

namespace topologyd::cri_relay::testing {
namespace {

using topologyd::testing::TempDir;

using ::testing::ElementsAre;
using ::testing::Pair;

// Intercepts Echo, Fail, Empty and Silent. Each hook runs on the interceptor's own worker thread,
// as the shim's will, and decides what `done` gets.
class TestInterceptor final : public Interceptor {
 public:
  using Before = std::function<void(std::string request, InterceptDone done)>;
  using After = std::function<void(const std::string& forwarded, grpc::Status status,
                                   std::string response, InterceptDone done)>;

  TestInterceptor() : worker_([this] { Work(); }) {}
  ~TestInterceptor() override {
    Post(nullptr);
    worker_.join();
  }

  Before before = [](std::string request, InterceptDone done) {
    done(grpc::Status::OK, std::move(request));
  };
  After after = [](const std::string&, grpc::Status status, std::string response,
                   InterceptDone done) { done(std::move(status), std::move(response)); };

  // The hooks run on the relay's calling thread instead, answering before they return (as the
  // shim does for what never waits).
  bool answer_inline = false;

  std::unique_ptr<CallFilter> Intercept(const CallInfo& call) override {
    if (call.method != kEcho && call.method != kFail && call.method != kEmpty &&
        call.method != kSilent) {
      return nullptr;
    }
    return std::make_unique<Filter>(this);
  }

  // What the last AfterForward was given.
  struct Seen {
    std::string forwarded;  // what its own call's BeforeForward sent on
    grpc::Status status;
    std::string response;
  };
  Seen after_seen() {
    absl::MutexLock lock(&mu_);
    return after_seen_;
  }
  // Filters made and not yet deleted.
  int live_filters() const { return live_filters_.load(); }

 private:
  // One call's filter: keeps what it forwarded for its own AfterForward.
  class Filter final : public CallFilter {
   public:
    explicit Filter(TestInterceptor* owner) : owner_(owner) { ++owner_->live_filters_; }
    ~Filter() override { --owner_->live_filters_; }

    void BeforeForward(std::string request, ForwardDone forward) override {
      InterceptDone done = [this, forward = std::move(forward)](grpc::Status status,
                                                                std::string bytes) {
        {
          absl::MutexLock lock(&mu_);
          if (!answered_) forwarded_ = bytes;
          answered_ = true;
        }
        forward(std::move(status), std::move(bytes));
      };
      owner_->Run([this, request = std::move(request), done = std::move(done)]() mutable {
        owner_->before(std::move(request), std::move(done));
      });
    }
    void AfterForward(grpc::Status status, std::string response, InterceptDone done) override {
      std::string forwarded;
      {
        absl::MutexLock lock(&mu_);
        forwarded = forwarded_;
      }
      owner_->RecordAfter({forwarded, status, response});
      owner_->Run([this, forwarded, status = std::move(status), response = std::move(response),
                   done = std::move(done)]() mutable {
        owner_->after(forwarded, std::move(status), std::move(response), std::move(done));
      });
    }

   private:
    TestInterceptor* const owner_;
    absl::Mutex mu_;
    bool answered_ ABSL_GUARDED_BY(mu_) = false;
    std::string forwarded_ ABSL_GUARDED_BY(mu_);
  };

  void RecordAfter(Seen seen) {
    absl::MutexLock lock(&mu_);
    after_seen_ = std::move(seen);
  }
  void Run(std::function<void()> work) {
    if (answer_inline) return work();
    Post(std::move(work));
  }
  void Post(std::function<void()> work) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(work));
  }
  void Work() {
    while (true) {
      std::function<void()> work;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<std::function<void()>>* q) { return !q->empty(); }, &queue_));
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!work) return;
      work();
    }
  }

  absl::Mutex mu_;
  Seen after_seen_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> queue_;
  std::atomic<int> live_filters_{0};
  std::thread worker_;
};

class InterceptorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = std::make_unique<FakeRuntime>(dir_.File("runtime.sock"));
    absl::StatusOr<std::unique_ptr<Relay>> relay =
        Relay::Start({.listen_path = dir_.File("relay.sock"),
                      .upstream_target = "unix:" + dir_.File("runtime.sock")},
                     &interceptor_);
    ASSERT_TRUE(relay.ok()) << relay.status();
    relay_ = *std::move(relay);
    relayed_ = ChannelTo(dir_.File("relay.sock"));
  }

  TempDir dir_;
  TestInterceptor interceptor_;  // outlives the relay
  std::unique_ptr<FakeRuntime> runtime_;
  std::unique_ptr<Relay> relay_;
  std::shared_ptr<grpc::Channel> relayed_;
};

TEST_F(InterceptorTest, UntouchedInterceptedCallIsRelayedUnchanged) {
  const CallResult result = Call(relayed_, kEcho, {"plain"});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_THAT(result.responses, ElementsAre("echo:plain"));
  EXPECT_THAT(result.initial_metadata, ElementsAre(Pair("x-initial", "hello")));
  EXPECT_THAT(result.trailing_metadata, ElementsAre(Pair("x-trailer", "bye")));
}

TEST_F(InterceptorTest, RewritesTheRequestTheRuntimeGetsAndTheAnswerTheCallerGets) {
  interceptor_.before = [](std::string request, InterceptDone done) {
    done(grpc::Status::OK, "edited-" + request);
  };
  interceptor_.after = [](const std::string&, grpc::Status status, std::string response,
                          InterceptDone done) { done(status, response + "-after"); };
  const CallResult result = Call(relayed_, kEcho, {"hello"});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_THAT(result.responses, ElementsAre("echo:edited-hello-after"));
  EXPECT_EQ(interceptor_.after_seen().forwarded, "edited-hello");
  EXPECT_EQ(interceptor_.after_seen().response, "echo:edited-hello");
}

TEST_F(InterceptorTest, MayAnswerOnTheCallingThreadBeforeReturning) {
  interceptor_.answer_inline = true;
  interceptor_.before = [](std::string request, InterceptDone done) {
    done(grpc::Status::OK, "edited-" + request);
  };
  interceptor_.after = [](const std::string&, grpc::Status status, std::string response,
                          InterceptDone done) { done(status, response + "-after"); };
  for (int i = 0; i < 3; ++i) {
    const CallResult result = Call(relayed_, kEcho, {"hello"});
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_THAT(result.responses, ElementsAre("echo:edited-hello-after"));
  }
  interceptor_.before = [](std::string, InterceptDone done) {
    done(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not on this node"), {});
  };
  const CallResult refused = Call(relayed_, kEcho, {"hello"});
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(runtime_->calls(kEcho), 3);
}

TEST_F(InterceptorTest, EmptyAnswerIsAMessageForTheInterceptorAndTheCaller) {
  const CallResult result = Call(relayed_, kEmpty, {"?"});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_THAT(result.responses, ElementsAre(""));
  EXPECT_TRUE(interceptor_.after_seen().status.ok());
}

TEST_F(InterceptorTest, RuntimeOkWithoutAMessageIsAnInternalError) {
  const CallResult result = Call(relayed_, kSilent, {"?"});
  const std::string expected =
      std::string(kSilent) +
      " is intercepted as a unary method but the runtime answered no message";
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(result.status.error_message(), expected);
  EXPECT_EQ(interceptor_.after_seen().status.error_message(), expected);
}

TEST_F(InterceptorTest, CallerThatSendsNoRequestIsAnsweredWithoutTheInterceptorOrTheRuntime) {
  bool before_called = false;
  interceptor_.before = [&](std::string request, InterceptDone done) {
    before_called = true;
    done(grpc::Status::OK, std::move(request));
  };
  const CallResult result = Call(relayed_, kEcho, {});
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(result.status.error_message(),
            std::string(kEcho) +
                " is intercepted as a unary method but the caller sent no request message");
  EXPECT_FALSE(before_called);
  EXPECT_EQ(runtime_->calls(kEcho), 0);
}

TEST_F(InterceptorTest, RefusalAnswersTheCallerAndNeverReachesTheRuntime) {
  interceptor_.before = [](std::string, InterceptDone done) {
    done(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not on this node"), {});
  };
  const CallResult result = Call(relayed_, kEcho, {"hello"});
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(result.status.error_message(), "not on this node");
  EXPECT_TRUE(result.responses.empty());
  EXPECT_EQ(runtime_->calls(kEcho), 0);
}

TEST_F(InterceptorTest, SeesTheRuntimesErrorWhichReachesTheCallerWhole) {
  const CallResult result = Call(relayed_, kFail, {"x"});
  const grpc::Status seen = interceptor_.after_seen().status;
  EXPECT_EQ(seen.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(seen.error_details(), kFailDetails);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(result.status.error_message(), kFailMessage);
  EXPECT_EQ(result.status.error_details(), kFailDetails);
  EXPECT_THAT(result.trailing_metadata,
              ElementsAre(Pair("x-blob-bin", kBlob), Pair("x-reason", "gone")));
}

TEST_F(InterceptorTest, CanTurnASuccessIntoAnError) {
  interceptor_.after = [](const std::string&, grpc::Status, std::string, InterceptDone done) {
    done(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "no CPUs left"), "ignored");
  };
  const CallResult result = Call(relayed_, kEcho, {"hello"});
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(result.responses.empty()) << "an error carries no message";
  EXPECT_EQ(runtime_->calls(kEcho), 1);
}

TEST_F(InterceptorTest, PassThroughCallCompletesWhileAnInterceptedCallIsHeld) {
  // The interceptor keeps the intercepted call's `done` until the pass-through call has
  // completed: if pass-through calls waited on intercepted ones, this would never finish.
  absl::Notification held;
  InterceptDone held_done;
  interceptor_.before = [&](std::string request, InterceptDone done) {
    held_done = [done, request](grpc::Status status, std::string) { done(status, request); };
    held.Notify();
  };
  AsyncCall intercepted(relayed_, kEcho, {"held"});
  held.WaitForNotification();

  const CallResult passed = Call(relayed_, kStream, {"3"});
  ASSERT_TRUE(passed.status.ok()) << passed.status.error_message();
  EXPECT_THAT(passed.responses, ElementsAre("item-0", "item-1", "item-2"));
  EXPECT_EQ(runtime_->calls(kEcho), 0) << "the intercepted call is still held";

  held_done(grpc::Status::OK, {});
  const CallResult& released = intercepted.Wait();
  ASSERT_TRUE(released.status.ok()) << released.status.error_message();
  EXPECT_THAT(released.responses, ElementsAre("echo:held"));
}

TEST_F(InterceptorTest, CallerCancellingAHeldCallGetsCancelledAndTheLateAnswerIsHarmless) {
  absl::Notification held;
  InterceptDone held_done;
  interceptor_.before = [&](std::string request, InterceptDone done) {
    held_done = [done, request](grpc::Status status, std::string) { done(status, request); };
    held.Notify();
  };
  AsyncCall intercepted(relayed_, kEcho, {"held"});
  held.WaitForNotification();
  intercepted.Cancel();
  EXPECT_EQ(intercepted.Wait().status.error_code(), grpc::StatusCode::CANCELLED);

  // Whether the relay has seen the cancellation yet is not for the caller to know: the late
  // answer is either ignored or forwarded on a runtime call cancelled with the caller's. The
  // relay goes on serving. (ShutdownAnswersACallTheInterceptorHolds checks the ignored case.)
  held_done(grpc::Status::OK, {});
  EXPECT_EQ(Call(relayed_, kStream, {"1"}).status.error_code(), grpc::StatusCode::OK);
}

// Each call has its own filter: its AfterForward sees what its own BeforeForward sent on, and
// the filter goes with the call, refused or answered.
TEST_F(InterceptorTest, EachCallHasItsOwnFilterWhichGoesWithTheCall) {
  interceptor_.before = [](std::string request, InterceptDone done) {
    done(grpc::Status::OK, "edited-" + request);
  };
  for (const std::string request : {"x", "y"}) {
    const CallResult result = Call(relayed_, kEcho, {request});
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_EQ(interceptor_.after_seen().forwarded, "edited-" + request);
  }
  // The call is torn down just after the caller has its answer.
  for (int i = 0; i < 500 && interceptor_.live_filters() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(interceptor_.live_filters(), 0) << "the relay still holds a finished call's filter";

  // A refusal forwards nothing, and keeps nothing.
  interceptor_.before = [](std::string, InterceptDone done) {
    done(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"), {});
  };
  EXPECT_EQ(Call(relayed_, kEcho, {"z"}).status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  for (int i = 0; i < 500 && interceptor_.live_filters() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(interceptor_.live_filters(), 0);
}

TEST_F(InterceptorTest, DoneDroppedUnansweredIsAnInternalError) {
  interceptor_.before = [](std::string, InterceptDone) {};
  const CallResult result = Call(relayed_, kEcho, {"hello"});
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(result.status.error_message(), ::testing::HasSubstr("dropped"));
  EXPECT_EQ(runtime_->calls(kEcho), 0);
}

TEST_F(InterceptorTest, DoneCalledTwiceUsesTheFirstAnswer) {
  interceptor_.before = [](std::string request, InterceptDone done) {
    done(grpc::Status::OK, "first-" + request);
    done(grpc::Status::OK, "second-" + request);
  };
  const CallResult result = Call(relayed_, kEcho, {"x"});
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_THAT(result.responses, ElementsAre("echo:first-x"));
  EXPECT_EQ(runtime_->calls(kEcho), 1);
}

TEST_F(InterceptorTest, ShutdownAnswersACallTheInterceptorHolds) {
  absl::Notification held;
  InterceptDone held_done;
  interceptor_.before = [&](std::string, InterceptDone done) {
    held_done = std::move(done);
    held.Notify();
  };
  AsyncCall intercepted(relayed_, kEcho, {"held"});
  held.WaitForNotification();
  relay_->Shutdown(std::chrono::system_clock::now());
  EXPECT_FALSE(intercepted.Wait().status.ok());
  held_done(grpc::Status::OK, "late");  // after shutdown: ignored, no crash
  EXPECT_EQ(runtime_->calls(kEcho), 0);
}

}  // namespace
}  // namespace topologyd::cri_relay::testing
