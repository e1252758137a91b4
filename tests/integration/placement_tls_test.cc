// The Placement client over TLS: a real OpenStack Placement (python3-placement, noauth2) behind
// a TLS front (tls_proxy.py) with certificates made by openssl for the run. The transport
// trusts only the configured CA and shows a client certificate when the front asks for one;
// `topoctl placement sync` takes both from the config's placement block. Skips without
// Placement, python3 or openssl.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/placement_http.h"
#include "lib/placement/placement_target.h"
#include "tests/integration/placement_server.h"
#include "tests/integration/process.h"
#include "tests/support/port_server.h"
#include "tests/support/require_component.h"
#include "tests/support/test_certificates.h"

namespace topologyd::placement {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using topologyd::testing::ReadFile;

class PlacementTls : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string missing = topologyd::testing::PlacementMissing(); !missing.empty()) {
      SKIP_OR_FAIL() << missing;
    }
    if (std::string missing = topologyd::testing::TestCertificatesMissing(); !missing.empty()) {
      SKIP_OR_FAIL() << missing;
    }
    ASSERT_EQ(topologyd::testing::MakeTestCertificates(dir_.path()), "");
    ASSERT_EQ(server_.Start(dir_.path()), "");
    const std::string upstream = server_.url().substr(std::string("http://").size());
    const std::string proxy = std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/integration/tls_proxy.py";
    const std::vector<std::string> front = {
        "/usr/bin/python3",      proxy,        "--cert", dir_.File("server.crt"), "--key",
        dir_.File("server.key"), "--upstream", upstream};
    ASSERT_EQ(tls_.Start(front), "");
    std::vector<std::string> mutual = front;
    mutual.insert(mutual.end(), {"--client-ca", dir_.File("ca.crt")});
    ASSERT_EQ(mutual_tls_.Start(mutual), "");
  }

  void TearDown() override {
    if (HasFailure()) server_.KeepLog("placement_tls_test");
  }

  static std::string Url(const topologyd::testing::PortServer& front) {
    return fmt::format("https://127.0.0.1:{}", front.port());
  }

  // GET / (the version document) through `url` with `tls`.
  static absl::StatusOr<HttpResponse> Version(const std::string& url,
                                              const curl_easy::TlsOptions& tls) {
    absl::StatusOr<CurlPlacementTransport> transport =
        CurlPlacementTransport::Create({.url = url, .token = "admin", .tls = tls});
    if (!transport.ok()) return transport.status();
    return transport->Send({"GET", "/", std::nullopt}, "");
  }

  std::string Pem(const std::string& name) const { return ReadFile(dir_.File(name)); }

  topologyd::testing::TempDir dir_{"tpd-placement-tls"};
  topologyd::testing::PlacementServer server_;
  topologyd::testing::PortServer tls_;
  topologyd::testing::PortServer mutual_tls_;
};

TEST_F(PlacementTls, TheServerIsCheckedAgainstTheConfiguredCaOnly) {
  absl::StatusOr<HttpResponse> trusted = Version(Url(tls_), {.ca_pem = Pem("ca.crt")});
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  EXPECT_EQ(trusted->status, 200) << trusted->body;

  // The system's CAs do not know the test CA; another CA is not the server's.
  for (const curl_easy::TlsOptions& tls :
       {curl_easy::TlsOptions{}, curl_easy::TlsOptions{.ca_pem = Pem("wrong-ca.crt")}}) {
    absl::StatusOr<HttpResponse> refused = Version(Url(tls_), tls);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(refused.status().message(), HasSubstr("certificate"));
  }
}

TEST_F(PlacementTls, AClientCertificateIsShownWhenConfigured) {
  absl::StatusOr<HttpResponse> without = Version(Url(mutual_tls_), {.ca_pem = Pem("ca.crt")});
  EXPECT_FALSE(without.ok() && without->status == 200) << "the front let a client in unchecked";
  absl::StatusOr<HttpResponse> with =
      Version(Url(mutual_tls_), {.ca_pem = Pem("ca.crt"),
                                 .client_certificate_pem = Pem("client.crt"),
                                 .client_key_pem = Pem("client.key")});
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->status, 200) << with->body;
}

// The daemon and topoctl read the files named by the placement block; relative paths are
// taken from the config file's directory.
TEST_F(PlacementTls, TopoctlSyncsWithTheConfigsTlsFiles) {
  const std::string xml = std::string(TOPOLOGYD_SOURCE_DIR) +
                          "/tests/unit/topology/testdata/two_packages_hbm_disallowed.xml";
  topologyd::testing::WriteFile(dir_.File("token"), "admin\n");
  const std::string config = dir_.File("topologyd.yaml");
  topologyd::testing::WriteFile(
      config, fmt::format("cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
                          "placement:\n  endpoint: {}\n  tokenFile: token\n  caFile: ca.crt\n"
                          "  clientCertFile: client.crt\n  clientKeyFile: client.key\n",
                          Url(mutual_tls_)));
  const auto sync = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"-o", "json",     "placement", "sync",        "--input",
                                     xml,  "--config", config,      "--node-name", "tls-node"};
    argv.insert(argv.begin(), topologyd::testing::TopoctlBinary());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return topologyd::testing::RunCommand(argv);
  };
  const topologyd::testing::CommandResult first = sync({});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json report = nlohmann::json::parse(first.out);
  EXPECT_FALSE(report["done"].empty());
  EXPECT_THAT(report["errors"], IsEmpty());

  // The flags win over the block: another CA is refused, and nothing else changed.
  const topologyd::testing::CommandResult wrong = sync({"--ca-file", dir_.File("wrong-ca.crt")});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.err, HasSubstr("certificate"));

  // What the daemon's syncer reads before each sync: a file that is not PEM names its key.
  topologyd::testing::WriteFile(dir_.File("client.key"), "not a key\n");
  const topologyd::testing::CommandResult bad = sync({"--dry-run"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("placement.clientKeyFile: " + dir_.File("client.key") +
                                 " holds no PEM block"));
}

}  // namespace
}  // namespace topologyd::placement
