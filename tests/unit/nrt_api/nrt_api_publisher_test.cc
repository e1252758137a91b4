// The NodeResourceTopology publisher on a real engine with a transport the test holds: the
// object applied at start with its owner reference, after changes (changes close together
// sharing one apply, an unchanged object not sent again), on the resync period with the Node's
// uid read again, a failing API server retried with backoff and logged once per episode, a
// pending change applied at Stop(), and admission never waiting for the API server.
#include "lib/nrt_api/nrt_api_publisher.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/nrt/pod_fingerprint.h"
#include "lib/nrt_api/kube_nrt_transport.h"
#include "lib/state/file_system.h"
#include "tests/support/log_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/admission/admission_test_util.h"
#include "tests/unit/nrt/publisher_test_engine.h"

namespace topologyd::nrt_api {
namespace {

using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// What the API server would hold, and failures and stalls on demand.
class FakeTransport final : public NrtApiTransport {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable changed;
    std::string node_uid = "uid-1";
    absl::Status node_error;
    absl::Status apply_error;
    int failures_left = 0;  // applies to fail with apply_error before succeeding
    bool stall = false;     // Apply waits while true
    int stalled = 0;        // applies waiting
    int node_reads = 0;
    std::vector<std::string> applied;  // bodies, in order
  };

  explicit FakeTransport(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  absl::StatusOr<std::string> NodeUid(const std::string& node) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    ++shared_->node_reads;
    if (!shared_->node_error.ok()) return ExplainNodeError(shared_->node_error, node);
    return shared_->node_uid;
  }

  absl::Status Apply(const std::string& name, const std::string& object) override {
    std::unique_lock<std::mutex> lock(shared_->mu);
    ++shared_->stalled;
    shared_->changed.notify_all();
    shared_->changed.wait(lock, [this] { return !shared_->stall; });
    --shared_->stalled;
    if (shared_->failures_left > 0) {
      --shared_->failures_left;
      return ExplainApplyError(shared_->apply_error);
    }
    EXPECT_EQ(nlohmann::json::parse(object)["metadata"]["name"], name);
    shared_->applied.push_back(object);
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<Shared> shared_;
};

class NrtApiPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = topologyd::testing::StartPublisherTestEngine(dir_.path() + "/state", &fs_,
                                                                "single-numa-node");
    ASSERT_TRUE(started.ok()) << started.status();
    engine_ = *std::move(started);
  }

  std::unique_ptr<NrtApiPublisher> Publish(milliseconds min_interval, milliseconds resync_period,
                                           milliseconds first_retry = milliseconds(20)) {
    return NrtApiPublisher::Start({.engine = engine_.get(),
                                   .transport = std::make_unique<FakeTransport>(api_),
                                   .server = "https://api.test:6443",
                                   .resync_period = resync_period,
                                   .min_interval = min_interval,
                                   .first_retry = first_retry,
                                   .max_retry = first_retry * 2,
                                   .log_info = info_.Sink(),
                                   .log_error = errors_.Sink()});
  }

  void Admit(const std::string& uid) {
    auto reply = engine_->Admit(admission::testing::Pod(
        uid, {admission::testing::Ctr("app", {{"cpu", "1"}, {"memory", "64Mi"}})}));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_TRUE(reply->admitted) << reply->message;
  }

  static std::string FingerprintOf(const std::vector<std::string>& uids) {
    nrt::PodFingerprint fingerprint;
    for (const std::string& uid : uids) fingerprint.Add("default", "pod-" + uid);
    return fingerprint.Sign();
  }

  static std::string Attribute(const nlohmann::json& object, const std::string& name) {
    for (const nlohmann::json& a : object["attributes"]) {
      if (a["name"] == name) return a["value"];
    }
    return "";
  }

  std::vector<nlohmann::json> Applied() {
    std::lock_guard<std::mutex> lock(api_->mu);
    std::vector<nlohmann::json> out;
    for (const std::string& body : api_->applied) out.push_back(nlohmann::json::parse(body));
    return out;
  }

  topologyd::testing::TempDir dir_{"topologyd-nrt-api"};
  state::PosixFileSystem fs_;
  std::unique_ptr<engine::Engine> engine_;
  std::shared_ptr<FakeTransport::Shared> api_ = std::make_shared<FakeTransport::Shared>();
  topologyd::testing::LogCapture info_;
  topologyd::testing::LogCapture errors_;
};

constexpr milliseconds kLong{std::chrono::minutes(10)};
constexpr milliseconds kWait{std::chrono::seconds(10)};

