// The node policy's configuration errors come all at once, each with its key, so that
// `topologyd --check-config` can list every one with its line (config::LocateKeyErrors).
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"

namespace topologyd::config {
namespace {

using ::testing::HasSubstr;

TEST(NodePolicyErrorsTest, EveryBadKeyIsReportedInOneRun) {
  absl::StatusOr<Config> config = ParseConfig(
      "topologyManagerPolicy: best-effort\n"
      "topologyManagerPolicyOptions: {bogus-option: \"true\"}\n"
      "cpuManagerPolicy: static\n"
      "reservedSystemCPUs: \"0-x\"\n"
      "memoryManagerPolicy: Static\n"
      "reservedMemory:\n"
      "- numaNode: 0\n"
      "  limits: {memory: 1Gx}\n",
      "node.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<admission::NodeSpec> spec = ParseNodeSpec(*config);
  ASSERT_FALSE(spec.ok());
  const absl::Status located = LocateKeyErrors(*config, spec.status(), "node.yaml");
  const std::string message(located.message());
  EXPECT_THAT(message, HasSubstr("node.yaml:2: topologyManagerPolicyOptions: "));
  EXPECT_THAT(message, HasSubstr("\nnode.yaml:4: reservedSystemCPUs: "));
  EXPECT_THAT(message, HasSubstr("\nnode.yaml:8: reservedMemory[0].limits.memory: "));
}

}  // namespace
}  // namespace topologyd::config
