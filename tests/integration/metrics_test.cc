// The /metrics endpoint of a real daemon: kubelet's and topologyd's series after admissions
// through the API, `promtool check metrics` on a real scrape, a port already in use, and a
// real Prometheus server scraping the daemon and answering a query for the admission counter.
// Tests needing promtool or Prometheus skip, saying so, where they are not installed.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include <grpcpp/grpcpp.h>

#include "tests/integration/api_pods.h"
#include "tests/integration/process.h"
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr char kPromtool[] = "/usr/bin/promtool";
constexpr char kPrometheus[] = "/usr/bin/prometheus";

// A loopback socket bound to a port the kernel chose; the port is free once it is closed.
class LoopbackPort {
 public:
  explicit LoopbackPort(bool listen = false) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    if (listen) {
      EXPECT_EQ(::listen(fd_, 1), 0);
    }
  }
  ~LoopbackPort() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A free loopback port for a server to bind.
int FreePort() { return LoopbackPort().port(); }

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET `url`; the body, or nullopt when the request fails or the status is not 200.
std::optional<std::string> HttpGet(const std::string& url) {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 10L);
  if (curl_easy_perform(curl.get()) != CURLE_OK) return std::nullopt;
  long code = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &code);
  if (code != 200) return std::nullopt;
  return body;
}

class MetricsEndpointTest : public ::testing::Test {
 protected:
  void StartDaemon() {
    port_ = FreePort();
    WriteFile(
        dir_.File("config.yaml"),
        MinimalConfig(dir_.path(), fmt::format("metrics: {{listen: \"127.0.0.1:{}\"}}\n", port_)));
    daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(dir_.File("topologyd.sock"), seconds(30)))
        << ReadFile(dir_.File("log"));
    stub_ = v1::Topologyd::NewStub(grpc::CreateChannel("unix:" + dir_.File("topologyd.sock"),
                                                       grpc::InsecureChannelCredentials()));
  }

  v1::AdmitResponse Admit(const v1::Pod& pod) {
    v1::AdmitRequest request;
    *request.mutable_pod() = pod;
    v1::AdmitResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(30));
    grpc::Status s = stub_->Admit(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  std::string Scrape() {
    std::optional<std::string> body = HttpGet(fmt::format("http://127.0.0.1:{}/metrics", port_));
    EXPECT_TRUE(body.has_value()) << "no answer on port " << port_;
    return body.value_or("");
  }

  // Scrapes until the text holds `line`, for up to 10 s: the usage gauges show the durable
  // state, which follows an admission's answer by a moment.
  std::string ScrapeUntil(const std::string& line) {
    std::string text = Scrape();
    for (int i = 0; i < 100 && text.find(line) == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      text = Scrape();
    }
    return text;
  }

  TempDir dir_;
  DaemonProcess daemon_;
  int port_ = 0;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
};

TEST_F(MetricsEndpointTest, AdmissionsShowInKubeletsAndTopologydsSeries) {
  StartDaemon();
  ASSERT_TRUE(Admit(GuaranteedPod("a", "2")).admitted());
  ASSERT_FALSE(Admit(GuaranteedPod("huge", "64")).admitted());
  const std::string text = ScrapeUntil("kubelet_cpu_manager_exclusive_cpu_allocation_count 2\n");
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_requests_total 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_errors_total 1\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_duration_ms_count 2\n"));
  // Both pods asked for exclusive CPUs; the second could not get them.
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_pinning_requests_total 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_pinning_errors_total 1\n"));
  // 16 CPUs, CPU 0 reserved, 2 exclusive.
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_exclusive_cpu_allocation_count 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_shared_pool_size_millicores 13000\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admissions_total{outcome=\"admitted\",reason=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admitted_pods 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_rpc_duration_seconds_count{code=\"OK\",method="
                              "\"topologyd.v1.Topologyd/Admit\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_build_info{version="));
  // The admitted pod's checkpoint write.
  EXPECT_THAT(text, HasSubstr("# TYPE topologyd_checkpoint_write_duration_seconds histogram"));
  EXPECT_THAT(text,
              ::testing::Not(HasSubstr("topologyd_checkpoint_write_duration_seconds_count 0\n")));
}

