// The `metrics` key: off when absent, HOST:PORT with an address (not a name) and a port, and
// restart-only on reload.
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/config/config_diff.h"
#include "lib/config/config_loader.h"
#include "lib/config/listen_address.h"
#include "tests/unit/config/parse_util.h"

namespace topologyd::config {
namespace {

using testing::ErrorOf;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MetricsConfigTest, OffWhenAbsent) {
  auto config = ParseConfig("", "m.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics.listen, "");
}

TEST(MetricsConfigTest, TakesAnIpv4AddressAndPort) {
  auto v4 = ParseConfig("metrics: {listen: \"127.0.0.1:9469\"}\n", "m.yaml");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->metrics.listen, "127.0.0.1:9469");
  auto any = ParseListenAddress("0.0.0.0:1");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 1);
}

TEST(MetricsConfigTest, BadAddressesNameTheKey) {
  EXPECT_THAT(ErrorOf("metrics: {}\n"), HasSubstr("metrics.listen: \"\": required"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"localhost:9469\"}\n"),
              HasSubstr("metrics.listen: \"localhost:9469\": not an IPv4 address"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"127.0.0.1\"}\n"), HasSubstr("metrics.listen"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"127.0.0.1:0\"}\n"),
              HasSubstr("the port must be a number from 1 to 65535"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"127.0.0.1:65536\"}\n"),
              HasSubstr("the port must be a number from 1 to 65535"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"127.0.0.1:94x\"}\n"),
              HasSubstr("the port must be a number from 1 to 65535"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"::1:9469\"}\n"), HasSubstr("not an IPv4 address"));
  EXPECT_THAT(ErrorOf("metrics: {listen: \"[::1]:9469\"}\n"), HasSubstr("IPv6 is not supported"));
  EXPECT_THAT(ErrorOf("metrics: {port: 9469}\n"), HasSubstr("metrics.port: unknown key"));
}

TEST(MetricsConfigTest, IsRestartOnly) {
  Config old;
  Config next;
  next.metrics.listen = "127.0.0.1:9469";
  ReloadPlan plan = PlanReload(old, next);
  EXPECT_THAT(plan.refused, ElementsAre("metrics"));
  EXPECT_TRUE(plan.applied.empty());
  EXPECT_EQ(plan.effective.metrics.listen, "");
}

}  // namespace
}  // namespace topologyd::config
