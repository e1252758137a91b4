// The gRPC API through the generated client, against the real daemon: admit / allocate /
// release round trips, idempotent Admit, refusals as replies, and the status codes a shim
// relies on (INVALID_ARGUMENT naming the field or, for bytes that do not parse, the method;
// NOT_FOUND; RESOURCE_EXHAUSTED and the bounds on a pod's size), plus the standard health
// service and how failing checkpoint writes show; admitting a pod's containers one at a time,
// releasing one runtime instance of a container, and WatchAllocations streams.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "tests/integration/api_pods.h"
#include "tests/integration/immutable_directory.h"
#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

class GrpcApiTest : public ::testing::Test {
 protected:
  static constexpr char kService[] = "topologyd.v1.Topologyd";

  void SetUp() override {
    WriteFile(dir_.File("config.yaml"), MinimalConfig(dir_.path()));
    daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(dir_.File("topologyd.sock"), seconds(30)))
        << ReadFile(dir_.File("log"));
    channel_ = grpc::CreateChannel("unix:" + dir_.File("topologyd.sock"),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Topologyd::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + seconds(30));
    return context;
  }

  // Calls `method` ("/package.Service/Method") with `request` as the request's bytes,
  // however malformed; the reply's bytes when the call succeeds.
  std::pair<grpc::Status, std::string> RawCall(const std::string& method,
                                               const std::string& request) {
    grpc::GenericStub generic(channel_);
    grpc::Slice request_bytes(request);
    grpc::ByteBuffer request_buffer(&request_bytes, 1);
    grpc::ByteBuffer reply;
    grpc::CompletionQueue cq;
    auto context = Context();
    auto call = generic.PrepareUnaryCall(context.get(), method, request_buffer, &cq);
    call->StartCall();
    grpc::Status status;
    call->Finish(&reply, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    cq.Shutdown();  // a completion queue must be drained before it is destroyed
    while (cq.Next(&tag, &ok)) {
    }
    std::vector<grpc::Slice> slices;
    if (!status.ok() || !reply.Dump(&slices).ok()) return {status, ""};
    std::string bytes;
    for (const auto& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return {status, bytes};
  }

  // The bytes of grpc.health.v1.Health/Check's reply for `service` ("" = the whole server):
  // "\x08\x01" SERVING, "\x08\x02" NOT_SERVING; "" when the call fails.
  std::string HealthCheck(const std::string& service = "") {
    // HealthCheckRequest{service}: field 1, length-delimited (absent when empty).
    std::string encoded =
        service.empty() ? "" : "\x0a" + std::string(1, static_cast<char>(service.size())) + service;
    return RawCall("/grpc.health.v1.Health/Check", encoded).second;
  }

  // The daemon publishes its health between signals, at least once a second.
  bool WaitForHealth(const std::string& expected) {
    for (int i = 0; i < 200; ++i) {
      if (HealthCheck() == expected && HealthCheck(kService) == expected) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  // A context for a stream: the deadline only ends a stuck test.
  static std::unique_ptr<grpc::ClientContext> StreamContext() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + seconds(120));
    return context;
  }

  v1::ListAllocationsResponse List() {
    v1::ListAllocationsResponse list;
    grpc::Status s = stub_->ListAllocations(Context().get(), {}, &list);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return list;
  }

  v1::AdmitResponse Admit(const v1::Pod& pod) {
    v1::AdmitRequest request;
    *request.mutable_pod() = pod;
    v1::AdmitResponse response;
    grpc::Status s = stub_->Admit(Context().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  TempDir dir_;
  DaemonProcess daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
};

TEST_F(GrpcApiTest, AdmitAllocateReleaseRoundTrip) {
  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("p1", "2");
  v1::AdmitResponse admitted;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &admitted).ok());
  ASSERT_TRUE(admitted.admitted()) << admitted.reason() << ": " << admitted.message();
  ASSERT_EQ(admitted.containers_size(), 1);
  EXPECT_TRUE(admitted.containers(0).exclusive());
  const std::string cpus = admitted.containers(0).cpus();

  // Idempotent by uid.
  v1::AdmitResponse again;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &again).ok());
  EXPECT_EQ(again.containers(0).cpus(), cpus);
  EXPECT_EQ(again.state_generation(), admitted.state_generation());

  v1::AllocateRequest allocate;
  allocate.set_pod_uid("p1");
  allocate.set_container_name("app");
  allocate.set_container_id("abc123");
  allocate.set_cgroup("kubepods/podp1/abc123");
  v1::AllocateResponse bound;
  ASSERT_TRUE(stub_->Allocate(Context().get(), allocate, &bound).ok());
  EXPECT_EQ(bound.container().cpus(), cpus);
  EXPECT_EQ(bound.container().cgroup(), "kubepods/podp1/abc123");

  v1::ListAllocationsResponse list;
  ASSERT_TRUE(stub_->ListAllocations(Context().get(), {}, &list).ok());
  ASSERT_EQ(list.pods_size(), 1);
  EXPECT_EQ(list.pods(0).containers(0).container_id(), "abc123");

  v1::ReleaseRequest release;
  release.set_pod_uid("p1");
  v1::ReleaseResponse released;
  ASSERT_TRUE(stub_->Release(Context().get(), release, &released).ok());
  EXPECT_GT(released.state_generation(), admitted.state_generation());
  ASSERT_TRUE(stub_->ListAllocations(Context().get(), {}, &list).ok());
  EXPECT_EQ(list.pods_size(), 0);
}

