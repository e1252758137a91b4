// The `placement` block: off when absent, defaults, bad values refused naming the key, the
// token and TLS files resolved beside the config file, and every key inside it live on reload.
#include "lib/config/placement_config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/config/config_diff.h"
#include "lib/config/config_loader.h"
#include "tests/unit/config/parse_util.h"

namespace topologyd::config {
namespace {

using testing::ErrorOf;
using testing::MustParse;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST(PlacementConfigTest, OffWhenAbsent) {
  EXPECT_FALSE(MustParse("").placement.has_value());
  EXPECT_FALSE(MustParse("placement:\n").placement.has_value());
}

TEST(PlacementConfigTest, Defaults) {
  const Config c = MustParse("placement: {endpoint: \"http://127.0.0.1:8778\"}\n");
  ASSERT_TRUE(c.placement.has_value());
  EXPECT_EQ(c.placement->endpoint, "http://127.0.0.1:8778");
  EXPECT_EQ(c.placement->token_file, "");
  EXPECT_EQ(c.placement->node_name, "");
  EXPECT_EQ(c.placement->sync_period, std::chrono::minutes(5));
  EXPECT_EQ(c.placement->shared_cpus, "");
  EXPECT_EQ(c.placement->vcpu_allocation_ratio, 1.0);
  EXPECT_EQ(c.placement->base_page_kib, 4u);
  EXPECT_EQ(c.placement->root_provider_uuid, "");
  EXPECT_EQ(c.placement->ca_file, "");
  EXPECT_EQ(c.placement->client_cert_file, "");
  EXPECT_EQ(c.placement->client_key_file, "");
}

TEST(PlacementConfigTest, EveryKey) {
  const Config c = MustParse(R"(
placement:
  endpoint: https://cloud.example/placement
  tokenFile: /etc/topologyd/placement-token
  nodeName: compute-7
  syncPeriod: 90s
  sharedCPUs: "0-3,32-35"
  vcpuAllocationRatio: 4.5
  basePageKiB: 64
  rootProviderUUID: 0102DCB9-F457-5456-A113-77A7F45BF491
  caFile: /etc/topologyd/cloud-ca.pem
  clientCertFile: /etc/topologyd/placement.crt
  clientKeyFile: /etc/topologyd/placement.key
)");
  ASSERT_TRUE(c.placement.has_value());
  const PlacementConfig& p = *c.placement;
  EXPECT_EQ(p.endpoint, "https://cloud.example/placement");
  EXPECT_EQ(p.token_file, "/etc/topologyd/placement-token");
  EXPECT_EQ(p.node_name, "compute-7");
  EXPECT_EQ(p.sync_period, std::chrono::seconds(90));
  EXPECT_EQ(p.shared_cpus, "0-3,32-35");
  EXPECT_EQ(p.vcpu_allocation_ratio, 4.5);
  EXPECT_EQ(p.base_page_kib, 64u);
  EXPECT_EQ(p.root_provider_uuid, "0102DCB9-F457-5456-A113-77A7F45BF491");
  EXPECT_EQ(p.ca_file, "/etc/topologyd/cloud-ca.pem");
  EXPECT_EQ(p.client_cert_file, "/etc/topologyd/placement.crt");
  EXPECT_EQ(p.client_key_file, "/etc/topologyd/placement.key");
}

TEST(PlacementConfigTest, BadValuesNameTheKey) {
  EXPECT_THAT(ErrorOf("placement: {nodeName: a}\n"),
              HasSubstr("test.yaml: placement.endpoint: required"));
  EXPECT_THAT(ErrorOf("placement: {endpoint: \"127.0.0.1:8778\"}\n"),
              HasSubstr("placement.endpoint: must be an http:// or https:// URL"));
  EXPECT_THAT(ErrorOf("placement: {endpoint: \"http://\"}\n"),
              HasSubstr("placement.endpoint: must be an http:// or https:// URL"));
  const std::string ok = "placement:\n  endpoint: http://p:8778\n";
  EXPECT_THAT(ErrorOf(ok + "  tokenFile: \"\"\n"),
              HasSubstr("placement.tokenFile: must not be empty"));
  EXPECT_THAT(ErrorOf(ok + "  nodeName: " + std::string(161, 'n') + "\n"),
              HasSubstr("test.yaml:3: placement.nodeName: is 161 characters; at most 160"));
  EXPECT_THAT(ErrorOf(ok + "  syncPeriod: 500ms\n"),
              HasSubstr("placement.syncPeriod: must be at least 1s"));
  EXPECT_THAT(ErrorOf(ok + "  syncPeriod: 5 minutes\n"), HasSubstr("placement.syncPeriod:"));
  EXPECT_THAT(ErrorOf(ok + "  sharedCPUs: \"0-x\"\n"), HasSubstr("placement.sharedCPUs:"));
  for (const char* ratio : {"0", "-1", "many", "inf", "nan"}) {
    EXPECT_THAT(ErrorOf(ok + "  vcpuAllocationRatio: " + ratio + "\n"),
                HasSubstr("placement.vcpuAllocationRatio: expected a positive number"))
        << ratio;
  }
  for (const char* page : {"0", "2", "12", "-4"}) {
    EXPECT_THAT(ErrorOf(ok + "  basePageKiB: " + page + "\n"), HasSubstr("placement.basePageKiB:"))
        << page;
  }
  EXPECT_THAT(ErrorOf(ok + "  rootProviderUUID: not-a-uuid\n"),
              HasSubstr("placement.rootProviderUUID: \"not-a-uuid\" is not a uuid"));
  EXPECT_THAT(ErrorOf(ok + "  token: admin\n"), HasSubstr("placement.token: unknown key"));
  // TLS files: for https only, a client certificate with its key.
  EXPECT_THAT(ErrorOf(ok + "  caFile: /ca.pem\n"),
              HasSubstr("placement.caFile: is for an https:// endpoint, and the endpoint is "
                        "\"http://p:8778\""));
  const std::string tls = "placement:\n  endpoint: https://p:8778\n";
  EXPECT_THAT(ErrorOf(tls + "  clientCertFile: /c.pem\n"),
              HasSubstr("placement.clientCertFile: clientCertFile and clientKeyFile go together"));
  EXPECT_THAT(ErrorOf(tls + "  clientKeyFile: /k.pem\n"),
              HasSubstr("placement.clientKeyFile: clientCertFile and clientKeyFile go together"));
  EXPECT_THAT(ErrorOf(tls + "  caFile: \"\"\n"), HasSubstr("placement.caFile: must not be empty"));
}

TEST(PlacementConfigTest, TokenAndTlsFilesAreTakenBesideTheConfigFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("placement_config_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "topologyd.yaml").string();
  std::ofstream(file) << "placement: {endpoint: \"https://p:8778\", tokenFile: secrets/token, "
                         "caFile: ca.pem, clientCertFile: tls/c.pem, clientKeyFile: /k.pem}\n";
  absl::StatusOr<Config> c = LoadConfigFile(file);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->placement->token_file, (dir / "secrets/token").string());
  EXPECT_EQ(c->placement->ca_file, (dir / "ca.pem").string());
  EXPECT_EQ(c->placement->client_cert_file, (dir / "tls/c.pem").string());
  EXPECT_EQ(c->placement->client_key_file, "/k.pem");
}

TEST(PlacementConfigTest, EveryKeyReloadsLiveTurningItOnOrOffNeedsARestart) {
  const Config old_config = MustParse("placement: {endpoint: \"http://a:8778\"}\n");
  Config next = MustParse(R"(
placement:
  endpoint: https://b:8778
  tokenFile: /t
  caFile: /ca
  clientCertFile: /c
  clientKeyFile: /k
  nodeName: n
  syncPeriod: 1m
  sharedCPUs: "1"
  vcpuAllocationRatio: 2
  basePageKiB: 64
  rootProviderUUID: 0102dcb9-f457-5456-a113-77a7f45bf491
)");
  ReloadPlan plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.refused, IsEmpty());
  EXPECT_THAT(plan.applied,
              UnorderedElementsAre(
                  "placement.endpoint", "placement.tokenFile", "placement.nodeName",
                  "placement.syncPeriod", "placement.sharedCPUs", "placement.vcpuAllocationRatio",
                  "placement.basePageKiB", "placement.rootProviderUUID", "placement.caFile",
                  "placement.clientCertFile", "placement.clientKeyFile"));
  EXPECT_EQ(plan.effective.placement, next.placement);

  next = MustParse("placement: {endpoint: \"http://a:8778\", vcpuAllocationRatio: 4}\n");
  plan = PlanReload(old_config, next);
  EXPECT_THAT(plan.applied, ElementsAre("placement.vcpuAllocationRatio"));
  EXPECT_EQ(plan.effective.placement->vcpu_allocation_ratio, 4.0);

  plan = PlanReload(old_config, old_config);
  EXPECT_THAT(plan.applied, IsEmpty());

  const Config off = MustParse("");
  plan = PlanReload(off, old_config);
  EXPECT_THAT(plan.refused, ElementsAre("placement"));
  EXPECT_FALSE(plan.effective.placement.has_value());
  plan = PlanReload(old_config, off);
  EXPECT_THAT(plan.refused, ElementsAre("placement"));
  EXPECT_EQ(plan.effective.placement, old_config.placement);
}

}  // namespace
}  // namespace topologyd::config
