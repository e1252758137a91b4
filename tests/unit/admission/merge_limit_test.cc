// The merge limits in admission: a merge that exceeds AdmitOptions::merge_limits is a
// TopologyAffinityError rejection naming the sizes (not an error, not a guess), in Admit and
// Explain alike. merge_limit_corpus_test.cc checks the headroom of the defaults.
#include <string>

#include "gtest/gtest.h"

#include "lib/admission/admission.h"
#include "lib/admission/reasons.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

// Limits no merge with an upward-closed hint list fits in: reducing the CPU provider's list to
// its minimal masks already takes steps.
AdmitOptions Starved() {
  AdmitOptions options;
  options.merge_limits.max_steps = 1;
  return options;
}

pod::Pod GuaranteedPod(const std::string& uid) {
  return Pod(uid, {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}})});
}

TEST(MergeLimitTest, ExhaustedMergeIsATopologyAffinityRejection) {
  const NodePolicy node = Node(BaseConfig("best-effort"), Machine({}));
  const AllocationState state = node.empty_state;
  absl::StatusOr<AdmissionResult> r = Admit(node, state, GuaranteedPod("p1"), Starved());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->admitted);
  EXPECT_EQ(r->reason, kTopologyAffinityError);
  // kubelet's text first, then why, with the limit that was passed.
  EXPECT_TRUE(r->message.starts_with(std::string(kTopologyAffinityMessage) +
                                     ": container \"app\" (policy best-effort): the NUMA "
                                     "placement is too complex to decide: hint merge exceeds its "
                                     "work limit: more than 1 steps"))
      << r->message;
  EXPECT_NE(r->message.find("on 2 NUMA nodes"), std::string::npos) << r->message;
  // The list is named by its provider, not by its position among the providers.
  EXPECT_NE(r->message.find("(provider \"cpu\", resource \"cpu\")"), std::string::npos)
      << r->message;
  EXPECT_TRUE(r->containers.empty());
  EXPECT_TRUE(r->new_state == state);
  // The explanation records the merge that was given up.
  ASSERT_EQ(r->explanation.merges.size(), 1U);
  const MergeStep& step = r->explanation.merges[0];
  EXPECT_NE(step.limit_error.find("work limit"), std::string::npos);
  EXPECT_EQ(step.merged, (hints::MergeResult{hints::TopologyHint{std::nullopt, false}, false}));
}

TEST(MergeLimitTest, ExplainShowsTheExhaustedMerge) {
  config::Config config = BaseConfig("restricted");
  config.topology_manager_scope = "pod";
  const NodePolicy node = Node(config, Machine({}));
  absl::StatusOr<AdmissionResult> r =
      Explain(node, node.empty_state, GuaranteedPod("p1"), Starved());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->admitted);
  EXPECT_EQ(r->reason, kTopologyAffinityError);
  EXPECT_NE(r->message.find(": pod (policy restricted): the NUMA placement is too complex"),
            std::string::npos)
      << r->message;
  ASSERT_EQ(r->explanation.merges.size(), 1U);
  EXPECT_FALSE(r->explanation.merges[0].container.has_value());
  EXPECT_FALSE(r->explanation.merges[0].limit_error.empty());
  EXPECT_TRUE(r->new_state == AllocationState{});
}

TEST(MergeLimitTest, DefaultOptionsAreTheThreeArgumentForm) {
  const NodePolicy node = Node(BaseConfig("single-numa-node"), Machine({}));
  const pod::Pod pod = GuaranteedPod("p1");
  absl::StatusOr<AdmissionResult> plain = Admit(node, node.empty_state, pod);
  absl::StatusOr<AdmissionResult> with = Admit(node, node.empty_state, pod, AdmitOptions());
  ASSERT_TRUE(plain.ok() && with.ok());
  EXPECT_TRUE(plain->admitted);
  EXPECT_EQ(plain->containers, with->containers);
  EXPECT_EQ(plain->explanation, with->explanation);
  EXPECT_TRUE(plain->explanation.merges[0].limit_error.empty());
}

// Policy none merges nothing, so no limit can refuse it.
TEST(MergeLimitTest, PolicyNoneIsNeverRefusedForComplexity) {
  const NodePolicy node = Node(BaseConfig("none"), Machine({}));
  absl::StatusOr<AdmissionResult> r = Admit(node, node.empty_state, GuaranteedPod("p1"), Starved());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->admitted) << r->message;
}

}  // namespace
}  // namespace topologyd::admission