TEST_F(NrtApiPublisherTest, AppliedAtStartOwnedByTheNode) {
  auto publisher = Publish(milliseconds(10), kLong);
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  const std::vector<nlohmann::json> applied = Applied();
  ASSERT_THAT(applied, SizeIs(1));
  EXPECT_EQ(applied[0]["kind"], "NodeResourceTopology");
  EXPECT_EQ(applied[0]["metadata"]["ownerReferences"],
            nlohmann::json::parse(R"([{"apiVersion": "v1", "kind": "Node", "name": "worker-7",
                                       "uid": "uid-1"}])"));
  EXPECT_EQ(Attribute(applied[0], "nodeTopologyPodsFingerprint"), FingerprintOf({}));
  const NrtApiPublishStatus status = publisher->Status();
  EXPECT_EQ(status.server, "https://api.test:6443");
  EXPECT_EQ(status.node_name, "worker-7");
  EXPECT_EQ(status.last_trigger, "start-up");
  EXPECT_TRUE(status.last_ok);
  EXPECT_TRUE(status.last_success_time.has_value());
  EXPECT_THAT(info_.Lines(), ElementsAre(HasSubstr("published NodeResourceTopology worker-7 to "
                                                   "https://api.test:6443")));
}

TEST_F(NrtApiPublisherTest, ChangesCloseTogetherShareOneApply) {
  auto publisher = Publish(std::chrono::seconds(2), kLong);
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  Admit("a");
  Admit("b");
  Admit("c");
  ASSERT_TRUE(publisher->WaitForPublishes(2, kWait));
  const std::vector<nlohmann::json> applied = Applied();
  ASSERT_THAT(applied, SizeIs(2));
  EXPECT_EQ(Attribute(applied[1], "nodeTopologyPodsFingerprint"), FingerprintOf({"a", "b", "c"}));
  const NrtApiPublishStatus status = publisher->Status();
  EXPECT_EQ(status.last_trigger, "change");
  EXPECT_EQ(status.published_generation, engine_->DurableAllocationsNow()->state.generation);
  // The delay counts from the first of the three changes.
  EXPECT_GT(status.last_delay, std::chrono::microseconds(0));
}

TEST_F(NrtApiPublisherTest, AnUnchangedObjectIsNotAppliedAgain) {
  auto publisher = Publish(milliseconds(1), kLong);
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  publisher->Refresh();  // a reload that changed nothing the object shows
  ASSERT_TRUE(publisher->WaitForAttempts(2, kWait));
  EXPECT_THAT(Applied(), SizeIs(1));
  Admit("a");
  ASSERT_TRUE(publisher->WaitForPublishes(2, kWait));
  EXPECT_THAT(Applied(), SizeIs(2));
}

TEST_F(NrtApiPublisherTest, ResyncAppliesAgainWithTheNodeReadAgain) {
  auto publisher = Publish(milliseconds(1), milliseconds(30));
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  {
    // The Node was deleted and registered anew.
    std::lock_guard<std::mutex> lock(api_->mu);
    api_->node_uid = "uid-2";
  }
  ASSERT_TRUE(publisher->WaitForPublishes(3, kWait));
  const std::vector<nlohmann::json> applied = Applied();
  EXPECT_EQ(applied.back()["metadata"]["ownerReferences"][0]["uid"], "uid-2");
  EXPECT_EQ(publisher->Status().last_trigger, "resync");
}

TEST_F(NrtApiPublisherTest, AFailingApiServerIsRetriedAndLoggedOncePerEpisode) {
  {
    std::lock_guard<std::mutex> lock(api_->mu);
    api_->apply_error = absl::NotFoundError(
        "PATCH /apis/...: HTTP 404: \"the server could not "
        "find the requested resource\"");
    api_->failures_left = 4;
  }
  auto publisher = Publish(milliseconds(1), kLong, milliseconds(5));
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  const NrtApiPublishStatus status = publisher->Status();
  EXPECT_EQ(status.failed_publishes, 4U);
  EXPECT_EQ(status.consecutive_failures, 0U);
  EXPECT_EQ(status.last_trigger, "retry");
  EXPECT_THAT(errors_.Lines(),
              ElementsAre(AllOf(HasSubstr("cannot publish NodeResourceTopology worker-7"),
                                HasSubstr("the NodeResourceTopology CRD "
                                          "(noderesourcetopologies.topology.node.k8s.io, "
                                          "version v1alpha2) is not installed"),
                                HasSubstr("retrying in 5 ms"))));
  EXPECT_THAT(info_.Lines(), ElementsAre(HasSubstr("again after 4 failed attempts")));
  std::lock_guard<std::mutex> lock(api_->mu);
  // Every retry reads the Node again: the start-up read and one per retry.
  EXPECT_EQ(api_->node_reads, 5);
}

