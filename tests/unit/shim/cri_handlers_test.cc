// The shim's steps around the CRI calls it intercepts, through the filter the relay would
// drive, without root, containerd or topologyd: topologyd is a fake TopologydClient, the runtime
// gRPC's generated mock of the CRI stub. Covers create, start, remove, restart, a placement
// topologyd does not make durable, topologyd unreachable, and the resync's orphan rule.
#include "shim/cri_handlers.h"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "cri/v1/runtime_mock.grpc.pb.h"
#include "shim/allocation_cache.h"
#include "shim/container_placer.h"
#include "shim/placement_pusher.h"
#include "shim/pod_spec_resolver.h"
#include "shim/relay_interceptor.h"
#include "shim/runtime_book.h"
#include "shim/runtime_resync.h"
#include "shim/work_queue.h"

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

using ::testing::_;
using ::testing::DoAll;
using ::testing::HasSubstr;
using ::testing::Return;
using ::testing::SetArgPointee;

constexpr char kPodUid[] = "7c3e0f4a-0000-4000-8000-000000000001";
constexpr char kSandboxId[] = "sandbox0001";
constexpr char kContainerId[] = "c0ffee0001";
constexpr char kRestartedId[] = "c0ffee0002";

// topologyd as the handlers see it: answers set by the test, calls recorded.
class FakeTopologyd final : public TopologydClient {
 public:
  struct AllocateCall {
    std::string pod_uid, container, container_id, cgroup;
  };
  struct ReleaseCall {
    std::string pod_uid, container, container_id;
  };

  // The next PlanContainer answers (the last one repeats).
  absl::StatusOr<v1::PlanContainerResponse> plan = absl::UnavailableError("not set");
  // AwaitDurableAsync's outcome; nullopt: held until Settle().
  std::optional<absl::Status> durable = absl::OkStatus();
  absl::Status release = absl::OkStatus();
  v1::ListAllocationsResponse listing;

  absl::StatusOr<v1::PlanContainerResponse> PlanContainer(const v1::PlanContainerRequest& request,
                                                          std::optional<Deadline>) override {
    absl::MutexLock lock(&mu_);
    plans_.push_back(request);
    return plan;
  }
  void AwaitDurableAsync(const v1::AdmitResponse&, std::optional<Deadline>,
                         std::function<void(absl::Status)> done) override {
    if (durable) return done(*durable);
    absl::MutexLock lock(&mu_);
    held_durable_ = std::move(done);
  }
  void Settle(absl::Status outcome) {
    std::function<void(absl::Status)> done;
    {
      absl::MutexLock lock(&mu_);
      done = std::move(held_durable_);
    }
    ASSERT_TRUE(done) << "no AwaitDurable is waiting";
    done(std::move(outcome));
  }
  absl::StatusOr<v1::AllocateResponse> Allocate(const std::string& pod_uid,
                                                const std::string& container,
                                                const std::string& container_id,
                                                const std::string& cgroup) override {
    absl::MutexLock lock(&mu_);
    allocates_.push_back({pod_uid, container, container_id, cgroup});
    v1::AllocateResponse response;
    response.mutable_container()->set_cpus("2-3");
    return response;
  }
  absl::Status Release(const std::string& pod_uid, const std::string& container,
                       const std::string& container_id) override {
    absl::MutexLock lock(&mu_);
    releases_.push_back({pod_uid, container, container_id});
    return release;
  }
  absl::StatusOr<v1::ListAllocationsResponse> ListAllocations() override { return listing; }

