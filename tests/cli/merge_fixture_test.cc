// kubelet's own Topology Manager merge tables (tests/fixtures/merge/*.json, transcribed from
// policy_test.go), run through the library, the brute-force reference and the real
// `topoctl merge` binary. Every case must match in all three.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/hints/merge.h"
#include "lib/hints/merge_json.h"
#include "tests/support/shell.h"
#include "tests/unit/hints/reference_merge.h"

namespace topologyd::hints {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(TOPOLOGYD_SOURCE_DIR) / "tests/fixtures/merge";
const fs::path kTopoctl = fs::path(TOPOLOGYD_BINARY_DIR) / "tools/topoctl/topoctl";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> FixtureFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs topoctl; returns its exit code and fills `out` with stdout.
int RunTopoctl(const std::string& args, std::string& out) {
  topologyd::testing::ShellResult r = topologyd::testing::RunShell(kTopoctl.string() + " " + args);
  out = r.out;
  return r.exit_code;
}

TEST(MergeFixtureTest, KubeletTablesPassThroughLibraryReferenceAndTopoctl) {
  ASSERT_TRUE(fs::exists(kTopoctl)) << kTopoctl;
  const std::vector<fs::path> files = FixtureFiles();
  ASSERT_GE(files.size(), 5u);
  const fs::path scratch =
      fs::temp_directory_path() / ("topologyd-merge-fixture-" + std::to_string(getpid()) + ".json");
  int cases = 0;
  for (const fs::path& file : files) {
    Json fixture = Json::parse(ReadFile(file));
    ASSERT_TRUE(fixture.contains("cases")) << file;
    for (const Json& c : fixture["cases"]) {
      const std::string name = file.filename().string() + ": " + c["name"].get<std::string>();
      const std::string input = c["input"].dump();
      const Json& expected = c["expected"];
      ++cases;

      absl::StatusOr<MergeRequest> req = ParseMergeRequest(input);
      ASSERT_TRUE(req.ok()) << name << ": " << req.status();
      MergeResult lib = Merge(req->input);
      EXPECT_EQ(Json::parse(MergeResultToJson(lib, req->node_ids)), expected)
          << name << " (library)";
      absl::StatusOr<MergeResult> bounded = MergeWithin(req->input);
      ASSERT_TRUE(bounded.ok()) << name << ": " << bounded.status();
      EXPECT_EQ(*bounded, lib) << name << " (bounded)";
      EXPECT_EQ(reference::ReferenceMerge(req->input), lib) << name << " (reference)";

      std::ofstream(scratch) << input;
      std::string out;
      ASSERT_EQ(RunTopoctl("--output json merge --input " + scratch.string(), out), 0) << name;
      // One JSON document, as every command prints it.
      ASSERT_FALSE(out.empty()) << name;
      EXPECT_EQ(out.back(), '\n') << name;
      EXPECT_EQ(Json::parse(out), expected) << name << " (topoctl)";
    }
  }
  fs::remove(scratch);
  EXPECT_GE(cases, 100);
}

TEST(MergeFixtureTest, TopoctlExitCodes) {
  ASSERT_TRUE(fs::exists(kTopoctl)) << kTopoctl;
  const fs::path scratch =
      fs::temp_directory_path() / ("topologyd-merge-exit-" + std::to_string(getpid()) + ".json");
  struct Case {
    std::string input;
    int exit_code;
  } cases[] = {
      {R"({"numa_nodes":[0,1],"policy":"restricted","providers":[]})", 0},
      {R"({"numa_nodes":[0,1],"policy":"restricted","providers":[})", 1},
      {R"({"numa_nodes":[0,1],"policy":"preferred","providers":[]})", 1},
      {R"({"numa_nodes":[0,1],"policy":"restricted","providers":[{"cpu":[{"affinity":[7],"preferred":true}]}]})",
       1},
      {R"({"numa_nodes":[0,1],"policy":"restricted","options":{"bogus":true},"providers":[]})", 1},
  };
  std::string out;
  for (const Case& c : cases) {
    std::ofstream(scratch) << c.input;
    EXPECT_EQ(RunTopoctl("merge --input " + scratch.string(), out), c.exit_code) << c.input;
  }
  Json big = {{"policy", "none"}, {"providers", Json::array()}, {"numa_nodes", Json::array()}};
  for (int i = 0; i < 65; ++i) big["numa_nodes"].push_back(i);
  std::ofstream(scratch) << big.dump();
  EXPECT_EQ(RunTopoctl("merge --input " + scratch.string(), out), 1);
  EXPECT_EQ(RunTopoctl("merge", out), 2);
  EXPECT_EQ(RunTopoctl("merge --input " + scratch.string() + " --bogus", out), 2);
  fs::remove(scratch);
}

// 26 NUMA nodes, list i = {all nodes but i, any node}, nothing preferred: 2^26 reachable masks
// (seconds and gigabytes unbounded). topoctl refuses it at the merge limit: exit 1, the
// limit on stderr, nothing on stdout.
TEST(MergeFixtureTest, TopoctlRefusesAMergeBeyondItsLimits) {
  ASSERT_TRUE(fs::exists(kTopoctl)) << kTopoctl;
  const fs::path scratch =
      fs::temp_directory_path() / ("topologyd-merge-limit-" + std::to_string(getpid()) + ".json");
  Json request = {{"numa_nodes", Json::array()}, {"policy", "best-effort"}};
  Json providers = Json::array();
  for (int i = 0; i < 26; ++i) {
    request["numa_nodes"].push_back(i);
    Json all_but = Json::array();
    for (int j = 0; j < 26; ++j) {
      if (j != i) all_but.push_back(j);
    }
    providers.push_back({{"r", Json::array({{{"affinity", all_but}, {"preferred", false}},
                                            {{"affinity", nullptr}, {"preferred", false}}})}});
  }
  request["providers"] = providers;
  std::ofstream(scratch) << request.dump();
  const topologyd::testing::ShellResult r = topologyd::testing::RunShell(
      kTopoctl.string() + " --output json merge --input " + scratch.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.err.starts_with("topoctl: merge: " + scratch.string() +
                                ": hint merge exceeds its memory limit: "))
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // --unlimited on a small request: the flag exists and changes nothing there.
  std::ofstream(scratch) << R"({"numa_nodes":[0,1],"policy":"restricted","providers":[]})";
  std::string out;
  EXPECT_EQ(RunTopoctl("merge --unlimited --input " + scratch.string(), out), 0);
  fs::remove(scratch);
}

}  // namespace
}  // namespace topologyd::hints