TEST_F(GrpcApiTest, AnAdmissionAnsweredWhenDecidedIsConfirmedByAwaitDurable) {
  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("p1", "2");
  admit.set_answer_when_decided(true);
  v1::AdmitResponse decided;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &decided).ok());
  ASSERT_TRUE(decided.admitted()) << decided.message();
  // Nothing else is being written: the answer comes before its own write.
  EXPECT_TRUE(decided.not_yet_durable());
  EXPECT_THAT(decided.instance(), ::testing::MatchesRegex("[0-9a-f]{32}"));

  v1::AwaitDurableRequest await;
  await.set_state_generation(decided.state_generation());
  await.set_instance(decided.instance());
  v1::AwaitDurableResponse durable;
  grpc::Status s = stub_->AwaitDurable(Context().get(), await, &durable);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(durable.state_generation(), decided.state_generation());
  v1::StatusResponse status;
  ASSERT_TRUE(stub_->Status(Context().get(), {}, &status).ok());
  EXPECT_GE(status.checkpoint().durable_generation(), decided.state_generation());
  EXPECT_THAT(ReadFile(dir_.File("state/state.json")), HasSubstr("\"p1\""));

  // Admitted again without the option: the same decision, durable, from the same instance.
  v1::AdmitResponse again = Admit(GuaranteedPod("p1", "2"));
  EXPECT_FALSE(again.not_yet_durable());
  EXPECT_EQ(again.instance(), decided.instance());
  EXPECT_EQ(again.containers(0).cpus(), decided.containers(0).cpus());

  struct Case {
    std::string name;
    uint64_t generation;
    std::string instance;
    grpc::StatusCode code;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"no instance", 1, "", grpc::StatusCode::INVALID_ARGUMENT, "instance: required"},
           {"another instance", 1, "0123456789abcdef0123456789abcdef",
            grpc::StatusCode::FAILED_PRECONDITION, "admit again"},
           {"a generation not reached", decided.state_generation() + 5, decided.instance(),
            grpc::StatusCode::INVALID_ARGUMENT, "has not been reached"}}) {
    await.set_state_generation(c.generation);
    await.set_instance(c.instance);
    s = stub_->AwaitDurable(Context().get(), await, &durable);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.name;
  }
}

