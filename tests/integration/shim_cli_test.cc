// topologyd-shim's command line where it meets an operator before anything runs:
// --check-config FILE as topologyd takes it, the older -c FILE --check-config, and the errors.
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"

namespace topologyd::testing {
namespace {

std::string ShimBinary() { return std::string(TOPOLOGYD_BINARY_DIR) + "/shim/topologyd-shim"; }

TEST(ShimCliTest, CheckConfigTakesTheFileAsTopologydDoes) {
  TempDir dir;
  WriteFile(dir.File("shim.yaml"), "listen: unix:///run/topologyd/shim.sock\n");
  const CommandResult r = RunCommand({ShimBinary(), "--check-config", dir.File("shim.yaml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "topologyd-shim: configuration OK\n");

  const CommandResult older =
      RunCommand({ShimBinary(), "-c", dir.File("shim.yaml"), "--check-config"});
  EXPECT_EQ(older.exit_code, 0) << older.err;
  EXPECT_EQ(older.out, "topologyd-shim: configuration OK\n");
  // The same file named twice is one file.
  const CommandResult twice = RunCommand(
      {ShimBinary(), "-c", dir.File("shim.yaml"), "--check-config", dir.File("shim.yaml")});
  EXPECT_EQ(twice.exit_code, 0) << twice.err;
}

TEST(ShimCliTest, CheckConfigReportsTheFilesProblems) {
  TempDir dir;
  WriteFile(dir.File("bad.yaml"), "listen: tcp://0.0.0.0:1\nnoSuchKey: 1\n");
  const CommandResult bad = RunCommand({ShimBinary(), "--check-config", dir.File("bad.yaml")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(dir.File("bad.yaml")), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("noSuchKey"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");

  const CommandResult missing =
      RunCommand({ShimBinary(), "--check-config", dir.File("missing.yaml")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find(dir.File("missing.yaml")), std::string::npos) << missing.err;

  WriteFile(dir.File("other.yaml"), "{}\n");
  const CommandResult two = RunCommand(
      {ShimBinary(), "-c", dir.File("other.yaml"), "--check-config", dir.File("bad.yaml")});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("name two files"), std::string::npos) << two.err;
}

}  // namespace
}  // namespace topologyd::testing