TEST_F(NrtApiPublisherTest, TheRecoveryAfterOneFailureSaysOneAttempt) {
  {
    std::lock_guard<std::mutex> lock(api_->mu);
    api_->apply_error = absl::UnavailableError("PATCH /apis/...: Couldn't connect to server");
    api_->failures_left = 1;
  }
  auto publisher = Publish(milliseconds(1), kLong, milliseconds(5));
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  EXPECT_THAT(info_.Lines(), ElementsAre(HasSubstr("again after 1 failed attempt")));
  EXPECT_THAT(info_.Lines(), ElementsAre(::testing::Not(HasSubstr("attempts"))));
}

TEST_F(NrtApiPublisherTest, AMissingNodeOrRbacVerbIsNamedInStatus) {
  {
    std::lock_guard<std::mutex> lock(api_->mu);
    api_->node_error = absl::NotFoundError("GET /api/v1/nodes/worker-7: HTTP 404");
  }
  auto publisher = Publish(milliseconds(1), kLong, std::chrono::seconds(30));
  ASSERT_TRUE(publisher->WaitForAttempts(1, kWait));
  NrtApiPublishStatus status = publisher->Status();
  EXPECT_FALSE(status.last_ok);
  EXPECT_EQ(status.consecutive_failures, 1U);
  EXPECT_THAT(status.last_error, HasSubstr("Node worker-7 is not registered in the API server"));
  EXPECT_THAT(Applied(), SizeIs(0));

  EXPECT_THAT(std::string(ExplainApplyError(absl::PermissionDeniedError("forbidden")).message()),
              HasSubstr("may not patch noderesourcetopologies.topology.node.k8s.io"));
  // The verb the authorizer names wins: applying a new object needs create.
  EXPECT_THAT(
      std::string(ExplainApplyError(absl::PermissionDeniedError(
                                        "HTTP 403: \"... User \\\"system:node:n\\\" cannot create "
                                        "resource \\\"noderesourcetopologies\\\" ...\""))
                      .message()),
      HasSubstr("may not create noderesourcetopologies.topology.node.k8s.io"));
  EXPECT_THAT(
      std::string(ExplainNodeError(absl::PermissionDeniedError("forbidden"), "n").message()),
      HasSubstr("may not get nodes"));
  // Other failures (the API server down) pass as they are.
  EXPECT_EQ(ExplainApplyError(absl::UnavailableError("connection refused")),
            absl::UnavailableError("connection refused"));
}

TEST_F(NrtApiPublisherTest, StopAppliesThePendingChange) {
  auto publisher = Publish(kLong, kLong);
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  Admit("a");
  ASSERT_TRUE(engine_->Flush().ok());
  publisher->Stop();
  const std::vector<nlohmann::json> applied = Applied();
  ASSERT_THAT(applied, SizeIs(2));
  EXPECT_EQ(Attribute(applied[1], "nodeTopologyPodsFingerprint"), FingerprintOf({"a"}));
  EXPECT_EQ(publisher->Status().last_trigger, "stop");
}

TEST_F(NrtApiPublisherTest, AdmissionDoesNotWaitForTheApiServer) {
  auto publisher = Publish(milliseconds(1), kLong);
  ASSERT_TRUE(publisher->WaitForPublishes(1, kWait));
  {
    std::lock_guard<std::mutex> lock(api_->mu);
    api_->stall = true;
  }
  Admit("a");  // its apply starts and stalls
  {
    std::unique_lock<std::mutex> lock(api_->mu);
    ASSERT_TRUE(api_->changed.wait_for(lock, kWait, [this] { return api_->stalled == 1; }));
  }
  Admit("b");  // answered while the API server still has not answered
  Admit("c");
  {
    std::lock_guard<std::mutex> lock(api_->mu);
    EXPECT_THAT(api_->applied, SizeIs(1));
    api_->stall = false;
  }
  api_->changed.notify_all();
  // The stalled apply ends; a later one carries both later changes (the engine hands a change
  // over just after answering it, so they may come in one apply or two).
  const std::string all = FingerprintOf({"a", "b", "c"});
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (Attribute(Applied().back(), "nodeTopologyPodsFingerprint") != all &&
         std::chrono::steady_clock::now() < deadline) {
    publisher->WaitForPublishes(publisher->Status().publishes + 1, milliseconds(100));
  }
  EXPECT_EQ(Attribute(Applied().back(), "nodeTopologyPodsFingerprint"), all);
}

}  // namespace
}  // namespace topologyd::nrt_api
