// `topoctl explain`'s renderings of a decision, compiled in directly: the online JSON rebuilt
// from the daemon's ExplainResponse equals the offline document, and so does the one table
// both print, for ordinary merges and for a merge given up at its limits (which a daemon or hwloc
// machine with the production limits never gives up, so the binaries cannot show it).
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/admission/admission_json.h"
#include "lib/rpc/admission_proto.h"
#include "tests/unit/admission/admission_test_util.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_explain_online.h"
#include "tools/topoctl/support_explain_table.h"

namespace topoctl {

namespace {

namespace admission = ::topologyd::admission;
using namespace ::topologyd::admission::testing;  // NOLINT
using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  admission::NodePolicy node;
  topologyd::pod::Pod pod;
  admission::AdmissionResult result;
};

// Container scope, best-effort: "web" (a Burstable pod: no CPU or memory hints) merges for
// free; "gpu" needs merge steps. With `max_steps` 1 the second merge is given up.
Case Explained(uint64_t max_steps) {
  Case c{Node(BaseConfig("best-effort"), Machine(MachineSpec{.gpus_per_node = 1})),
         Pod("p1", {Ctr("web", {{"cpu", "500m"}}), Ctr("gpu", {{"nvidia.com/gpu", "1"}})}),
         {}};
  admission::AdmitOptions options;
  if (max_steps > 0) options.merge_limits.max_steps = max_steps;
  absl::StatusOr<admission::AdmissionResult> r =
      admission::Explain(c.node, c.node.empty_state, c.pod, options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) c.result = *std::move(r);
  return c;
}

// What `topoctl explain` prints online: the daemon's reply, rebuilt as JSON.
nlohmann::json OnlineDocument(const Case& c) {
  topologyd::v1::ExplainResponse response;
  topologyd::rpc::ExplainReplyToProto(
      {c.result, std::make_shared<const admission::NodePolicy>(c.node)}, {}, &response);
  return ExplainResponseToJson(response);
}

std::string Table(const nlohmann::json& doc, const ContainerMarks& marks = {}) {
  ::testing::internal::CaptureStdout();
  PrintExplainTable(doc, marks);
  return ::testing::internal::GetCapturedStdout();
}

std::string OnlineTable(const nlohmann::json& doc) { return Table(doc); }

// What the offline form prints: the same table, of the offline document.
std::string OfflineTable(const Case& c) {
  return Table(AdmissionResultToJson(c.node, c.result, true));
}

TEST(ExplainRenderTest, OrdinaryMergesHaveNoLimitError) {
  const Case c = Explained(/*max_steps=*/0);  // the production limits
  ASSERT_TRUE(c.result.admitted) << c.result.message;
  const nlohmann::json offline = AdmissionResultToJson(c.node, c.result, true);
  const nlohmann::json online = OnlineDocument(c);
  EXPECT_EQ(online, offline) << nlohmann::json::diff(offline, online).dump();
  ASSERT_EQ(online["merged"].size(), 2U);
  for (const nlohmann::json& merged : online["merged"]) {
    EXPECT_FALSE(merged.contains("limit_error")) << merged.dump();
  }
  EXPECT_THAT(OnlineTable(online), Not(HasSubstr("given up")));
  EXPECT_THAT(OfflineTable(c), Not(HasSubstr("given up")));
}

TEST(ExplainRenderTest, MergeGivenUpShowsItsLimitErrorOnlineAndOffline) {
  const Case c = Explained(/*max_steps=*/1);
  ASSERT_FALSE(c.result.admitted);
  ASSERT_EQ(c.result.explanation.merges.size(), 2U);
  const std::string limit_error = c.result.explanation.merges[1].limit_error;
  ASSERT_THAT(limit_error, HasSubstr("work limit"));

  // JSON: the same document online and offline; the key only on the given-up merge.
  const nlohmann::json offline = AdmissionResultToJson(c.node, c.result, true);
  const nlohmann::json online = OnlineDocument(c);
  EXPECT_EQ(online, offline) << nlohmann::json::diff(offline, online).dump();
  ASSERT_EQ(online["merged"].size(), 2U);
  EXPECT_FALSE(online["merged"][0].contains("limit_error"));
  EXPECT_EQ(online["merged"][1]["limit_error"], limit_error);

  // Tables: one line under the given-up merge.
  const std::string online_table = OnlineTable(online);
  EXPECT_THAT(online_table, HasSubstr("any not preferred, refused by the topology manager\n"
                                      "merge given up: " +
                                      limit_error + "\n"));
  EXPECT_EQ(online_table.find("given up"), online_table.rfind("given up"));  // once
  EXPECT_THAT(online_table, HasSubstr("\ncontainer gpu\n"));
  EXPECT_EQ(OfflineTable(c), online_table);
}

// One table online and offline: the decision in admit's words and columns first.
TEST(ExplainRenderTest, OnlineAndOfflineTablesAreTheSame) {
  const Case c = Explained(/*max_steps=*/0);
  const std::string table = OnlineTable(OnlineDocument(c));
  EXPECT_EQ(OfflineTable(c), table);
  EXPECT_THAT(table, ::testing::StartsWith("admitted\nCONTAINER  CPUS"));
  EXPECT_THAT(table, HasSubstr("MEMS"));
  EXPECT_THAT(table, Not(HasSubstr("Decision:")));
}

// A pod the merge admits but the CPU manager refuses: nothing above the refusal says "admit".
TEST(ExplainRenderTest, AMergeThatAdmitsDoesNotSayAdmitAboveARefusal) {
  Case c{Node(BaseConfig("best-effort"), Machine(MachineSpec{})),
         Pod("p1", {Ctr("app", {{"cpu", "512"}, {"memory", "1Gi"}})}),
         {}};
  absl::StatusOr<admission::AdmissionResult> r =
      admission::Explain(c.node, c.node.empty_state, c.pod, {});
  ASSERT_TRUE(r.ok()) << r.status();
  c.result = *std::move(r);
  ASSERT_FALSE(c.result.admitted);
  const std::string table = OfflineTable(c);
  EXPECT_THAT(table, ::testing::StartsWith("refused: "));
  EXPECT_THAT(table, Not(HasSubstr("admit")));
}

// The offline table marks init containers and sidecars.
TEST(ExplainRenderTest, OfflineTableMarksInitContainersAndSidecars) {
  Case c{Node(BaseConfig("best-effort"), Machine(MachineSpec{})),
         Pod("p1", {Ctr("app", {{"cpu", "1"}, {"memory", "1Gi"}})},
             {Ctr("setup", {{"cpu", "1"}, {"memory", "1Gi"}}),
              Ctr("proxy", {{"cpu", "1"}, {"memory", "1Gi"}}, /*sidecar=*/true)}),
         {}};
  absl::StatusOr<admission::AdmissionResult> r =
      admission::Explain(c.node, c.node.empty_state, c.pod, {});
  ASSERT_TRUE(r.ok()) << r.status();
  c.result = *std::move(r);
  ASSERT_TRUE(c.result.admitted) << c.result.message;
  ContainerMarks marks = {{"setup", " (init)"}, {"proxy", " (sidecar)"}};
  const std::string table = Table(AdmissionResultToJson(c.node, c.result, true), marks);
  EXPECT_THAT(table, HasSubstr("setup (init) "));
  EXPECT_THAT(table, HasSubstr("proxy (sidecar) "));
  EXPECT_THAT(table, Not(HasSubstr("app (")));
}

}  // namespace
}  // namespace topoctl
