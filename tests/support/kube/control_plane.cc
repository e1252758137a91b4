#include "tests/support/kube/control_plane.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

#include "lib/curl_easy/curl_easy.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/free_port.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/test_certificates.h"

namespace topologyd::testing::kube {
namespace {

namespace fs = std::filesystem;
using containerd::ReadWholeFile;
using containerd::SpawnServer;
using containerd::Tail;
using containerd::WaitForChild;

constexpr auto kReadyPatience = std::chrono::seconds(120);

}  // namespace

std::string ControlPlaneSkipReason() {
  for (const char* name : {"etcd", "kube-apiserver"}) {
    const std::string binary = KubeBinary(name);
    if (binary.empty() || ::access(binary.c_str(), X_OK) != 0) {
      return absl::StrCat("no ", name,
                          ": configure with -DTOPOLOGYD_KUBE_BIN_DIR=$(tools/build-kube.sh "
                          "kubelet etcd kube-apiserver) or set TOPOLOGYD_KUBE_BIN_DIR");
    }
  }
  return TestCertificatesMissing();
}

ControlPlane::~ControlPlane() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

void ControlPlane::Stop() {
  StopApiserver();
  containerd::StopChild(etcd_, SIGTERM, std::chrono::seconds(15));
}

absl::Status ControlPlane::Start() {
  char name[] = "/tmp/tpd-kube-XXXXXX";
  if (::mkdtemp(name) == nullptr) return absl::InternalError("mkdtemp failed");
  dir_ = name;
  fs::create_directories(dir_ + "/pki");
  // The client certificate is the administrator's, by group (O=) as the API server reads it.
  if (std::string error = MakeTestCertificates(dir_ + "/pki", "/O=system:masters/CN=admin");
      !error.empty()) {
    return absl::InternalError(error);
  }
  // Service account tokens are signed with the server's key and checked with its public half.
  const ShellResult public_key =
      RunShell("openssl pkey -in " + ShellQuote(dir_ + "/pki/server.key") + " -pubout -out " +
               ShellQuote(dir_ + "/pki/sa.pub"));
  if (public_key.exit_code != 0) return absl::InternalError("openssl: " + public_key.err);
  if (absl::Status started = StartEtcd(); !started.ok()) return started;
  const int port = FreeLoopbackPort();
  if (port == 0) return absl::InternalError("no free loopback port");
  return StartApiserver(port);
}

void ControlPlane::StopApiserver() {
  containerd::StopChild(apiserver_, SIGTERM, std::chrono::seconds(15));
}

absl::Status ControlPlane::RestartApiserver() {
  StopApiserver();
  return StartApiserver(apiserver_port_);
}

absl::Status ControlPlane::StartEtcd() {
  const int client = FreeLoopbackPort();
  const int peer = FreeLoopbackPort();
  if (client == 0 || peer == 0) return absl::InternalError("no free loopback port");
  const std::string client_url = absl::StrCat("http://127.0.0.1:", client);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", peer);
  etcd_ = SpawnServer(
      {KubeBinary("etcd"), "--name", "test", "--data-dir", dir_ + "/etcd", "--listen-client-urls",
       client_url, "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
       "--initial-advertise-peer-urls", peer_url, "--initial-cluster", "test=" + peer_url,
       "--unsafe-no-fsync", "--log-level", "warn"},
      dir_ + "/etcd.log");
  if (etcd_ < 0) return absl::InternalError("cannot start etcd");
  etcd_url_ = client_url;
  return absl::OkStatus();
}

absl::Status ControlPlane::StartApiserver(int port) {
  apiserver_port_ = port;
  server_ = absl::StrCat("https://127.0.0.1:", port);
  const std::string pki = dir_ + "/pki";
  std::ofstream(pki + "/tokens.csv")
      << kAdminToken << ",admin,admin-uid,system:masters\n"
      << kNobodyToken << ",nobody,nobody-uid\n"
      << kNodeToken << ",system:node:worker-1,node-uid,system:nodes\n";
  const std::vector<std::string> argv = {
      KubeBinary("kube-apiserver"), "--etcd-servers=" + etcd_url_, "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1", absl::StrCat("--secure-port=", port),
      "--cert-dir=" + dir_ + "/apiserver-certs", "--tls-cert-file=" + pki + "/server.crt",
      "--tls-private-key-file=" + pki + "/server.key", "--client-ca-file=" + pki + "/ca.crt",
      "--token-auth-file=" + pki + "/tokens.csv", "--authorization-mode=RBAC",
      "--service-account-issuer=https://kubernetes.default.svc",
      "--service-account-key-file=" + pki + "/sa.pub",
      "--service-account-signing-key-file=" + pki + "/server.key",
      "--service-cluster-ip-range=10.96.0.0/24",
      // No controller manager makes the default service account a pod would need.
      "--disable-admission-plugins=ServiceAccount", "--enable-priority-and-fairness=false",
      // The "kubernetes" service cannot point at loopback; no test needs it.
      "--endpoint-reconciler-type=none", "--v=1"};
  apiserver_ = SpawnServer(argv, dir_ + "/apiserver.log");
  if (apiserver_ < 0) return absl::InternalError("cannot start kube-apiserver");
  return WaitUntilReady();
}

absl::Status ControlPlane::WaitUntilReady() const {
  const auto until = std::chrono::steady_clock::now() + kReadyPatience;
  absl::StatusOr<ApiResponse> ready;
  while (std::chrono::steady_clock::now() < until) {
    if (WaitForChild(apiserver_, std::chrono::milliseconds(0))) {
      return absl::InternalError("kube-apiserver exited at start:\n" + log());
    }
    ready = Request("GET", "/readyz");
    if (ready.ok() && ready->code == 200) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "kube-apiserver was not ready within ", kReadyPatience.count(), " s: ",
      ready.ok() ? absl::StrCat("HTTP ", ready->code) : ready.status().ToString(), "\n", log()));
}

