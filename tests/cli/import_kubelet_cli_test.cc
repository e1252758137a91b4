// Runs the real `topoctl state import-kubelet` binary on kubelet fixtures.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

#include "lib/state/checkpoint_codec.h"
#include "lib/state/file_system.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/state/test_util.h"

namespace topologyd::state {
namespace {

topologyd::testing::ShellResult RunTopoctl(const std::string& args) {
  return topologyd::testing::RunShell(topologyd::testing::TopoctlPath() + " " + args);
}

class ImportCliTest : public ::testing::Test {
 protected:
  static std::string Fixture(const std::string& name) {
    return testing::FixturePath("kubelet/" + name);
  }
  topologyd::testing::TempDir dir_{"state_cli"};
  const std::string tmp_ = dir_.path();
};

TEST_F(ImportCliTest, PrintsStateOnStdout) {
  topologyd::testing::ShellResult r =
      RunTopoctl("state import-kubelet --cpu-state " + Fixture("cpu_static_entries.json") +
                 " --memory-state " + Fixture("memory_kubelet_v1.json") + " --device-state " +
                 Fixture("device.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<State> s = DecodeState(r.out);
  ASSERT_TRUE(s.ok()) << s.status() << "\n" << r.out;
  EXPECT_EQ(s->pods.size(), 3u);
  EXPECT_EQ(ExclusiveCpus(*s).ToString(), "2-3");
  EXPECT_EQ(s->pods.at("pod").containers.at(0).memory.at(0).at("memory"), 512u);
  EXPECT_NE(r.err.find("imported 3 pods"), std::string::npos) << r.err;
}

TEST_F(ImportCliTest, WritesOutFileAndRefusesToOverwrite) {
  const std::string out = tmp_ + "/state.json";
  const std::string args =
      "state import-kubelet --cpu-state " + Fixture("cpu_static_entries.json") + " --out " + out;
  topologyd::testing::ShellResult first = RunTopoctl(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(first.out.empty());
  PosixFileSystem fs;
  absl::StatusOr<std::string> bytes = fs.ReadFile(out);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(DecodeState(*bytes).ok());

  topologyd::testing::ShellResult again = RunTopoctl(args);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;

  topologyd::testing::ShellResult forced = RunTopoctl(args + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  // Only the output: no temp file left behind.
  std::vector<std::string> names = *fs.ListDir(tmp_);
  EXPECT_EQ(names, (std::vector<std::string>{"state.json"}));
}

TEST_F(ImportCliTest, RefusesCorruptOrUnreadableInput) {
  PosixFileSystem fs;
  const std::string bad = tmp_ + "/cpu_manager_state";
  ASSERT_TRUE(
      fs.WriteNewFileAndSync(
            bad, R"({"policyName":"static","defaultCpuSet":"0-7","checksum":14413153})", 0600)
          .ok());
  topologyd::testing::ShellResult r = RunTopoctl("state import-kubelet --cpu-state " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("checkpoint is corrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  r = RunTopoctl("state import-kubelet --cpu-state " + tmp_ + "/missing");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;

  r = RunTopoctl("state import-kubelet --cpu-state " + Fixture("cpu_none_with_entries.json"));
  EXPECT_EQ(r.exit_code, 1);

  r = RunTopoctl("state import-kubelet --cpu-state " + Fixture("cpu_static_0-7.json") +
                 " --memory-state " + Fixture("memory_kubelet_v1_bad_checksum.json") + " --out " +
                 tmp_ + "/out.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(tmp_ + "/out.json"));
}

TEST_F(ImportCliTest, BadUsageExitsTwo) {
  EXPECT_EQ(RunTopoctl("state import-kubelet").exit_code, 2);  // --cpu-state is required
  EXPECT_EQ(RunTopoctl("state import-kubelet --cpu-state a --bogus").exit_code, 2);
  EXPECT_EQ(RunTopoctl("state").exit_code, 2);
}

}  // namespace
}  // namespace topologyd::state
