// Tests of the proto forms of the engine's replies: each merge's ContainerExplanation,
// including why a merge was given up at its limits, and each container's cpu_quota_unlimited.
#include "lib/rpc/admission_proto.h"

#include <map>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;
using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::HasSubstr;

engine::ExplainReply Reply(const admission::NodePolicy& node, admission::AdmissionResult result) {
  return engine::ExplainReply{std::move(result),
                              std::make_shared<const admission::NodePolicy>(node)};
}

TEST(AdmissionProtoTest, OrdinaryMergeHasNoLimitError) {
  const admission::NodePolicy node = Node(BaseConfig("single-numa-node"), Machine({}));
  absl::StatusOr<admission::AdmissionResult> r = admission::Explain(
      node, node.empty_state, Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->admitted) << r->message;
  v1::ExplainResponse out;
  ExplainReplyToProto(Reply(node, *r), {}, &out);
  ASSERT_EQ(out.containers_size(), 1);
  const v1::ContainerExplanation& e = out.containers(0);
  EXPECT_EQ(e.name(), "app");
  EXPECT_TRUE(e.admit());
  EXPECT_FALSE(e.merged().any_numa());
  EXPECT_EQ(e.merged().numa_nodes_size(), 1);
  EXPECT_EQ(e.limit_error(), "");
}

TEST(AdmissionProtoTest, MergeGivenUpCarriesItsLimitError) {
  config::Config config = BaseConfig("restricted");
  config.topology_manager_scope = "pod";
  const admission::NodePolicy node = Node(config, Machine({}));
  admission::AdmitOptions starved;
  starved.merge_limits.max_steps = 1;
  absl::StatusOr<admission::AdmissionResult> r = admission::Explain(
      node, node.empty_state, Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})}), starved);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->explanation.merges.size(), 1U);
  const std::string limit_error = r->explanation.merges[0].limit_error;
  ASSERT_THAT(limit_error, HasSubstr("work limit"));
  v1::ExplainResponse out;
  ExplainReplyToProto(Reply(node, *r), {}, &out);
  EXPECT_FALSE(out.decision().admitted());
  EXPECT_EQ(out.decision().reason(), "TopologyAffinityError");
  ASSERT_EQ(out.containers_size(), 1);
  const v1::ContainerExplanation& e = out.containers(0);
  EXPECT_EQ(e.name(), "");  // pod scope
  EXPECT_TRUE(e.merged().any_numa());
  EXPECT_FALSE(e.merged().preferred());
  EXPECT_FALSE(e.admit());
  EXPECT_EQ(e.limit_error(), limit_error);
}

TEST(AdmissionProtoTest, NumaSplitGoesThereAndBack) {
  const admission::NodePolicy node = Node(BaseConfig("none"), Machine({}));
  absl::StatusOr<admission::AdmissionResult> r = admission::Explain(
      node, node.empty_state,
      Pod("p1", {Ctr("vm", {{"cpu", "4"}, {"memory", "2Gi"}})}, {},
          {{"topologyd.io/numa-nodes", "2"}, {"topologyd.io/numa-placement", "1,0"}}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->admitted) << r->message;
  v1::ExplainResponse out;
  ExplainReplyToProto(Reply(node, *r), {}, &out);
  ASSERT_TRUE(out.has_numa_split());
  EXPECT_TRUE(out.numa_split().placed_by_pod());
  ASSERT_EQ(out.numa_split().cells_size(), 2);
  EXPECT_EQ(out.numa_split().cells(0).numa_node(), 1);
  EXPECT_EQ(out.numa_split().cells(1).memory_bytes(), kGi);
  absl::StatusOr<ExplainedResult> back = ExplainResponseToResult(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->result.explanation.numa_split, r->explanation.numa_split);
  // Pods without the annotations carry none.
  r = admission::Explain(node, node.empty_state,
                         Pod("p2", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.ok()) << r.status();
  v1::ExplainResponse plain;
  ExplainReplyToProto(Reply(node, *r), {}, &plain);
  EXPECT_FALSE(plain.has_numa_split());
}

TEST(AdmissionProtoTest, ExclusiveContainersRunWithoutAQuotaUnlessTheGateIsOff) {
  const admission::NodePolicy node = Node(BaseConfig(), Machine({}));
  absl::StatusOr<admission::AdmissionResult> r =
      admission::Admit(node, node.empty_state,
                       Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}}),
                                  Ctr("helper", {{"cpu", "500m"}, {"memory", "256Mi"}})}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->admitted) << r->message;
  const engine::AdmitReply reply{.admitted = true,
                                 .reason = "",
                                 .message = "",
                                 .containers = r->containers,
                                 .generation = 1,
                                 .durable = true};
  auto unlimited = [](const v1::AdmitResponse& out) {
    std::map<std::string, bool> by_name;
    for (const v1::ContainerAllocation& c : out.containers()) {
      by_name[c.name()] = c.cpu_quota_unlimited();
    }
    return by_name;
  };
  v1::AdmitResponse on;
  AdmitReplyToProto(reply, FeatureGates{}, &on);
  EXPECT_EQ(unlimited(on), (std::map<std::string, bool>{{"app", true}, {"helper", false}}));
  FeatureGates gate_off;
  gate_off.disable_cpu_quota_with_exclusive_cpus = false;
  v1::AdmitResponse off;
  AdmitReplyToProto(reply, gate_off, &off);
  EXPECT_EQ(unlimited(off), (std::map<std::string, bool>{{"app", false}, {"helper", false}}));

  // Explain's decision and the listing say the same.
  v1::ExplainResponse explained;
  ExplainReplyToProto(Reply(node, *r), FeatureGates{}, &explained);
  EXPECT_EQ(unlimited(explained.decision()), unlimited(on));
  engine::AllocationsView listing;
  listing.state.generation = 1;
  listing.state.pods["p1"] = state::PodRecord{.uid = "p1",
                                              .namespace_name = "default",
                                              .name = "pod-p1",
                                              .qos = "Guaranteed",
                                              .containers = r->containers};
  v1::ListAllocationsResponse listed;
  AllocationsToProto(listing, FeatureGates{}, &listed);
  ASSERT_EQ(listed.pods_size(), 1);
  v1::AdmitResponse as_admitted;
  *as_admitted.mutable_containers() = listed.pods(0).containers();
  EXPECT_EQ(unlimited(as_admitted), unlimited(on));
}

}  // namespace
}  // namespace topologyd::rpc
