// What a `placement` block asks the daemon to publish: the options with their defaults, the
// token read afresh at every sync (a rotated token is picked up), and the tree of the
// configuration on the test host.
#include "lib/placement/placement_target.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/config/config_loader.h"
#include "lib/placement/uuid5.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using ::testing::HasSubstr;

class TokenFile : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  const std::string path_ = (std::filesystem::temp_directory_path() /
                             ("placement_target_test." + std::to_string(::getpid())))
                                .string();
};

TEST_F(TokenFile, IsReadAtEverySyncWithoutSurroundingWhitespace) {
  Write("gAAAAABtoken-1\n");
  EXPECT_EQ(*ReadTokenFile(path_), "gAAAAABtoken-1");
  Write("  gAAAAABtoken-2\r\n\n");
  EXPECT_EQ(*ReadTokenFile(path_), "gAAAAABtoken-2");
}

TEST_F(TokenFile, MissingOrEmptyIsAnErrorNamingTheKey) {
  EXPECT_THAT(std::string(ReadTokenFile(path_).status().message()),
              HasSubstr("placement.tokenFile: cannot read " + path_));
  Write("\n");
  EXPECT_THAT(std::string(ReadTokenFile(path_).status().message()),
              HasSubstr("placement.tokenFile: " + path_ + " is empty"));
}

TEST_F(TokenFile, TlsFilesAreReadAsTheyAreAndMustBePem) {
  const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  Write(pem);
  config::PlacementConfig placement;
  absl::StatusOr<curl_easy::TlsOptions> none = ReadTlsFiles(placement);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, curl_easy::TlsOptions{});

  placement.ca_file = path_;
  placement.client_cert_file = path_;
  placement.client_key_file = path_;
  absl::StatusOr<curl_easy::TlsOptions> read = ReadTlsFiles(placement);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ca_pem, pem);
  EXPECT_EQ(read->client_certificate_pem, pem);
  EXPECT_EQ(read->client_key_pem, pem);
  EXPECT_FALSE(read->insecure_skip_verify);

  Write("not a certificate\n");
  EXPECT_THAT(std::string(ReadTlsFiles(placement).status().message()),
              HasSubstr("placement.caFile: " + path_ + " holds no PEM block"));
  placement.ca_file = path_ + ".missing";
  EXPECT_THAT(std::string(ReadTlsFiles(placement).status().message()),
              HasSubstr("placement.caFile: cannot read " + path_ + ".missing"));
}

TEST_F(TokenFile, TheTargetCarriesTheTlsFilesReadForThisSync) {
  const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n";
  Write(pem);
  absl::StatusOr<config::Config> config = config::ParseConfig(
      "placement: {endpoint: \"https://cloud.example/placement\", caFile: " + path_ + "}\n",
      "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<SyncTarget> target = SyncTargetFromConfig(*config, testing::TestHost());
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->tls.ca_pem, pem);
  EXPECT_TRUE(target->tls.client_certificate_pem.empty());
  std::filesystem::remove(path_);
  EXPECT_THAT(std::string(SyncTargetFromConfig(*config, testing::TestHost()).status().message()),
              HasSubstr("placement.caFile: cannot read " + path_));
}

TEST(PlacementOptionsFromConfig, DefaultsToTheHostName) {
  config::PlacementConfig placement;
  placement.endpoint = "http://p:8778";
  absl::StatusOr<PlacementOptions> options = PlacementOptionsFromConfig(placement);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->node_name, HostName());
  EXPECT_FALSE(options->root_provider_uuid.has_value());
  EXPECT_TRUE(options->shared_cpus.IsEmpty());
  EXPECT_EQ(options->vcpu_allocation_ratio, 1.0);
  EXPECT_EQ(options->base_page_kib, 4u);
}

TEST_F(TokenFile, TheTargetOfAConfigurationOnTheTestHost) {
  Write("admin\n");
  absl::StatusOr<config::Config> config = config::ParseConfig(
      R"(
reservedSystemCPUs: "0,32"
devices:
- resourceName: nvidia.com/gpu
  pci: {vendor: "10de", device: "20b0"}
placement:
  endpoint: http://127.0.0.1:8778
  tokenFile: )" +
          path_ + R"(
  nodeName: e2e-host
  sharedCPUs: "2-4,34-36,28-29,60-61"
  vcpuAllocationRatio: 4
)",
      "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<SyncTarget> target = SyncTargetFromConfig(*config, testing::TestHost());
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->url, "http://127.0.0.1:8778");
  EXPECT_EQ(target->token, "admin");
  EXPECT_EQ(target->tree.root().name, "e2e-host");
  EXPECT_EQ(target->tree.root().uuid, ProviderUuid("e2e-host"));
  const Provider& numa0 = target->tree.providers[1];
  ASSERT_EQ(numa0.name, "e2e-host_NUMA0");
  // cpuManagerPolicy none: nothing can be pinned, every CPU is VCPU.
  EXPECT_FALSE(numa0.inventories.contains("PCPU"));
  EXPECT_EQ(numa0.inventories.at("VCPU").total, 16);
  EXPECT_EQ(numa0.inventories.at("VCPU").reserved, 2);
  EXPECT_EQ(numa0.inventories.at("VCPU").allocation_ratio, 4.0);
  EXPECT_EQ(target->tree.providers.size(), 17u);

  // The token is read again for every target: a rotated one is picked up.
  Write("rotated\n");
  EXPECT_EQ(SyncTargetFromConfig(*config, testing::TestHost())->token, "rotated");
  std::filesystem::remove(path_);
  EXPECT_THAT(std::string(SyncTargetFromConfig(*config, testing::TestHost()).status().message()),
              HasSubstr("placement.tokenFile: cannot read"));
}

}  // namespace
}  // namespace topologyd::placement
