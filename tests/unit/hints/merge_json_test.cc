#include "lib/hints/merge_json.h"

#include "gtest/gtest.h"

namespace topologyd::hints {
namespace {

TEST(MergeJsonTest, SparseIdsMapToPositionsAndBack) {
  // Ids 0, 1, 33 are positions 0, 1, 2; distances follow numa_nodes as given (unsorted here).
  absl::StatusOr<MergeRequest> req = ParseMergeRequest(R"({
    "numa_nodes": [33, 0, 1], "policy": "best-effort",
    "options": {"prefer-closest-numa-nodes": true},
    "distances": [[10, 31, 31], [31, 10, 11], [31, 11, 10]],
    "providers": [{"cpu": [{"affinity": [0, 33], "preferred": true},
                           {"affinity": [0, 1], "preferred": true}]}]})");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->node_ids, (std::vector<int>{0, 1, 33}));
  EXPECT_EQ(req->input.num_nodes, 3);
  EXPECT_EQ(req->input.distances[0][1], 11);
  EXPECT_EQ(req->input.distances[0][2], 31);
  MergeResult r = Merge(req->input);
  EXPECT_EQ(MergeResultToJson(r, req->node_ids),
            R"({"affinity":[0,1],"preferred":true,"admit":true})");
  MergeResult nil{TopologyHint{std::nullopt, false}, true};
  EXPECT_EQ(MergeResultToJson(nil, req->node_ids),
            R"({"affinity":null,"preferred":false,"admit":true})");
}

TEST(MergeJsonTest, NullsAndEmptyListsKeepKubeletMeaning) {
  absl::StatusOr<MergeRequest> req = ParseMergeRequest(R"({
    "numa_nodes": [0, 1], "policy": "restricted",
    "providers": [null, {}, {"a": null, "b": [], "c": [{"affinity": null, "preferred": false}]}]})");
  ASSERT_TRUE(req.ok()) << req.status();
  const auto& p = req->input.providers;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_FALSE(p[0].has_value());
  ASSERT_TRUE(p[1].has_value());
  EXPECT_TRUE(p[1]->empty());
  EXPECT_FALSE(p[2]->at("a").has_value());
  ASSERT_TRUE(p[2]->at("b").has_value());
  EXPECT_TRUE(p[2]->at("b")->hints.empty());
  EXPECT_FALSE(p[2]->at("c")->hints[0].affinity.has_value());
}

TEST(MergeJsonTest, RejectsBadRequestsWithClearMessages) {
  struct Case {
    const char* json;
    const char* fragment;
  } cases[] = {
      {"{", "not valid JSON"},
      {"[]", "JSON object"},
      {R"({"numa_nodes":[0],"policy":"restricted","providers":[],"extra":1})", "unknown key"},
      {R"({"policy":"restricted","providers":[]})", "numa_nodes"},
      {R"({"numa_nodes":[],"policy":"restricted","providers":[]})", "must not be empty"},
      {R"({"numa_nodes":[0,0],"policy":"restricted","providers":[]})", "listed twice"},
      {R"({"numa_nodes":[-1],"policy":"restricted","providers":[]})", "non-negative"},
      {R"({"numa_nodes":[0],"policy":"strict","providers":[]})", "unknown policy: \"strict\""},
      {R"({"numa_nodes":[0],"policy":"restricted"})", "providers"},
      {R"({"numa_nodes":[0],"policy":"restricted","providers":[{"cpu":[{"affinity":[1],"preferred":true}]}]})",
       "NUMA node 1 is not in numa_nodes"},
      {R"({"numa_nodes":[0],"policy":"restricted","providers":[{"cpu":[{"affinity":[0]}]}]})",
       "\"preferred\" must be a boolean"},
      {R"({"numa_nodes":[0],"policy":"restricted","providers":[{"cpu":[{"preferred":true}]}]})",
       "\"affinity\" is missing"},
      {R"({"numa_nodes":[0],"policy":"restricted","providers":[3]})", "null or an object"},
      {R"({"numa_nodes":[0,1],"policy":"restricted","distances":[[10]],"providers":[]})",
       "1 rows for 2 NUMA nodes"},
      {R"({"numa_nodes":[0],"policy":"restricted","options":{"prefer-closest-numa-nodes":true},"providers":[]})",
       "needs the NUMA distance matrix"},
      {R"({"numa_nodes":[0],"policy":"restricted","options":{"max-allowable-numa-nodes":4},"providers":[]})",
       "should not be less than 8"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<MergeRequest> req = ParseMergeRequest(c.json);
    ASSERT_FALSE(req.ok()) << c.json;
    EXPECT_NE(req.status().message().find(c.fragment), std::string::npos)
        << c.json << " -> " << req.status().message();
  }
}

TEST(MergeJsonTest, NodeLimits) {
  std::string nodes;
  for (int i = 0; i < 65; ++i) nodes += (i ? "," : "") + std::to_string(i);
  absl::StatusOr<MergeRequest> too_many =
      ParseMergeRequest(R"({"numa_nodes":[)" + nodes + R"(],"policy":"none","providers":[]})");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("at most 64"), std::string::npos);

  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += (i ? "," : "") + std::to_string(i * 4);
  const std::string base = R"({"numa_nodes":[)" + sixteen + R"(],"providers":[],"policy":)";
  EXPECT_TRUE(ParseMergeRequest(base + R"("restricted"})").ok());  // default limit 64
  absl::StatusOr<MergeRequest> limited =
      ParseMergeRequest(base + R"("restricted","options":{"max-allowable-numa-nodes":8}})");
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.status().message(), "unsupported on machines with more than 8 NUMA Nodes");
  // Policy none: kubelet neither parses options nor checks the limit.
  EXPECT_TRUE(ParseMergeRequest(base + R"("none","options":{"bogus":"x"}})").ok());
}

}  // namespace
}  // namespace topologyd::hints