  std::vector<v1::PlanContainerRequest> plans() {
    absl::MutexLock lock(&mu_);
    return plans_;
  }
  std::vector<AllocateCall> allocates() {
    absl::MutexLock lock(&mu_);
    return allocates_;
  }
  std::vector<ReleaseCall> releases() {
    absl::MutexLock lock(&mu_);
    return releases_;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::PlanContainerRequest> plans_ ABSL_GUARDED_BY(mu_);
  std::vector<AllocateCall> allocates_ ABSL_GUARDED_BY(mu_);
  std::vector<ReleaseCall> releases_ ABSL_GUARDED_BY(mu_);
  std::function<void(absl::Status)> held_durable_ ABSL_GUARDED_BY(mu_);
};

// topologyd's answer placing container `name` on exclusive CPUs 2-3 and memory node 0.
v1::PlanContainerResponse Placed(const std::string& name, bool not_yet_durable = false) {
  v1::PlanContainerResponse reply;
  reply.set_outcome(v1::PlanContainerResponse::PLACED);
  reply.set_spec_source("annotation");
  v1::ContainerAllocation* container = reply.mutable_container();
  container->set_name(name);
  container->set_cpus("2-3");
  container->set_exclusive(true);
  container->add_memory_numa(0);
  container->set_cpu_quota_unlimited(true);
  v1::AdmitResponse* admission = reply.mutable_admission();
  admission->set_admitted(true);
  *admission->add_containers() = *container;
  admission->set_not_yet_durable(not_yet_durable);
  admission->set_state_generation(7);
  return reply;
}

cri::PodSandboxConfig SandboxConfig() {
  cri::PodSandboxConfig config;
  config.mutable_metadata()->set_uid(kPodUid);
  config.mutable_metadata()->set_namespace_("default");
  config.mutable_metadata()->set_name("web");
  config.mutable_linux()->set_cgroup_parent("/kubepods/pod" + std::string(kPodUid));
  config.mutable_linux()->mutable_resources()->set_cpu_quota(200000);
  return config;
}

cri::CreateContainerRequest Create(const std::string& name, uint32_t attempt = 0) {
  cri::CreateContainerRequest create;
  create.set_pod_sandbox_id(kSandboxId);
  *create.mutable_sandbox_config() = SandboxConfig();
  create.mutable_config()->mutable_metadata()->set_name(name);
  create.mutable_config()->mutable_metadata()->set_attempt(attempt);
  cri::LinuxContainerResources* resources =
      create.mutable_config()->mutable_linux()->mutable_resources();
  resources->set_cpu_shares(2048);
  resources->set_cpu_quota(200000);
  resources->set_cpu_period(100000);
  resources->set_memory_limit_in_bytes(1 << 30);
  return create;
}

// What the relay gets back from one filter step.
struct Answer {
  grpc::Status status;
  std::string bytes;
};

class CriHandlersTest : public ::testing::Test {
 protected:
  CriHandlersTest()
      : specs_(config_, std::nullopt),
        placer_(config_, &topologyd_, &specs_, &cache_, &book_, /*pod_quota=*/nullptr),
        pusher_(std::chrono::seconds(1), &runtime_, &cache_, &book_),
        resync_(config_, &runtime_, &topologyd_, &cache_, &book_, &placer_, &pusher_),
        handlers_(&placer_, &book_, &cache_, &specs_, &runtime_, std::chrono::seconds(1)),
        interceptor_(&handlers_, &workers_) {}

  // One call through its filter as the relay drives it: the step before, the runtime's answer
  // (`runtime`, given what was forwarded), the step after. `forwarded` gets what reached the
  // runtime (nullopt when the call was refused before).
  Answer Call(const std::string& method, const google::protobuf::Message& request,
              const std::function<Answer(const std::string& forwarded)>& runtime,
              std::optional<std::string>* forwarded = nullptr) {
    std::unique_ptr<cri_relay::CallFilter> filter = interceptor_.Intercept(
        {"/runtime.v1.RuntimeService/" + method, std::chrono::system_clock::now() + kDeadline});
    EXPECT_NE(filter, nullptr) << method << " is not intercepted";
    if (filter == nullptr) return {};
    Answer before = Wait(
        [&](auto done) { filter->BeforeForward(request.SerializeAsString(), std::move(done)); });
    if (forwarded != nullptr) *forwarded = std::nullopt;
    if (!before.status.ok()) return before;
    if (forwarded != nullptr) *forwarded = before.bytes;
    Answer from_runtime = runtime(before.bytes);
    return Wait([&](auto done) {
      filter->AfterForward(from_runtime.status, from_runtime.bytes, std::move(done));
    });
  }

