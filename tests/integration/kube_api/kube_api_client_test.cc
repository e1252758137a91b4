// KubeApiClient against a real HTTPS server (tests/support/fake_apiserver.py) with a CA,
// server and client certificates made by the openssl CLI for each run: token and client
// certificate authentication, CA verification, HTTP errors, the uid check, kubeconfigs with
// inline data and with file paths, and the in-cluster configuration.
#include "lib/kube_api/kube_api_client.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/pod/pod_manifest.h"
#include "tests/support/port_server.h"
#include "tests/support/require_component.h"
#include "tests/support/shell.h"
#include "tests/support/test_certificates.h"

namespace topologyd::kube_api {
namespace {

using ::testing::HasSubstr;
using testing::RunShell;
using testing::ShellQuote;

constexpr char kToken[] = "s3cr3t-t0ken.for-tests";
constexpr char kUid[] = "3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c";

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string FixturePath() {
  return std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/kube_api/pod.json";
}

class KubeApiClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (RunShell("command -v python3").exit_code != 0) {
      skip_reason_ = new std::string("python3 is not installed");
      return;
    }
    if (std::string missing = testing::TestCertificatesMissing(); !missing.empty()) {
      skip_reason_ = new std::string(missing);
      return;
    }
    char pattern[] = "/tmp/topologyd-kube-api-XXXXXX";
    dir_ = new std::string(::mkdtemp(pattern));
    // The server certificate names 127.0.0.1, where the server listens; the client is a node.
    const std::string problem =
        testing::MakeTestCertificates(*dir_, "/O=system:nodes/CN=system:node:worker-1");
    ASSERT_EQ(problem, "");

    const std::string server_script =
        std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/support/fake_apiserver.py";
    server_ = new testing::PortServer();
    const std::string started = server_->Start(
        {"python3", server_script, "--cert", *dir_ + "/server.crt", "--key", *dir_ + "/server.key",
         "--client-ca", *dir_ + "/ca.crt", "--token", kToken, "--pod", FixturePath()});
    ASSERT_EQ(started, "") << "the fake API server did not start";
    port_ = server_->port();
  }

  static void TearDownTestSuite() {
    delete server_;  // stops it
    server_ = nullptr;
    if (dir_ != nullptr) RunShell("rm -rf " + ShellQuote(*dir_));
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (skip_reason_ != nullptr) {
      SKIP_OR_FAIL() << "needs python3 and openssl to run an HTTPS server: " << *skip_reason_;
    }
    ASSERT_GT(port_, 0);
  }

  static std::string File(const std::string& name) { return *dir_ + "/" + name; }
  static std::string Server() { return fmt::format("https://127.0.0.1:{}", port_); }

  static KubeApiConfig TokenConfig() {
    KubeApiConfig config;
    config.server = Server();
    config.certificate_authority = Read(File("ca.crt"));
    config.token = kToken;
    return config;
  }

  static pod::Pod Expected() {
    absl::StatusOr<pod::Pod> pod = pod::ParsePodManifest(Read(FixturePath()));
    EXPECT_TRUE(pod.ok()) << pod.status();
    return *pod;
  }

  static inline std::string* skip_reason_ = nullptr;
  static inline std::string* dir_ = nullptr;
  static inline testing::PortServer* server_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(KubeApiClientTest, TokenAuthentication) {
  KubeApiClient client(TokenConfig());
  absl::StatusOr<pod::Pod> pod = client.GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, Expected());
  // The fixture's shape came through: sidecar, extended resources, Guaranteed.
  ASSERT_EQ(pod->init_containers.size(), 2U);
  EXPECT_TRUE(pod->init_containers[1].restart_always);
  EXPECT_EQ(pod->containers[0].requests.at("nvidia.com/gpu"), pod::Quantity::FromInt(2));
  EXPECT_EQ(pod::ComputeQos(*pod), pod::QosClass::kGuaranteed);
}

TEST_F(KubeApiClientTest, ClientCertificateAuthentication) {
  KubeApiConfig config;
  config.server = Server() + "/";
  config.certificate_authority = Read(File("ca.crt"));
  config.client_certificate = Read(File("client.crt"));
  config.client_key = Read(File("client.key"));
  absl::StatusOr<pod::Pod> pod =
      KubeApiClient(config).GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, Expected());
}