// promtool lints names as well as checking the format. kubelet's own names break two of its
// conventions; they are kept so kubelet's dashboards work, and are the only problems allowed.
TEST_F(MetricsEndpointTest, PromtoolAcceptsAScrape) {
  if (!std::filesystem::exists(kPromtool)) {
    SKIP_OR_FAIL() << kPromtool << " is not installed (Debian package prometheus)";
  }
  StartDaemon();
  ASSERT_TRUE(Admit(GuaranteedPod("a", "2")).admitted());
  WriteFile(dir_.File("scrape.txt"), Scrape());
  CommandResult check = RunCommand(
      {"/bin/sh", "-c", fmt::format("{} check metrics < {}", kPromtool, dir_.File("scrape.txt"))});
  const std::string problems = check.out + check.err;
  std::istringstream lines(problems);
  const std::regex kubelets_own(
      "^(kubelet_container_aligned_compute_resources_(failure_)?count|"
      "kubelet_cpu_manager_exclusive_cpu_allocation_count|"
      "kubelet_topology_manager_admission_duration_ms)[: ].*");
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    EXPECT_TRUE(std::regex_match(line, kubelets_own)) << "promtool: " << line;
  }
  // A format error (exit 1) is never acceptable; lint findings exit 3.
  EXPECT_NE(check.exit_code, 1) << problems;
}

TEST_F(MetricsEndpointTest, PortInUseFailsStartUpNamingTheKey) {
  LoopbackPort taken(/*listen=*/true);
  WriteFile(dir_.File("config.yaml"),
            MinimalConfig(dir_.path(),
                          fmt::format("metrics: {{listen: \"127.0.0.1:{}\"}}\n", taken.port())));
  daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));
  EXPECT_EQ(daemon_.WaitForExit(seconds(30)), 1);
  const std::string log = ReadFile(dir_.File("log"));
  EXPECT_THAT(
      log, HasSubstr(fmt::format("metrics.listen: cannot listen on 127.0.0.1:{}", taken.port())));
}

TEST_F(MetricsEndpointTest, BadListenAddressIsAConfigError) {
  WriteFile(dir_.File("config.yaml"),
            MinimalConfig(dir_.path(), "metrics: {listen: \"localhost:9469\"}\n"));
  CommandResult check = RunCommand({TopologydBinary(), "--check-config", dir_.File("config.yaml")});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_THAT(check.err, HasSubstr("metrics.listen"));
  EXPECT_THAT(check.err, HasSubstr("not an IPv4 address"));
}

// A Prometheus server of its own on a loopback port, scraping the daemon every second.
class PrometheusServer {
 public:
  PrometheusServer(const TempDir& dir, int target_port) : port_(FreePort()) {
    WriteFile(dir.File("prometheus.yml"),
              fmt::format("global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n"
                          "scrape_configs:\n"
                          "  - job_name: topologyd\n"
                          "    static_configs: [{{targets: ['127.0.0.1:{}']}}]\n",
                          target_port));
    // Everything the child needs is made before fork(): the test process has gRPC's threads,
    // so the child may only make async-signal-safe calls.
    std::vector<std::string> args = {kPrometheus, "--config.file=" + dir.File("prometheus.yml"),
                                     "--storage.tsdb.path=" + dir.File("tsdb"),
                                     fmt::format("--web.listen-address=127.0.0.1:{}", port_),
                                     "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int log_fd =
        ::open(dir.File("prometheus.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(log_fd, 2);
      ::execv(kPrometheus, argv.data());
      ::_exit(127);
    }
    ::close(log_fd);
  }
  ~PrometheusServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  int port() const { return port_; }

 private:
  int port_;
  pid_t pid_ = -1;
};

TEST_F(MetricsEndpointTest, PrometheusScrapesTheAdmissionCounter) {
  if (!std::filesystem::exists(kPrometheus)) {
    SKIP_OR_FAIL() << kPrometheus << " is not installed (Debian package prometheus)";
  }
  StartDaemon();
  ASSERT_TRUE(Admit(GuaranteedPod("a", "2")).admitted());
  PrometheusServer prometheus(dir_, port_);
  const std::string query = fmt::format(
      "http://127.0.0.1:{}/api/v1/query?query="
      "kubelet_topology_manager_admission_requests_total",
      prometheus.port());
  // The instant vector's sample: ..."value":[<time>,"1"]...
  const std::regex one_admission("\"value\":\\[[0-9.]+,\"1\"\\]");
  std::string last;
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::optional<std::string> answer = HttpGet(query)) {
      last = *answer;
      if (std::regex_search(last, one_admission)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(std::regex_search(last, one_admission))
      << "last answer: " << last << "\nprometheus log:\n"
      << ReadFile(dir_.File("prometheus.log"));
  EXPECT_THAT(last, HasSubstr("\"job\":\"topologyd\""));
}

}  // namespace
}  // namespace topologyd::testing
