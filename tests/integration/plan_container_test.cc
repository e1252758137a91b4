// PlanContainer over the daemon's socket, in process: the pod as a container runtime shows it
// (sandbox metadata, annotations, cgroup parent, Linux resources) placed as Admit places it.
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include <grpcpp/grpcpp.h>

#include "daemon/daemon.h"
#include "tests/integration/in_process_client.h"
#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;
using Outcome = v1::PlanContainerResponse;

// kubelet's CRI resources for a Guaranteed container of `cpus` CPUs and 256 MiB.
v1::RuntimeContainer Guaranteed(const std::string& name, int cpus) {
  v1::RuntimeContainer c;
  c.set_name(name);
  c.mutable_resources()->set_cpu_period(100000);
  c.mutable_resources()->set_cpu_quota(cpus * 100000);
  c.mutable_resources()->set_cpu_shares(cpus * 1024);
  c.mutable_resources()->set_memory_limit_in_bytes(256 << 20);
  c.mutable_resources()->set_oom_score_adj(-997);
  return c;
}

// The number of CPUs in a Linux list ("1-3,8").
int CpuCount(const std::string& list) {
  int count = 0;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t dash = item.find('-');
    count += dash == std::string::npos
                 ? 1
                 : std::stoi(item.substr(dash + 1)) - std::stoi(item.substr(0, dash)) + 1;
  }
  return count;
}

v1::PlanContainerRequest Request(const std::string& uid, v1::RuntimeContainer container) {
  v1::PlanContainerRequest request;
  v1::RuntimePod* pod = request.mutable_pod();
  pod->set_uid(uid);
  pod->set_namespace_("default");
  pod->set_name("pod-" + uid);
  pod->set_cgroup_parent("kubepods/pod" + uid);
  *request.mutable_container() = std::move(container);
  return request;
}

class PlanContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.File("config.yaml"), MinimalConfig(dir_.path()));
    daemon_ = std::make_unique<daemon::Daemon>(dir_.File("config.yaml"));
    ASSERT_EQ(daemon_->Start(), 0);
  }
  void TearDown() override { EXPECT_EQ(daemon_->Stop(), 0); }

  grpc::Status Plan(const v1::PlanContainerRequest& request, v1::PlanContainerResponse* reply) {
    grpc::ClientContext context;
    Deadline(context);
    return Connect(*daemon_)->PlanContainer(&context, request, reply);
  }
  v1::PlanContainerResponse PlanOk(const v1::PlanContainerRequest& request) {
    v1::PlanContainerResponse reply;
    grpc::Status s = Plan(request, &reply);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return reply;
  }

  TempDir dir_;
  std::unique_ptr<daemon::Daemon> daemon_;
};

TEST_F(PlanContainerTest, AnEstimatedGuaranteedContainerGetsExclusiveCpusWithoutQuota) {
  v1::PlanContainerResponse reply = PlanOk(Request("u1", Guaranteed("app", 2)));
  EXPECT_EQ(reply.outcome(), Outcome::PLACED);
  EXPECT_EQ(reply.spec_source(), "estimate");
  EXPECT_FALSE(reply.unknown().empty());
  EXPECT_TRUE(reply.container().exclusive());
  EXPECT_EQ(reply.container().name(), "app");
  EXPECT_TRUE(reply.container().cpu_quota_unlimited());
  EXPECT_TRUE(reply.pod_cpu_quota_unlimited());
  EXPECT_TRUE(reply.admission().admitted());
  EXPECT_FALSE(reply.admission().instance().empty());

  // Asked again (a retried create, a restart): the same CPUs, nothing new admitted.
  v1::PlanContainerResponse again = PlanOk(Request("u1", Guaranteed("app", 2)));
  EXPECT_EQ(again.container().cpus(), reply.container().cpus());
  EXPECT_EQ(again.admission().state_generation(), reply.admission().state_generation());
}