  // The runtime answering OK with `response`.
  static std::function<Answer(const std::string&)> RuntimeAnswers(
      const google::protobuf::Message& response) {
    return [bytes = response.SerializeAsString()](const std::string&) {
      return Answer{grpc::Status::OK, bytes};
    };
  }
  static cri::CreateContainerResponse Created(const std::string& id) {
    cri::CreateContainerResponse response;
    response.set_container_id(id);
    return response;
  }

  // Creates container `name` as `id` through the filter; the forwarded request.
  cri::CreateContainerRequest CreateOk(const std::string& name, const std::string& id,
                                       uint32_t attempt = 0) {
    std::optional<std::string> forwarded;
    const Answer answer =
        Call("CreateContainer", Create(name, attempt), RuntimeAnswers(Created(id)), &forwarded);
    EXPECT_TRUE(answer.status.ok()) << answer.status.error_message();
    cri::CreateContainerRequest sent;
    EXPECT_TRUE(forwarded && sent.ParseFromString(*forwarded));
    return sent;
  }

  // topologyd's watch telling the shim the container is bound to `id`.
  void BoundInTopologyd(const std::string& name, const std::string& id) {
    v1::ListAllocationsResponse listing;
    listing.set_state_generation(8);
    v1::PodAllocation* pod = listing.add_pods();
    pod->set_uid(kPodUid);
    v1::ContainerAllocation* container = pod->add_containers();
    *container = Placed(name).container();
    container->set_container_id(id);
    cache_.Replace(listing);
    topologyd_.listing = listing;
  }

  static constexpr std::chrono::seconds kDeadline{30};
  ShimConfig config_;
  FakeTopologyd topologyd_;
  ::testing::NiceMock<cri::MockRuntimeServiceStub> runtime_;
  AllocationCache cache_;
  RuntimeBook book_;
  PodSpecResolver specs_;
  ContainerPlacer placer_;
  PlacementPusher pusher_;
  RuntimeResync resync_;
  CriHandlers handlers_;
  WorkQueue workers_{2};
  RelayInterceptor interceptor_;

