// topoctl simulate's inputs: YAML streams split into manifests, --compare axes into variants.
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tools/topoctl/support_simulate_inputs.h"

namespace topoctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SplitYamlStreamTest, SplitsAtDocumentMarkersOnly) {
  const std::vector<std::string> docs =
      SplitYamlStream("a: 1\n---\nb: \"---\"\n--- # second\nc: 3\n---\n");
  EXPECT_THAT(docs, ElementsAre("a: 1\n", "b: \"---\"\n", "# second\nc: 3\n", ""));
}

TEST(BuildVariantsTest, CrossProductOfTheAxesNamedByTheirValues) {
  topologyd::config::Config base;
  base.cpu_manager_policy = "static";
  auto variants = BuildVariants(base, "node.yaml",
                                {"policy=restricted,single-numa-node",
                                 "option=full-pcpus-only=true+prefer-closest-numa-nodes=true,-"});
  ASSERT_TRUE(variants.ok()) << variants.status();
  ASSERT_EQ(variants->size(), 4u);
  EXPECT_EQ((*variants)[0].name,
            "policy=restricted option=full-pcpus-only=true+prefer-closest-numa-nodes=true");
  EXPECT_EQ((*variants)[0].config.topology_manager_policy, "restricted");
  EXPECT_EQ((*variants)[0].config.cpu_manager_policy_options.at("full-pcpus-only"), "true");
  EXPECT_EQ((*variants)[0].config.topology_manager_policy_options.at("prefer-closest-numa-nodes"),
            "true");
  EXPECT_EQ((*variants)[3].name, "policy=single-numa-node option=-");
  EXPECT_TRUE((*variants)[3].config.cpu_manager_policy_options.empty());

  auto alone = BuildVariants(base, "node.yaml", {});
  ASSERT_TRUE(alone.ok());
  ASSERT_EQ(alone->size(), 1u);
  EXPECT_EQ((*alone)[0].name, "node.yaml");
}

TEST(BuildVariantsTest, RefusesUnknownKeysAndMalformedValues) {
  topologyd::config::Config base;
  EXPECT_THAT(BuildVariants(base, "b", {"colour=red"}).status().message(),
              HasSubstr("unknown key"));
  EXPECT_THAT(BuildVariants(base, "b", {"policy=a,,b"}).status().message(),
              HasSubstr("empty value"));
  EXPECT_THAT(BuildVariants(base, "b", {"option=full-pcpus-only"}).status().message(),
              HasSubstr("not NAME=VALUE"));
  EXPECT_FALSE(BuildVariants(base, "b", {"config=/nonexistent/c.yaml"}).ok());
}

}  // namespace
}  // namespace topoctl