TEST_F(PlanContainerTest, APlacedContainerIsBoundToTheCgroupNamedFromItsPodCgroup) {
  ASSERT_EQ(PlanOk(Request("u8", Guaranteed("app", 1))).outcome(), Outcome::PLACED);
  v1::AllocateRequest bind;
  bind.set_pod_uid("u8");
  bind.set_container_name("app");
  bind.set_container_id("abc123");
  bind.set_cgroup_parent("/kubepods/podu8");
  grpc::ClientContext context;
  Deadline(context);
  v1::AllocateResponse bound;
  grpc::Status s = Connect(*daemon_)->Allocate(&context, bind, &bound);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(bound.container().cgroup(), "kubepods/podu8/abc123");

  bind.set_cgroup_parent("/kubepods/../etc");
  grpc::ClientContext again;
  Deadline(again);
  s = Connect(*daemon_)->Allocate(&again, bind, &bound);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("cgroup_parent"), std::string::npos) << s.error_message();
}

TEST_F(PlanContainerTest, ASecondContainerJoinsThePodAndTheFirstKeepsItsCpus) {
  v1::PlanContainerResponse first = PlanOk(Request("u2", Guaranteed("a", 1)));
  v1::PlanContainerRequest second = Request("u2", Guaranteed("b", 2));
  *second.mutable_pod()->add_containers() = Guaranteed("a", 1);
  v1::PlanContainerResponse reply = PlanOk(second);
  ASSERT_EQ(reply.outcome(), Outcome::PLACED);
  ASSERT_EQ(reply.admission().containers_size(), 2);
  for (const v1::ContainerAllocation& c : reply.admission().containers()) {
    if (c.name() == "a") {
      EXPECT_EQ(c.cpus(), first.container().cpus());
    }
  }
  EXPECT_EQ(reply.container().name(), "b");
}

TEST_F(PlanContainerTest, TheAnnotationDecidesAndAContainerOutsideItIsNotPlaced) {
  v1::PlanContainerRequest request = Request("u3", Guaranteed("app", 1));
  (*request.mutable_pod()->mutable_annotations())["topologyd.io/resources"] =
      R"({"containers": [{"name": "app", "resources": {"limits": {"cpu": "3", "memory": "1Gi"}}}]})";
  v1::PlanContainerResponse reply = PlanOk(request);
  ASSERT_EQ(reply.outcome(), Outcome::PLACED);
  EXPECT_EQ(reply.spec_source(), "annotation");
  EXPECT_EQ(CpuCount(reply.container().cpus()), 3);  // the annotation's, not the CRI's 1

  *request.mutable_container() = Guaranteed("debugger", 1);
  v1::PlanContainerResponse debug = PlanOk(request);
  EXPECT_EQ(debug.outcome(), Outcome::NOT_PLACED);
  EXPECT_NE(debug.note().find("debugger"), std::string::npos);
}

// What the shim relays to the runtime for a malformed annotation names the annotation once.
TEST_F(PlanContainerTest, AMalformedAnnotationIsNamedOnce) {
  v1::PlanContainerRequest request = Request("u8", Guaranteed("app", 1));
  (*request.mutable_pod()->mutable_annotations())["topologyd.io/resources"] = ",";
  v1::PlanContainerResponse reply;
  const grpc::Status s = Plan(request, &reply);
  ASSERT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string& message = s.error_message();
  const std::string named = "annotation topologyd.io/resources: ";
  const size_t first = message.find(named);
  ASSERT_NE(first, std::string::npos) << message;
  EXPECT_EQ(message.find("topologyd.io/resources", first + named.size()), std::string::npos)
      << message;
}

TEST_F(PlanContainerTest, ASandboxWithAFullSpecAdmitsThePodWholeAndAnEstimatedOneWaits) {
  v1::PlanContainerRequest sandbox = Request("u7", Guaranteed("app", 1));
  sandbox.clear_container();
  v1::PlanContainerResponse estimated = PlanOk(sandbox);
  EXPECT_EQ(estimated.outcome(), Outcome::NOT_PLACED);

  (*sandbox.mutable_pod()->mutable_annotations())["topologyd.io/resources"] =
      R"({"initContainers": [{"name": "setup", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}],
          "containers": [{"name": "app", "resources": {"limits": {"cpu": "2", "memory": "64Mi"}}}]})";
  v1::PlanContainerResponse whole = PlanOk(sandbox);
  ASSERT_EQ(whole.outcome(), Outcome::PLACED);
  EXPECT_EQ(whole.admission().containers_size(), 2);
  EXPECT_TRUE(whole.container().name().empty());
  EXPECT_TRUE(whole.pod_cpu_quota_unlimited());

  // Its containers then find what the pod holds.
  v1::PlanContainerRequest app = sandbox;
  *app.mutable_container() = Guaranteed("app", 2);
  v1::PlanContainerResponse placed = PlanOk(app);
  ASSERT_EQ(placed.outcome(), Outcome::PLACED);
  EXPECT_EQ(CpuCount(placed.container().cpus()), 2);
  EXPECT_EQ(placed.admission().state_generation(), whole.admission().state_generation());
}