absl::StatusOr<std::string> ControlPlane::Kubeconfig(std::string_view token) {
  const std::string path = absl::StrCat(dir_, "/kubeconfig-", std::string(token));
  if (!fs::exists(path)) {
    std::ofstream(path) << "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n"
                        << "    server: " << server_ << "\n    certificate-authority: " << ca_file()
                        << "\nusers:\n- name: user\n  user:\n    token: " << token
                        << "\ncontexts:\n- name: test\n  context:\n    cluster: test\n"
                        << "    user: user\ncurrent-context: test\n";
  }
  return path;
}

absl::StatusOr<ApiResponse> ControlPlane::Request(std::string_view method, const std::string& path,
                                                  const nlohmann::json& body,
                                                  std::string_view token) const {
  return Send(method, path, body, token, "application/json");
}

absl::StatusOr<ApiResponse> ControlPlane::Patch(const std::string& path, const nlohmann::json& body,
                                                std::string_view content_type) const {
  return Send("PATCH", path, body, kAdminToken, content_type);
}

absl::StatusOr<ApiResponse> ControlPlane::Send(std::string_view method, const std::string& path,
                                               const nlohmann::json& body, std::string_view token,
                                               std::string_view content_type) const {
  auto handle = curl_easy::NewHandle();
  if (!handle.ok()) return handle.status();
  curl_easy::Headers headers(curl_slist_append(nullptr, "Accept: application/json"));
  curl_easy::AppendHeader(headers, absl::StrCat("Authorization: Bearer ", std::string(token)));
  curl_easy::AppendHeader(headers, absl::StrCat("Content-Type: ", std::string(content_type)));
  if (headers == nullptr) return absl::ResourceExhaustedError("curl_slist_append failed");
  char error[CURL_ERROR_SIZE] = {};
  curl_easy::ResponseBody response(64 << 20);
  curl_easy::SetCommonOptions(handle->get(), server_ + path, std::chrono::seconds(30), error,
                              headers.get(), &response);
  curl_easy::SetTlsOptions(handle->get(), {.ca_pem = ReadWholeFile(ca_file())});
  const std::string method_text(method);
  curl_easy_setopt(handle->get(), CURLOPT_CUSTOMREQUEST, method_text.c_str());
  const std::string payload = body.is_null() ? "" : body.dump();
  if (!body.is_null()) curl_easy_setopt(handle->get(), CURLOPT_POSTFIELDS, payload.c_str());
  if (curl_easy_perform(handle->get()) != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(std::string(method), " ", path, ": ", error));
  }
  ApiResponse out;
  curl_easy_getinfo(handle->get(), CURLINFO_RESPONSE_CODE, &out.code);
  out.body = nlohmann::json::parse(response.text, nullptr, /*allow_exceptions=*/false);
  if (out.body.is_discarded()) out.body = nullptr;
  return out;
}

std::string ControlPlane::log() const {
  return absl::StrCat("== etcd\n", Tail(ReadWholeFile(dir_ + "/etcd.log"), 2000),
                      "\n== kube-apiserver\n", Tail(ReadWholeFile(dir_ + "/apiserver.log"), 4000));
}

}  // namespace topologyd::testing::kube