TEST_F(KubeApiClientTest, NoCredentialsIsUnauthorized) {
  KubeApiConfig config = TokenConfig();
  config.token = "wrong";
  absl::StatusOr<pod::Pod> pod =
      KubeApiClient(config).GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(pod.status().message()),
              HasSubstr("API server answered HTTP 401 for pod ml/trainer-7d9f8b6c5-x2k4p: "
                        "\"Unauthorized\""));
}

TEST_F(KubeApiClientTest, WrongCaIsRefused) {
  KubeApiConfig config = TokenConfig();
  config.certificate_authority = Read(File("wrong-ca.crt"));
  absl::StatusOr<pod::Pod> pod =
      KubeApiClient(config).GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(pod.status().message()), HasSubstr("SSL certificate problem"));
  // The same server is fine when verification is off.
  config.certificate_authority.clear();
  config.insecure_skip_tls_verify = true;
  EXPECT_TRUE(KubeApiClient(config).GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid).ok());
}

TEST_F(KubeApiClientTest, NotFoundForbiddenAndUidMismatch) {
  KubeApiClient client(TokenConfig());
  absl::StatusOr<pod::Pod> pod = client.GetPod("ml", "gone", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(pod.status().message()), HasSubstr("API server has no pod ml/gone"));

  pod = client.GetPod("forbidden", "p", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(pod.status().message()),
              HasSubstr("HTTP 403 for pod forbidden/p: \"pods \\\"p\\\" is forbidden"));

  pod = client.GetPod("ml", "trainer-7d9f8b6c5-x2k4p", "00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(pod.status().message(),
            "API server has pod ml/trainer-7d9f8b6c5-x2k4p with uid "
            "\"3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c\", the sandbox has uid "
            "\"00000000-0000-0000-0000-000000000001\"");

  pod = client.GetPod("ml", "a/b", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
}

// One client from many threads: each call has its own curl handle.
TEST_F(KubeApiClientTest, ConcurrentCalls) {
  const KubeApiClient client(TokenConfig());
  const pod::Pod expected = Expected();
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (size_t t = 0; t < good.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        absl::StatusOr<pod::Pod> pod = client.GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
        good[t] += pod.ok() && *pod == expected ? 1 : 0;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int g : good) EXPECT_EQ(g, 5);
}

TEST_F(KubeApiClientTest, ConnectionRefused) {
  KubeApiConfig config = TokenConfig();
  config.server = "https://127.0.0.1:1";
  absl::StatusOr<pod::Pod> pod =
      KubeApiClient(config).GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(pod.status().message()), HasSubstr("Couldn't connect to server"));
}

std::string Base64File(const std::string& path) { return absl::Base64Escape(Read(path)); }

TEST_F(KubeApiClientTest, KubeconfigWithInlineData) {
  const std::string kubeconfig = File("inline.kubeconfig");
  Write(kubeconfig, fmt::format(R"(apiVersion: v1
kind: Config
current-context: node
clusters:
- name: other
  cluster: {{server: "https://192.0.2.1:6443"}}
- name: local
  cluster:
    server: {}
    certificate-authority-data: {}
contexts:
- name: node
  context: {{cluster: local, user: "system:node:worker-1"}}
users:
- name: "system:node:worker-1"
  user:
    client-certificate-data: {}
    client-key-data: {}
)",
                                Server(), Base64File(File("ca.crt")),
                                Base64File(File("client.crt")), Base64File(File("client.key"))));
  absl::StatusOr<KubeApiClient> client = KubeApiClient::FromKubeconfig(kubeconfig);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->config().timeout, absl::Seconds(5));
  absl::StatusOr<pod::Pod> pod = client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, Expected());
}