TEST_F(PlanContainerTest, APodTheNodeCannotHoldIsRefusedWithKubeletsReason) {
  v1::PlanContainerResponse reply = PlanOk(Request("u4", Guaranteed("app", 64)));
  EXPECT_EQ(reply.outcome(), Outcome::REFUSED);
  EXPECT_FALSE(reply.admission().admitted());
  EXPECT_EQ(reply.admission().reason(), "UnexpectedAdmissionError");
  EXPECT_TRUE(reply.container().name().empty());
}

TEST_F(PlanContainerTest, BadRequestsNameTheFieldAndChangeNothing) {
  struct Case {
    std::string field;
    std::function<void(v1::PlanContainerRequest*)> spoil;
  };
  const Case cases[] = {
      {"pod: required", [](v1::PlanContainerRequest* r) { r->clear_pod(); }},
      {"pod.containers[0].name",
       [](v1::PlanContainerRequest* r) { r->mutable_pod()->add_containers()->set_name(""); }},
      {"pod.uid", [](v1::PlanContainerRequest* r) { r->mutable_pod()->set_uid("a/b"); }},
      {"container.name",
       [](v1::PlanContainerRequest* r) { r->mutable_container()->set_name("Not_A_Label"); }},
      {"spec_sources.sources[0]",
       [](v1::PlanContainerRequest* r) { r->mutable_spec_sources()->add_sources("apiServer"); }},
      {"pod_spec.uid",
       [](v1::PlanContainerRequest* r) {
         v1::Pod* spec = r->mutable_pod_spec();
         spec->set_uid("other");
         spec->set_name("p");
         spec->add_containers()->set_name("app");
       }},
  };
  for (const Case& c : cases) {
    v1::PlanContainerRequest request = Request("u5", Guaranteed("app", 1));
    c.spoil(&request);
    v1::PlanContainerResponse reply;
    grpc::Status s = Plan(request, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_NE(s.error_message().find(c.field), std::string::npos) << s.error_message();
  }
  // No cgroup parent with a QoS class and no annotation: nothing to estimate from.
  v1::PlanContainerRequest no_qos = Request("u5", Guaranteed("app", 1));
  no_qos.mutable_pod()->set_cgroup_parent("/custom");
  v1::PlanContainerResponse reply;
  EXPECT_EQ(Plan(no_qos, &reply).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // Set but empty: no source of the daemon's own, so the caller's spec was needed.
  v1::PlanContainerRequest no_source = Request("u5", Guaranteed("app", 1));
  no_source.mutable_spec_sources();
  EXPECT_EQ(Plan(no_source, &reply).error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  grpc::ClientContext context;
  Deadline(context);
  v1::ListAllocationsResponse held;
  ASSERT_TRUE(Connect(*daemon_)->ListAllocations(&context, {}, &held).ok());
  EXPECT_EQ(held.pods_size(), 0);
}

TEST_F(PlanContainerTest, AnsweredWhenDecidedTheDecisionBecomesDurableOnAsking) {
  v1::PlanContainerRequest request = Request("u6", Guaranteed("app", 1));
  request.set_answer_when_decided(true);
  v1::PlanContainerResponse reply = PlanOk(request);
  ASSERT_EQ(reply.outcome(), Outcome::PLACED);
  grpc::ClientContext context;
  Deadline(context);
  v1::AwaitDurableRequest await;
  await.set_state_generation(reply.admission().state_generation());
  await.set_instance(reply.admission().instance());
  v1::AwaitDurableResponse durable;
  grpc::Status s = Connect(*daemon_)->AwaitDurable(&context, await, &durable);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GE(durable.state_generation(), reply.admission().state_generation());
}

}  // namespace
}  // namespace topologyd::testing