TEST_F(GrpcApiTest, AwaitDurableReportsACheckpointThatCannotBeWritten) {
  const std::string state_dir = dir_.File("state");
  ImmutableDirectory immutable(state_dir);
  if (!immutable.skip_reason().empty()) GTEST_SKIP() << immutable.skip_reason();
  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("p1", "2");
  admit.set_answer_when_decided(true);
  v1::AdmitResponse decided;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &decided).ok());
  ASSERT_TRUE(decided.admitted());
  EXPECT_TRUE(decided.not_yet_durable());
  v1::AwaitDurableRequest await;
  await.set_state_generation(decided.state_generation());
  await.set_instance(decided.instance());
  v1::AwaitDurableResponse durable;
  grpc::Status s = stub_->AwaitDurable(Context().get(), await, &durable);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("is not durable"));
}

TEST_F(GrpcApiTest, RefusalIsAReplyNotAnError) {
  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("huge", "64");
  v1::AdmitResponse response;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &response).ok());
  EXPECT_FALSE(response.admitted());
  EXPECT_FALSE(response.reason().empty());
  EXPECT_THAT(response.message(), HasSubstr("not enough cpus"));
}

TEST_F(GrpcApiTest, BadRequestsNameTheField) {
  v1::AdmitResponse response;
  grpc::Status s = stub_->Admit(Context().get(), v1::AdmitRequest(), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("pod"));

  v1::AdmitRequest bad_quantity;
  *bad_quantity.mutable_pod() = GuaranteedPod("q", "two");
  s = stub_->Admit(Context().get(), bad_quantity, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("containers[0]"));

  v1::AdmitRequest bad_uid;
  *bad_uid.mutable_pod() = GuaranteedPod("../../etc", "1");
  s = stub_->Admit(Context().get(), bad_uid, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("uid"));

  v1::AllocateRequest allocate;
  allocate.set_pod_uid("p");
  allocate.set_container_name("app");
  v1::AllocateResponse bound;
  s = stub_->Allocate(Context().get(), allocate, &bound);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("container_id"));

  // Allocate and Release hold uids and container names to Admit's rules, quoting what they
  // refuse instead of echoing it.
  allocate.set_container_id("c1");
  allocate.set_pod_uid(std::string(100000, 'x'));
  s = stub_->Allocate(Context().get(), allocate, &bound);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("pod_uid: invalid uid \"xxx"));
  EXPECT_LT(s.error_message().size(), 200u);
  allocate.set_pod_uid("p");
  allocate.set_container_name("App\n");
  s = stub_->Allocate(Context().get(), allocate, &bound);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("container_name: invalid container name \"App\\x0a\""));
  v1::ReleaseRequest release;
  release.set_pod_uid("../x");
  v1::ReleaseResponse released;
  s = stub_->Release(Context().get(), release, &released);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("pod_uid: invalid uid \"../x\""));
  release.set_pod_uid("p");
  release.set_container_name("a b");
  EXPECT_EQ(stub_->Release(Context().get(), release, &released).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A request that does not parse is a bad request like any other, naming the method; gRPC's
// generated handler had answered it UNIMPLEMENTED with no message, as if the method were unknown.
TEST_F(GrpcApiTest, RequestsThatDoNotParseAreInvalidArguments) {
  // AdmitRequest{pod: Pod{uid: "\xff\xfe"}}: a string field that is not UTF-8.
  const std::string bad_utf8 = std::string("\x0a\x04\x0a\x02\xff\xfe", 6);
  auto [status, reply] = RawCall("/topologyd.v1.Topologyd/Admit", bad_utf8);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("Admit: the request does not parse as "
                                                "topologyd.v1.AdmitRequest"));
  // A field header announcing more bytes than follow.
  for (const char* method :
       {"Allocate", "Release", "Explain", "ListAllocations", "GetTopology", "Status",
        "WatchAllocations", "GetNodeResourceTopology", "AwaitDurable"}) {
    std::tie(status, reply) =
        RawCall(fmt::format("/topologyd.v1.Topologyd/{}", method), "\x0a\x7f\xff\xff");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(status.error_message(),
                HasSubstr(fmt::format("{}: the request does not parse", method)));
  }
  // Nothing was admitted, and a well-formed request still works.
  v1::ListAllocationsResponse list;
  ASSERT_TRUE(stub_->ListAllocations(Context().get(), {}, &list).ok());
  EXPECT_EQ(list.pods_size(), 0);
  // An unknown method stays unknown.
  std::tie(status, reply) = RawCall("/topologyd.v1.Topologyd/Forget", "");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

// Bounds on a pod's size (docs/api.md, "Validation and limits"), with their defaults: each
// refusal names its limit, and the daemon keeps serving.
TEST_F(GrpcApiTest, OversizedPodsAreRefusedNamingTheLimit) {
  v1::AdmitResponse response;
  v1::AdmitRequest too_big;  // over limits.requestBytes (1 MiB): gRPC refuses it unread
  *too_big.mutable_pod() = GuaranteedPod("big", "1");
  (*too_big.mutable_pod()->mutable_annotations())["a"] = std::string(1100 * 1024, 'x');
  grpc::Status s = stub_->Admit(Context().get(), too_big, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("1048576"));

  v1::AdmitRequest annotated;  // under 1 MiB, over the API server's 256 KiB of annotations
  *annotated.mutable_pod() = GuaranteedPod("annotated", "1");
  (*annotated.mutable_pod()->mutable_annotations())["a"] = std::string(300 * 1024, 'x');
  s = stub_->Admit(Context().get(), annotated, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("pod.annotations: annotations total 307201 bytes"));
  EXPECT_THAT(s.error_message(), HasSubstr("at most 262144 (256 KiB)"));

  v1::AdmitRequest crowded;  // 257 containers, over limits.containersPerPod (256)
  *crowded.mutable_pod() = GuaranteedPod("crowded", "1");
  for (int i = 1; i < 257; ++i) {
    *crowded.mutable_pod()->add_containers() = crowded.pod().containers(0);
    crowded.mutable_pod()->mutable_containers(i)->set_name("c" + std::to_string(i));
  }
  s = stub_->Admit(Context().get(), crowded, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("pod.containers: 257 containers (init and app); this node admits at most "
                        "256 per pod (limits.containersPerPod)"));

  v1::AdmitRequest ok;
  *ok.mutable_pod() = GuaranteedPod("ok", "1");
  s = stub_->Admit(Context().get(), ok, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(response.admitted());
}

// limits.containersPerPod is live: a reload applies it to the next request.
TEST_F(GrpcApiTest, AReloadedContainerBoundAppliesToTheNextRequest) {
  v1::ExplainRequest two;  // Explain changes nothing, so the same pod can be asked again
  *two.mutable_pod() = GuaranteedPod("two", "1");
  *two.mutable_pod()->add_containers() = two.pod().containers(0);
  two.mutable_pod()->mutable_containers(1)->set_name("side");
  v1::ExplainResponse explained;
  grpc::Status s = stub_->Explain(Context().get(), two, &explained);
  ASSERT_TRUE(s.ok()) << s.error_message();

  WriteFile(dir_.File("config.yaml"),
            MinimalConfig(dir_.path(), "limits: {containersPerPod: 1}\n"));
  daemon_.Signal(SIGHUP);
  // The reload is asynchronous to the signal.
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  do {
    s = stub_->Explain(Context().get(), two, &explained);
    if (!s.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("pod.containers: 2 containers (init and app); this "
                                           "node admits at most 1 per pod"));
}

// The largest pod the default limits accept (256 containers, a quarter of them init
// containers, and 256 KiB of annotations) is admitted while Status keeps answering: no one
// request holds the engine for long (the watchdog, kubelet's probes and other clients wait on
// it). Each Status call gets 5 s, a sixth of the shipped WatchdogSec.
TEST_F(GrpcApiTest, TheLargestAcceptedPodIsAdmittedWhileStatusKeepsAnswering) {
  v1::AdmitRequest largest;
  v1::Pod& pod = *largest.mutable_pod();
  pod = GuaranteedPod("largest", "100m");
  pod.clear_containers();
  for (int i = 0; i < 256; ++i) {
    v1::Container* c = i % 4 == 0 ? pod.add_init_containers() : pod.add_containers();
    c->set_name("c" + std::to_string(i));
    (*c->mutable_requests())["cpu"] = "100m";
    (*c->mutable_requests())["memory"] = "1Mi";
    *c->mutable_limits() = c->requests();
  }
  (*pod.mutable_annotations())["example.com/a"] = std::string(256 * 1024 - 13, 'x');

  std::atomic<bool> admitting = true;
  std::atomic<int> answered = 0;
  std::atomic<int> failed = 0;
  std::thread status([&] {
    while (admitting) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + seconds(5));
      v1::StatusResponse response;
      if (stub_->Status(&context, {}, &response).ok()) {
        ++answered;
      } else {
        ++failed;
      }
    }
  });
  v1::AdmitResponse response;
  const grpc::Status admitted = stub_->Admit(Context().get(), largest, &response);
  admitting = false;
  status.join();
  ASSERT_TRUE(admitted.ok()) << admitted.error_message();
  EXPECT_TRUE(response.admitted()) << response.reason() << ": " << response.message();
  EXPECT_EQ(response.containers_size(), 256);
  EXPECT_EQ(failed, 0);
  EXPECT_GE(answered, 1);
  // Admitting it again answers from what it holds.
  v1::AdmitResponse again;
  ASSERT_TRUE(stub_->Admit(Context().get(), largest, &again).ok());
  EXPECT_EQ(again.state_generation(), response.state_generation());
}

TEST_F(GrpcApiTest, UnknownPodsAreNotFoundAndEscapingCgroupsAreRefused) {
  v1::ReleaseRequest release;
  release.set_pod_uid("nobody");
  v1::ReleaseResponse released;
  EXPECT_EQ(stub_->Release(Context().get(), release, &released).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("p2", "1");
  v1::AdmitResponse admitted;
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &admitted).ok());
  v1::AllocateRequest allocate;
  allocate.set_pod_uid("p2");
  allocate.set_container_name("app");
  allocate.set_container_id("c2");
  allocate.set_cgroup("../../../etc");
  v1::AllocateResponse bound;
  grpc::Status s = stub_->Allocate(Context().get(), allocate, &bound);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cgroup"));
  allocate.set_container_name("other");
  allocate.set_cgroup("kubepods/p2");
  EXPECT_EQ(stub_->Allocate(Context().get(), allocate, &bound).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

v1::Container CpuContainer(const std::string& name, const std::string& cpu) {
  v1::Container c;
  c.set_name(name);
  (*c.mutable_requests())["cpu"] = cpu;
  (*c.mutable_requests())["memory"] = "128Mi";
  *c.mutable_limits() = c.requests();
  return c;
}

// A shim that learns a pod's containers one at a time admits each into the admitted pod: the
// containers it holds keep what they hold, the new one gets its own, and a refusal of the new
// one leaves the others as they were.
TEST_F(GrpcApiTest, AdmittingContainersOneAtATime) {
  v1::Pod pod = GuaranteedPod("p1", "2");
  const v1::AdmitResponse a = Admit(pod);
  ASSERT_TRUE(a.admitted()) << a.message();
  ASSERT_EQ(a.containers_size(), 1);

  v1::Pod refused_pod = pod;
  *refused_pod.add_containers() = CpuContainer("big", "64");
  const v1::AdmitResponse refused = Admit(refused_pod);
  EXPECT_FALSE(refused.admitted());
  EXPECT_THAT(refused.message(), HasSubstr("containers not held yet were not allocated: big"));
  v1::ListAllocationsResponse list = List();
  ASSERT_EQ(list.pods_size(), 1);
  ASSERT_EQ(list.pods(0).containers_size(), 1);
  EXPECT_EQ(list.pods(0).containers(0).cpus(), a.containers(0).cpus());

  *pod.add_containers() = CpuContainer("b", "2");
  const v1::AdmitResponse both = Admit(pod);
  ASSERT_TRUE(both.admitted()) << both.message();
  EXPECT_GT(both.state_generation(), a.state_generation());
  ASSERT_EQ(both.containers_size(), 2);
  EXPECT_EQ(both.containers(0).name(), "app");
  EXPECT_EQ(both.containers(0).cpus(), a.containers(0).cpus()) << "app keeps its CPUs";
  EXPECT_EQ(both.containers(1).name(), "b");
  EXPECT_TRUE(both.containers(1).exclusive());
  EXPECT_NE(both.containers(1).cpus(), a.containers(0).cpus());

  // Sending {app} again answers with every container the pod holds, changing nothing.
  const v1::AdmitResponse again = Admit(GuaranteedPod("p1", "2"));
  ASSERT_TRUE(again.admitted());
  EXPECT_EQ(again.state_generation(), both.state_generation());
  ASSERT_EQ(again.containers_size(), 2);
  EXPECT_EQ(again.containers(1).cpus(), both.containers(1).cpus());
}

// kubelet's garbage collection removes the old instance of a restarted container while the
// new one runs: a release naming the old runtime container id changes nothing.
TEST_F(GrpcApiTest, ReleaseOnlyTheBoundRuntimeInstance) {
  ASSERT_TRUE(Admit(GuaranteedPod("p1", "2")).admitted());
  v1::AllocateRequest allocate;
  allocate.set_pod_uid("p1");
  allocate.set_container_name("app");
  allocate.set_container_id("new");
  allocate.set_cgroup("kubepods/podp1/new");
  v1::AllocateResponse bound;
  ASSERT_TRUE(stub_->Allocate(Context().get(), allocate, &bound).ok());
  const uint64_t generation = List().state_generation();

  v1::ReleaseRequest release;
  release.set_pod_uid("p1");
  release.set_container_name("app");
  release.set_container_id("old");
  v1::ReleaseResponse released;
  grpc::Status s = stub_->Release(Context().get(), release, &released);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("is bound to runtime container new, not old"));
  v1::ListAllocationsResponse list = List();
  EXPECT_EQ(list.state_generation(), generation);
  ASSERT_EQ(list.pods_size(), 1);
  EXPECT_EQ(list.pods(0).containers(0).container_id(), "new");

  // Unknown pods and containers stay NOT_FOUND; an id needs a container; ids are checked.
  release.set_pod_uid("nobody");
  EXPECT_EQ(stub_->Release(Context().get(), release, &released).error_code(),
            grpc::StatusCode::NOT_FOUND);
  release.set_pod_uid("p1");
  release.set_container_name("other");
  EXPECT_EQ(stub_->Release(Context().get(), release, &released).error_code(),
            grpc::StatusCode::NOT_FOUND);
  release.set_container_name("");
  s = stub_->Release(Context().get(), release, &released);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("container_id: only with container_name"));
  release.set_container_name("app");
  release.set_container_id("../x");
  s = stub_->Release(Context().get(), release, &released);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("container_id"));
  EXPECT_EQ(List().pods_size(), 1);

  release.set_container_id("new");
  s = stub_->Release(Context().get(), release, &released);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(released.state_generation(), generation);
  EXPECT_EQ(List().pods_size(), 0);
}