 private:
  // Runs `step` with a `done` and waits for its answer (from whichever thread it comes).
  template <typename Step>
  static Answer Wait(Step step) {
    auto answer = std::make_shared<Answer>();
    auto answered = std::make_shared<absl::Notification>();
    step([answer, answered](grpc::Status status, std::string bytes) {
      *answer = {std::move(status), std::move(bytes)};
      answered->Notify();
    });
    EXPECT_TRUE(answered->WaitForNotificationWithTimeout(absl::Seconds(10)))
        << "the filter never answered";
    return *answer;
  }
};

TEST_F(CriHandlersTest, OnlyTheShimsMethodsAreIntercepted) {
  EXPECT_NE(interceptor_.Intercept({"/runtime.v1.RuntimeService/CreateContainer", {}}), nullptr);
  EXPECT_EQ(interceptor_.Intercept({"/runtime.v1.RuntimeService/ListContainers", {}}), nullptr);
  EXPECT_EQ(interceptor_.Intercept({"/runtime.v1.ImageService/PullImage", {}}), nullptr);
  EXPECT_EQ(interceptor_.Intercept({"CreateContainer", {}}), nullptr);
}

TEST_F(CriHandlersTest, CreateForwardsTopologydsPlacementAndBooksTheContainer) {
  topologyd_.plan = Placed("app");
  const cri::CreateContainerRequest sent = CreateOk("app", kContainerId);
  const cri::LinuxContainerResources& resources = sent.config().linux().resources();
  EXPECT_EQ(resources.cpuset_cpus(), "2-3");
  EXPECT_EQ(resources.cpuset_mems(), "0");
  EXPECT_EQ(resources.cpu_quota(), -1) << "an exclusive container runs without a CFS quota";
  EXPECT_EQ(resources.memory_limit_in_bytes(), 1 << 30) << "the rest is kubelet's";

  ASSERT_EQ(topologyd_.plans().size(), 1u);
  const v1::PlanContainerRequest asked = topologyd_.plans()[0];
  EXPECT_EQ(asked.pod().uid(), kPodUid);
  EXPECT_EQ(asked.container().name(), "app");
  EXPECT_TRUE(asked.answer_when_decided());

  const std::optional<ContainerRecord> booked = book_.Container(kContainerId);
  ASSERT_TRUE(booked);
  EXPECT_EQ(booked->pod_uid, kPodUid);
  EXPECT_EQ(booked->sandbox_id, kSandboxId);
  EXPECT_TRUE(book_.HasSandbox(kSandboxId)) << "learnt from the request's sandbox config";
  EXPECT_TRUE(book_.PushesDue(cache_.Bound()).empty());
}

TEST_F(CriHandlersTest, StartBindsTheContainerInTopologyd) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  cri::StartContainerRequest start;
  start.set_container_id(kContainerId);
  const Answer answer =
      Call("StartContainer", start, RuntimeAnswers(cri::StartContainerResponse()));
  ASSERT_TRUE(answer.status.ok()) << answer.status.error_message();
  ASSERT_EQ(topologyd_.allocates().size(), 1u);
  const FakeTopologyd::AllocateCall bound = topologyd_.allocates()[0];
  EXPECT_EQ(bound.pod_uid, kPodUid);
  EXPECT_EQ(bound.container, "app");
  EXPECT_EQ(bound.container_id, kContainerId);
  EXPECT_EQ(bound.cgroup, "kubepods/pod" + std::string(kPodUid) + "/" + kContainerId);
}

TEST_F(CriHandlersTest, StartTheRuntimeRefusedBindsNothing) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  cri::StartContainerRequest start;
  start.set_container_id(kContainerId);
  const Answer answer = Call("StartContainer", start, [](const std::string&) {
    return Answer{grpc::Status(grpc::StatusCode::NOT_FOUND, "gone"), ""};
  });
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::NOT_FOUND) << "the runtime's answer";
  EXPECT_TRUE(topologyd_.allocates().empty());
}

TEST_F(CriHandlersTest, RemoveReleasesTheBoundInstanceEvenWhenTheRuntimeFails) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  BoundInTopologyd("app", kContainerId);
  cri::RemoveContainerRequest remove;
  remove.set_container_id(kContainerId);
  const Answer answer = Call("RemoveContainer", remove, [](const std::string&) {
    return Answer{grpc::Status(grpc::StatusCode::UNKNOWN, "runtime hiccup"), ""};
  });
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNKNOWN);
  ASSERT_EQ(topologyd_.releases().size(), 1u);
  EXPECT_EQ(topologyd_.releases()[0].container, "app");
  EXPECT_EQ(topologyd_.releases()[0].container_id, kContainerId);
  EXPECT_FALSE(cache_.Find(kPodUid, "app")) << "released";
  EXPECT_FALSE(book_.Container(kContainerId));
}

TEST_F(CriHandlersTest, ARestartedContainerKeepsItsCpusAndItsOldInstanceIsNotReleased) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  BoundInTopologyd("app", kContainerId);
  // topologyd is down now: the held placement is used without asking it.
  topologyd_.plan = absl::UnavailableError("topologyd is restarting");
  const cri::CreateContainerRequest sent = CreateOk("app", kRestartedId, /*attempt=*/1);
  EXPECT_EQ(sent.config().linux().resources().cpuset_cpus(), "2-3");
  EXPECT_EQ(topologyd_.plans().size(), 1u) << "only the first creation asked topologyd";

  // kubelet's garbage collection removes the old instance while the new one runs.
  cri::RemoveContainerRequest remove;
  remove.set_container_id(kContainerId);
  ASSERT_TRUE(
      Call("RemoveContainer", remove, RuntimeAnswers(cri::RemoveContainerResponse())).status.ok());
  EXPECT_TRUE(topologyd_.releases().empty());
  EXPECT_TRUE(cache_.Find(kPodUid, "app"));
}

