// The JSON document of `topoctl admit|explain` (docs/cli.md, `admit`, plus the explanation).
#include "lib/admission/admission_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

TEST(AdmissionJsonTest, AdmittedPodWithExplanation) {
  const topology::Topology machine = Machine(MachineSpec{.gpus_per_node = 1});
  const NodePolicy node = Node(BaseConfig("single-numa-node"), machine);
  AdmissionResult r = MustAdmit(
      node, node.empty_state,
      Pod("p1", {Ctr("app", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  const nlohmann::json doc = AdmissionResultToJson(node, r, /*with_explanation=*/true);
  EXPECT_EQ(doc["admitted"], true);
  EXPECT_EQ(doc["reason"], "");
  ASSERT_EQ(doc["containers"].size(), 1U);
  const nlohmann::json& c = doc["containers"][0];
  EXPECT_EQ(c["name"], "app");
  EXPECT_EQ(c["exclusive"], true);
  EXPECT_EQ(c["cpus"], r.containers[0].cpus.ToString());
  EXPECT_EQ(c["numa_affinity"], nlohmann::json(r.containers[0].numa_affinity));
  EXPECT_EQ(c["memory_numa"], c["numa_affinity"]);
  EXPECT_EQ(c["devices"]["nvidia.com/gpu"].size(), 1U);
  EXPECT_EQ(doc["policy"], "single-numa-node");
  EXPECT_EQ(doc["scope"], "container");

  ASSERT_EQ(doc["hints"].size(), 1U);
  const nlohmann::json& providers = doc["hints"][0]["providers"];
  EXPECT_EQ(doc["hints"][0]["container"], "app");
  // Devices and CPUs: upward-closed form with the minimal masks.
  const nlohmann::json& gpu = providers["devices"]["nvidia.com/gpu"];
  EXPECT_EQ(gpu["upward_closed"], true);
  EXPECT_EQ(gpu["universe"], nlohmann::json({0, 1}));
  EXPECT_EQ(gpu["hints"], nlohmann::json::parse(R"([{"affinity":[0],"preferred":true},
                                                     {"affinity":[1],"preferred":true}])"));
  EXPECT_EQ(providers["cpu"]["cpu"]["upward_closed"], true);
  // Memory: kubelet's explicit list (every mask), one per memory type.
  ASSERT_TRUE(providers["memory"]["memory"].is_array());
  EXPECT_EQ(providers["memory"]["memory"].size(), 3U);
  EXPECT_EQ(providers["memory"]["memory"][2],
            nlohmann::json::parse(R"({"affinity":[0,1],"preferred":false})"));

  ASSERT_EQ(doc["merged"].size(), 1U);
  EXPECT_EQ(doc["merged"][0]["container"], "app");
  EXPECT_EQ(doc["merged"][0]["affinity"], nlohmann::json::array({0}));
  EXPECT_EQ(doc["merged"][0]["preferred"], true);
  EXPECT_EQ(doc["merged"][0]["admit"], true);
  EXPECT_FALSE(doc["merged"][0].contains("limit_error"));  // only for a merge given up

  const nlohmann::json plain = AdmissionResultToJson(node, r, /*with_explanation=*/false);
  EXPECT_FALSE(plain.contains("hints"));
  EXPECT_FALSE(plain.contains("merged"));
}

TEST(AdmissionJsonTest, NoPreferenceIsNullAndPodScopeHasNullContainer) {
  const topology::Topology machine = Machine(MachineSpec{});
  config::Config config = BaseConfig("best-effort");
  config.memory_manager_policy = "None";
  config.topology_manager_scope = "pod";
  const NodePolicy node = Node(config, machine);
  AdmissionResult r = MustAdmit(node, node.empty_state, Pod("p1", {Ctr("app", {{"cpu", "500m"}})}));
  ASSERT_TRUE(r.admitted);
  const nlohmann::json doc = AdmissionResultToJson(node, r, true);
  EXPECT_TRUE(doc["hints"][0]["container"].is_null());
  EXPECT_TRUE(doc["hints"][0]["providers"]["cpu"].is_null());
  EXPECT_TRUE(doc["hints"][0]["providers"]["memory"].is_null());
  EXPECT_EQ(doc["hints"][0]["providers"]["devices"], nlohmann::json::object());
  EXPECT_EQ(doc["merged"][0]["affinity"], nlohmann::json({0, 1}));
}

TEST(AdmissionJsonTest, OsIdsNotPositions) {
  // Sparse NUMA ids: the builder keeps OS ids; positions are 0..n-1.
  topology::Topology machine = Machine(MachineSpec{});
  machine.numa_nodes[1].id = 7;
  for (topology::Cpu& cpu : machine.cpus) {
    if (cpu.numa_id == 1) cpu.numa_id = 7;
  }
  config::Config config = BaseConfig("single-numa-node");
  config.memory_manager_policy = "None";
  config.devices.clear();
  const NodePolicy node = Node(config, machine);
  AllocationState state = node.empty_state;
  // Fill node 0 (CPUs 2-7 free) so the next container lands on node 7.
  AdmissionResult first =
      MustAdmit(node, state, Pod("p0", {Ctr("a", {{"cpu", "6"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(first.admitted) << first.message;
  AdmissionResult r =
      MustAdmit(node, first.new_state, Pod("p1", {Ctr("a", {{"cpu", "2"}, {"memory", "1Gi"}})}));
  ASSERT_TRUE(r.admitted) << r.message;
  EXPECT_EQ(r.containers[0].numa_affinity, std::vector<int>{7});
  const nlohmann::json doc = AdmissionResultToJson(node, r, true);
  EXPECT_EQ(doc["merged"][0]["affinity"], nlohmann::json({7}));
}

// A merge given up at its limits carries the merge's message; the others keep their shape.
TEST(AdmissionJsonTest, MergeGivenUpAtItsLimitsHasLimitError) {
  const NodePolicy node = Node(BaseConfig("best-effort"), Machine(MachineSpec{.gpus_per_node = 1}));
  AdmitOptions starved;
  starved.merge_limits.max_steps = 1;  // no upward-closed list fits
  // "web" (Burstable pod: no CPU or memory hints) merges for free; "gpu" needs steps.
  absl::StatusOr<AdmissionResult> r = Explain(
      node, node.empty_state,
      Pod("p1", {Ctr("web", {{"cpu", "500m"}}), Ctr("gpu", {{"nvidia.com/gpu", "1"}})}), starved);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->admitted);
  ASSERT_EQ(r->explanation.merges.size(), 2U);
  ASSERT_TRUE(r->explanation.merges[0].limit_error.empty());
  const std::string& limit_error = r->explanation.merges[1].limit_error;
  ASSERT_THAT(limit_error, ::testing::HasSubstr("work limit"));

  const nlohmann::json doc = AdmissionResultToJson(node, *r, /*with_explanation=*/true);
  ASSERT_EQ(doc["merged"].size(), 2U);
  EXPECT_EQ(doc["merged"][0], nlohmann::json::parse(R"({"container": "web", "affinity": [0, 1],
                                                        "preferred": true, "admit": true})"));
  const nlohmann::json& given_up = doc["merged"][1];
  EXPECT_EQ(given_up["container"], "gpu");
  EXPECT_TRUE(given_up["affinity"].is_null());
  EXPECT_EQ(given_up["preferred"], false);
  EXPECT_EQ(given_up["admit"], false);
  EXPECT_EQ(given_up["limit_error"], limit_error);
  EXPECT_THAT(r->message, ::testing::HasSubstr(limit_error));
}

}  // namespace
}  // namespace topologyd::admission