TEST_F(KubeApiClientTest, KubeconfigWithFilePaths) {
  // Relative paths are relative to the kubeconfig's directory.
  Write(File("token"), std::string(kToken) + "\n");
  const std::string kubeconfig = File("paths.kubeconfig");
  Write(kubeconfig, fmt::format(R"(apiVersion: v1
kind: Config
current-context: token
clusters:
- name: local
  cluster: {{server: "{}", certificate-authority: ca.crt}}
contexts:
- name: token
  context: {{cluster: local, user: file-token}}
- name: cert
  context: {{cluster: local, user: cert}}
users:
- name: file-token
  user: {{tokenFile: {}}}
- name: cert
  user: {{client-certificate: {}, client-key: client.key}}
)",
                                Server(), File("token"), File("client.crt")));
  absl::StatusOr<KubeApiClient> client =
      KubeApiClient::FromKubeconfig(kubeconfig, absl::Seconds(2));
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->config().timeout, absl::Seconds(2));
  EXPECT_EQ(client->config().token_file, File("token"));
  absl::StatusOr<pod::Pod> pod = client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, Expected());

  // The token file is read at each request: a rotated token is used at once.
  Write(File("token"), "rotated-and-wrong\n");
  pod = client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  EXPECT_THAT(std::string(pod.status().message()), HasSubstr("HTTP 401"));
  Write(File("token"), std::string(kToken) + "\n");

  std::string text = Read(kubeconfig);
  text.replace(text.find("current-context: token"), 22, "current-context: cert");
  Write(kubeconfig, text);
  client = KubeApiClient::FromKubeconfig(kubeconfig);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE(client->config().client_key.empty());
  EXPECT_TRUE(client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid).ok());
}

TEST_F(KubeApiClientTest, KubeconfigErrors) {
  struct Case {
    std::string text;
    std::string error;
  } cases[] = {
      {"clusters: []\n", "current-context: required"},
      {"current-context: x\n", "contexts: no entry named \"x\""},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
       "clusters: [{name: c, cluster: {server: https://h}}]\n"
       "users: [{name: u, user: {exec: {command: aws}}}]\n",
       "users[\"u\"].user.exec: not supported"},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
       "clusters: [{name: c, cluster: {server: https://h, certificate-authority-data: '%%'}}]\n",
       "clusters[\"c\"].cluster.certificate-authority-data: not valid base64"},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
       "clusters: [{name: c, cluster: {certificate-authority: ca.crt}}]\n",
       "clusters[\"c\"].cluster.server: required"},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
       "clusters: [{name: c, cluster: {server: https://h}}]\n"
       "users: [{name: u, user: {client-key: missing.key, client-certificate: missing.crt}}]\n",
       "cannot read users[\"u\"].user.client-certificate"},
  };
  for (const Case& c : cases) {
    Write(File("bad.kubeconfig"), c.text);
    absl::StatusOr<KubeApiConfig> config = LoadKubeconfig(File("bad.kubeconfig"));
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(c.error)) << c.text;
  }
  EXPECT_EQ(LoadKubeconfig(File("absent.kubeconfig")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(KubeApiClientTest, InClusterWithInjectedServiceAccountDirectory) {
  const std::string sa = File("serviceaccount");
  ASSERT_EQ(RunShell(fmt::format("mkdir -p {0} && cp {1} {0}/ca.crt", ShellQuote(sa),
                                 ShellQuote(File("ca.crt"))))
                .exit_code,
            0);
  Write(sa + "/token", kToken);
  absl::StatusOr<KubeApiClient> client = KubeApiClient::InCluster(
      {.host = "127.0.0.1", .port = std::to_string(port_), .service_account_dir = sa});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->config().server, Server());
  absl::StatusOr<pod::Pod> pod = client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, Expected());

  // From the environment, as in a pod.
  ::setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", std::to_string(port_).c_str(), 1);
  client = KubeApiClient::InCluster({.service_account_dir = sa});
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE(client->GetPod("ml", "trainer-7d9f8b6c5-x2k4p", kUid).ok());

  EXPECT_EQ(KubeApiClient::InCluster({.service_account_dir = sa}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KubeApiClient::InCluster({.host = "::1", .port = "443", .service_account_dir = sa})
                ->config()
                .server,
            "https://[::1]:443");
  EXPECT_EQ(
      KubeApiClient::InCluster({.host = "h", .port = "1", .service_account_dir = File("none")})
          .status()
          .code(),
      absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace topologyd::kube_api