TEST_F(CriHandlersTest, ACreationTopologydDoesNotMakeDurableIsUndone) {
  topologyd_.plan = Placed("app", /*not_yet_durable=*/true);
  topologyd_.durable = absl::UnavailableError("the state file could not be written");
  EXPECT_CALL(runtime_, RemoveContainer(_, _, _))
      .WillOnce([](grpc::ClientContext*, const cri::RemoveContainerRequest& request,
                   cri::RemoveContainerResponse*) {
        EXPECT_EQ(request.container_id(), kContainerId);
        return grpc::Status::OK;
      });
  const Answer answer =
      Call("CreateContainer", Create("app"), RuntimeAnswers(Created(kContainerId)));
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(answer.status.error_message(), HasSubstr("placement on disk"));
  EXPECT_THAT(answer.status.error_message(), HasSubstr("could not be written"));
  EXPECT_FALSE(cache_.Find(kPodUid, "app")) << "kubelet's retry asks topologyd again";
  EXPECT_FALSE(book_.Container(kContainerId));
}

TEST_F(CriHandlersTest, KubeletHearsOfTheContainerOnlyOnceItsPlacementIsDurable) {
  topologyd_.plan = Placed("app", /*not_yet_durable=*/true);
  topologyd_.durable = std::nullopt;  // held
  std::unique_ptr<cri_relay::CallFilter> filter = interceptor_.Intercept(
      {"/runtime.v1.RuntimeService/CreateContainer", std::chrono::system_clock::now() + kDeadline});
  ASSERT_NE(filter, nullptr);
  absl::Notification forwarded;
  filter->BeforeForward(Create("app").SerializeAsString(), [&](grpc::Status status, std::string) {
    EXPECT_TRUE(status.ok());
    forwarded.Notify();
  });
  ASSERT_TRUE(forwarded.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::Notification answered;
  grpc::Status answer;
  filter->AfterForward(grpc::Status::OK, Created(kContainerId).SerializeAsString(),
                       [&](grpc::Status status, std::string) {
                         answer = std::move(status);
                         answered.Notify();
                       });
  EXPECT_FALSE(answered.WaitForNotificationWithTimeout(absl::Milliseconds(20)))
      << "answered before topologyd's decision was on disk";
  topologyd_.Settle(absl::OkStatus());
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(answer.ok()) << answer.error_message();
}

TEST_F(CriHandlersTest, TopologydDownRefusesTheContainerUnderFailurePolicyFail) {
  topologyd_.plan = absl::UnavailableError("connection refused");
  std::optional<std::string> forwarded;
  const Answer answer =
      Call("CreateContainer", Create("app"), RuntimeAnswers(Created(kContainerId)), &forwarded);
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(answer.status.error_message(), HasSubstr("not created until topologyd places it"));
  EXPECT_THAT(answer.status.error_message(), HasSubstr("connection refused"));
  EXPECT_FALSE(forwarded) << "nothing reached the runtime";
}

TEST_F(CriHandlersTest, TopologydDownLetsABestEffortContainerThroughUnderFailurePolicyIgnore) {
  config_.failure_policy = FailurePolicy::kIgnore;
  ContainerPlacer placer(config_, &topologyd_, &specs_, &cache_, &book_, nullptr);
  CriHandlers handlers(&placer, &book_, &cache_, &specs_, &runtime_, std::chrono::seconds(1));
  RelayInterceptor interceptor(&handlers, &workers_);
  topologyd_.plan = absl::UnavailableError("connection refused");
  cri::CreateContainerRequest create = Create("sidecar");
  create.mutable_config()->mutable_linux()->clear_resources();  // BestEffort: no requests
  std::unique_ptr<cri_relay::CallFilter> filter = interceptor.Intercept(
      {"/runtime.v1.RuntimeService/CreateContainer", std::chrono::system_clock::now() + kDeadline});
  ASSERT_NE(filter, nullptr);
  absl::Notification done;
  grpc::Status status;
  std::string bytes;
  filter->BeforeForward(create.SerializeAsString(), [&](grpc::Status s, std::string b) {
    status = std::move(s);
    bytes = std::move(b);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(bytes, create.SerializeAsString()) << "forwarded unchanged";
}

TEST_F(CriHandlersTest, ARefusalReachesKubeletWithTopologydsReason) {
  v1::PlanContainerResponse refused;
  refused.set_outcome(v1::PlanContainerResponse::REFUSED);
  refused.mutable_admission()->set_reason("TopologyAffinityError");
  refused.mutable_admission()->set_message("no NUMA node fits");
  topologyd_.plan = refused;
  const Answer answer =
      Call("CreateContainer", Create("app"), RuntimeAnswers(Created(kContainerId)));
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(answer.status.error_message(), "topologyd: TopologyAffinityError: no NUMA node fits");
}

TEST_F(CriHandlersTest, AnUndecodableRequestIsRefusedBeforeTheRuntime) {
  std::unique_ptr<cri_relay::CallFilter> filter =
      interceptor_.Intercept({"/runtime.v1.RuntimeService/CreateContainer", {}});
  ASSERT_NE(filter, nullptr);
  absl::Notification done;
  grpc::Status status;
  filter->BeforeForward("\xff\xff\xff", [&](grpc::Status s, std::string) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("cannot decode the CreateContainer request"));
}

TEST_F(CriHandlersTest, RunPodSandboxOfAnExclusivePodLiftsTheSandboxQuotaAndBooksIt) {
  topologyd_.plan = Placed("app");
  cri::RunPodSandboxRequest run;
  *run.mutable_config() = SandboxConfig();
  cri::RunPodSandboxResponse created;
  created.set_pod_sandbox_id(kSandboxId);
  std::optional<std::string> forwarded;
  const Answer answer = Call("RunPodSandbox", run, RuntimeAnswers(created), &forwarded);
  ASSERT_TRUE(answer.status.ok()) << answer.status.error_message();
  EXPECT_EQ(answer.bytes, created.SerializeAsString()) << "the runtime's answer, unchanged";
  cri::RunPodSandboxRequest sent;
  ASSERT_TRUE(forwarded && sent.ParseFromString(*forwarded));
  EXPECT_EQ(sent.config().linux().resources().cpu_quota(), -1);
  ASSERT_EQ(topologyd_.plans().size(), 1u);
  EXPECT_FALSE(topologyd_.plans()[0].has_container()) << "the whole pod, before any container";
  const std::optional<SandboxRecord> sandbox = book_.Sandbox(kSandboxId);
  ASSERT_TRUE(sandbox);
  EXPECT_EQ(sandbox->pod_uid, kPodUid);
  EXPECT_EQ(sandbox->cgroup_parent, "/kubepods/pod" + std::string(kPodUid));
}

TEST_F(CriHandlersTest, UpdateContainerResourcesKeepsTopologydsCpuset) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  cri::UpdateContainerResourcesRequest update;
  update.set_container_id(kContainerId);
  update.mutable_linux()->set_cpuset_cpus("0-31");
  update.mutable_linux()->set_cpu_shares(4096);
  std::optional<std::string> forwarded;
  ASSERT_TRUE(Call("UpdateContainerResources", update,
                   RuntimeAnswers(cri::UpdateContainerResourcesResponse()), &forwarded)
                  .status.ok());
  cri::UpdateContainerResourcesRequest sent;
  ASSERT_TRUE(forwarded && sent.ParseFromString(*forwarded));
  EXPECT_EQ(sent.linux().cpuset_cpus(), "2-3");
  EXPECT_EQ(sent.linux().cpu_shares(), 4096);
}

TEST_F(CriHandlersTest, StopOfAnOlderSandboxReleasesNothingStopOfTheNewestReleasesThePod) {
  topologyd_.plan = Placed("app");
  CreateOk("app", kContainerId);
  cri::RunPodSandboxRequest rerun;
  *rerun.mutable_config() = SandboxConfig();
  rerun.mutable_config()->mutable_metadata()->set_attempt(1);
  cri::RunPodSandboxResponse created;
  created.set_pod_sandbox_id("sandbox0002");
  ASSERT_TRUE(Call("RunPodSandbox", rerun, RuntimeAnswers(created)).status.ok());

  cri::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(kSandboxId);
  ASSERT_TRUE(
      Call("StopPodSandbox", stop, RuntimeAnswers(cri::StopPodSandboxResponse())).status.ok());
  EXPECT_TRUE(topologyd_.releases().empty()) << "the pod's new sandbox holds it";

  stop.set_pod_sandbox_id("sandbox0002");
  ASSERT_TRUE(
      Call("StopPodSandbox", stop, RuntimeAnswers(cri::StopPodSandboxResponse())).status.ok());
  ASSERT_EQ(topologyd_.releases().size(), 1u);
  EXPECT_EQ(topologyd_.releases()[0].pod_uid, kPodUid);
  EXPECT_EQ(topologyd_.releases()[0].container, "") << "the whole pod";
  EXPECT_FALSE(cache_.HoldsPod(kPodUid));
}

TEST_F(CriHandlersTest, ResyncReleasesAPodWithoutASandboxTheSecondTimeOnly) {
  BoundInTopologyd("app", kContainerId);
  EXPECT_CALL(runtime_, ListPodSandbox(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  EXPECT_CALL(runtime_, ListContainers(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  ASSERT_TRUE(resync_.Run().ok());
  EXPECT_TRUE(topologyd_.releases().empty())
      << "a pod admitted at RunPodSandbox has no sandbox yet";
  ASSERT_TRUE(resync_.Run().ok());
  ASSERT_EQ(topologyd_.releases().size(), 1u);
  EXPECT_EQ(topologyd_.releases()[0].pod_uid, kPodUid);
}

TEST_F(CriHandlersTest, ResyncPushesAPlacementTheRuntimeWasNotGiven) {
  BoundInTopologyd("app", kContainerId);
  cri::ListPodSandboxResponse sandboxes;
  cri::PodSandbox* sandbox = sandboxes.add_items();
  sandbox->set_id(kSandboxId);
  sandbox->set_state(cri::SANDBOX_READY);
  sandbox->mutable_metadata()->set_uid(kPodUid);
  EXPECT_CALL(runtime_, ListPodSandbox(_, _, _))
      .WillRepeatedly(DoAll(SetArgPointee<2>(sandboxes), Return(grpc::Status::OK)));
  EXPECT_CALL(runtime_, PodSandboxStatus(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  EXPECT_CALL(runtime_, ListContainers(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  EXPECT_CALL(runtime_, UpdateContainerResources(_, _, _))
      .WillOnce([](grpc::ClientContext*, const cri::UpdateContainerResourcesRequest& update,
                   cri::UpdateContainerResourcesResponse*) {
        EXPECT_EQ(update.container_id(), kContainerId);
        EXPECT_EQ(update.linux().cpuset_cpus(), "2-3");
        return grpc::Status::OK;
      });
  ASSERT_TRUE(resync_.Run().ok());
  ASSERT_TRUE(resync_.Run().ok()) << "taken: not pushed again";
  EXPECT_TRUE(topologyd_.releases().empty()) << "its sandbox is live";
}

TEST_F(CriHandlersTest, ResyncStopsWhenTheRuntimeDoesNotList) {
  EXPECT_CALL(runtime_, ListPodSandbox(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "no runtime")));
  const absl::Status status = resync_.Run();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("did not list its sandboxes"));
}

}  // namespace
}  // namespace topologyd::shim