bool SameAllocations(const v1::ListAllocationsResponse& a, const v1::ListAllocationsResponse& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

TEST_F(GrpcApiTest, WatchAllocationsSendsTheStateThenEachDurableChange) {
  auto context = StreamContext();
  auto stream = stub_->WatchAllocations(context.get(), {});
  v1::ListAllocationsResponse message;
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_TRUE(SameAllocations(message, List())) << message.DebugString();
  EXPECT_EQ(message.pods_size(), 0);
  const std::string all = message.shared_pool();  // kubelet's shared pool holds the reserved CPUs
  EXPECT_EQ(all, "0-15");

  const v1::AdmitResponse admitted = Admit(GuaranteedPod("p1", "2"));
  ASSERT_TRUE(admitted.admitted());
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_EQ(message.state_generation(), admitted.state_generation());
  ASSERT_EQ(message.pods_size(), 1);
  EXPECT_EQ(message.pods(0).containers(0).cpus(), admitted.containers(0).cpus());
  EXPECT_NE(message.shared_pool(), all) << "the shared pool shrank";
  EXPECT_EQ(message.shared_pool(), List().shared_pool());

  // An Admit that changes nothing sends nothing; the next change does.
  ASSERT_TRUE(Admit(GuaranteedPod("p1", "2")).admitted());
  v1::ReleaseRequest release;
  release.set_pod_uid("p1");
  v1::ReleaseResponse released;
  ASSERT_TRUE(stub_->Release(Context().get(), release, &released).ok());
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_EQ(message.state_generation(), released.state_generation());
  EXPECT_EQ(message.pods_size(), 0);
  EXPECT_EQ(message.shared_pool(), all);

  // The client cancels: the stream ends, and the daemon serves on.
  context->TryCancel();
  while (stream->Read(&message)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(Admit(GuaranteedPod("p2", "1")).admitted());
  v1::StatusResponse status;
  EXPECT_TRUE(stub_->Status(Context().get(), {}, &status).ok());
}

// A watcher that does not read while the state changes many times gets the newest state in
// the end, and at most one message per change (fewer when writes were coalesced).
TEST_F(GrpcApiTest, AWatcherThatFallsBehindGetsTheNewestState) {
  auto context = StreamContext();
  auto stream = stub_->WatchAllocations(context.get(), {});
  v1::ListAllocationsResponse message;
  ASSERT_TRUE(stream->Read(&message));
  constexpr int kChanges = 40;
  uint64_t last = 0;
  for (int i = 0; i < kChanges; ++i) {
    const v1::AdmitResponse admitted = Admit(GuaranteedPod(fmt::format("p{}", i % 5), "1"));
    if (admitted.admitted()) last = admitted.state_generation();
    if (i % 5 == 4) {
      for (int j = i - 4; j <= i; ++j) {
        v1::ReleaseRequest release;
        release.set_pod_uid(fmt::format("p{}", j % 5));
        v1::ReleaseResponse released;
        ASSERT_TRUE(stub_->Release(Context().get(), release, &released).ok());
        last = released.state_generation();
      }
    }
  }
  ASSERT_TRUE(Admit(GuaranteedPod("final", "3")).admitted());
  const v1::ListAllocationsResponse newest = List();
  ASSERT_GT(newest.state_generation(), last);
  int messages = 0;
  uint64_t previous = message.state_generation();
  while (message.state_generation() < newest.state_generation()) {
    ASSERT_TRUE(stream->Read(&message));
    ++messages;
    EXPECT_GT(message.state_generation(), previous) << "generations only grow";
    previous = message.state_generation();
  }
  EXPECT_TRUE(SameAllocations(message, newest)) << message.DebugString();
  EXPECT_LE(messages, static_cast<int>(newest.state_generation()));
  context->TryCancel();
}

TEST_F(GrpcApiTest, WatchAllocationsEndsUnavailableWhenTheDaemonStops) {
  auto context = StreamContext();
  auto stream = stub_->WatchAllocations(context.get(), {});
  v1::ListAllocationsResponse message;
  ASSERT_TRUE(stream->Read(&message));
  daemon_.Signal(SIGTERM);
  while (stream->Read(&message)) {
  }
  const grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE) << ended.error_message();
  EXPECT_THAT(ended.error_message(), HasSubstr("shutting down"));
  EXPECT_EQ(daemon_.WaitForExit(seconds(30)), 0) << ReadFile(dir_.File("log"));
}

TEST_F(GrpcApiTest, HealthServiceReportsServing) {
  EXPECT_EQ(HealthCheck(), "\x08\x01") << "HealthCheckResponse{status: SERVING}";
  EXPECT_EQ(HealthCheck(kService), "\x08\x01");
  EXPECT_EQ(HealthCheck("no.such.Service"), "") << "an unknown service is NOT_FOUND";
}

// A state directory that refuses writes (chattr +i stops even root): changes are answered
// UNAVAILABLE, Status and the health service say so, the log says it once; once the
// directory is writable again the retried change is acknowledged and all recovers.
TEST_F(GrpcApiTest, FailingCheckpointWritesShowUntilTheyRecover) {
  const std::string state_dir = dir_.File("state");
  ImmutableDirectory immutable(state_dir);
  if (!immutable.skip_reason().empty()) GTEST_SKIP() << immutable.skip_reason();

  v1::AdmitRequest admit;
  *admit.mutable_pod() = GuaranteedPod("p1", "2");
  v1::AdmitResponse admitted;
  grpc::Status refused = stub_->Admit(Context().get(), admit, &admitted);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("not acknowledged"));

  v1::StatusResponse status;
  ASSERT_TRUE(stub_->Status(Context().get(), {}, &status).ok());
  EXPECT_FALSE(status.healthy());
  EXPECT_EQ(status.checkpoint().path(), state_dir + "/state.json");
  EXPECT_EQ(status.checkpoint().failed_writes(), 1u);
  EXPECT_THAT(status.checkpoint().last_error(), HasSubstr("Operation not permitted"));
  EXPECT_THAT(status.problem(), HasSubstr("the state checkpoint cannot be written: "));
  EXPECT_THAT(status.problem(), HasSubstr("Operation not permitted"));
  EXPECT_FALSE(status.checkpoint().has_write_running()) << "no write is in progress";
  EXPECT_TRUE(WaitForHealth("\x08\x02")) << "health service did not turn NOT_SERVING";
  CommandResult table =
      RunCommand({TopoctlBinary(), "--socket", dir_.File("topologyd.sock"), "status"});
  EXPECT_THAT(table.out, HasSubstr("NOT ACKNOWLEDGING CHANGES: the state checkpoint cannot be "
                                   "written"));

  // topoctl says what happened, without asking whether the (running) daemon runs.
  WriteFile(dir_.File("p1.yaml"),
            "apiVersion: v1\nkind: Pod\nmetadata: {uid: p1, name: p1, namespace: default}\n"
            "spec:\n  containers:\n  - name: app\n    resources:\n"
            "      limits: {cpu: \"2\", memory: 128Mi}\n");
  CommandResult cli = RunCommand({TopoctlBinary(), "--socket", dir_.File("topologyd.sock"), "admit",
                                  "-f", dir_.File("p1.yaml")});
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_THAT(cli.err, HasSubstr("not acknowledged"));
  EXPECT_THAT(cli.err, Not(HasSubstr("is topologyd running")));

  immutable.MakeWritable();
  ASSERT_TRUE(stub_->Admit(Context().get(), admit, &admitted).ok());
  EXPECT_TRUE(admitted.admitted());
  ASSERT_TRUE(stub_->Status(Context().get(), {}, &status).ok());
  EXPECT_TRUE(status.healthy());
  EXPECT_EQ(status.checkpoint().last_error(), "");
  EXPECT_EQ(status.problem(), "");
  EXPECT_EQ(status.checkpoint().durable_generation(), status.state_generation());
  EXPECT_TRUE(WaitForHealth("\x08\x01")) << "health service did not turn SERVING again";
  const std::string log = ReadFile(dir_.File("log"));
  EXPECT_THAT(log, HasSubstr("state checkpoint write failed"));
  EXPECT_THAT(log, HasSubstr("state checkpoint writes succeed again, after 2 failed"));
}

}  // namespace
}  // namespace topologyd::testing
