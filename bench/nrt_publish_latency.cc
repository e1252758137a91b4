// topologyd_nrt_publish_latency: how soon the NodeResourceTopology object in a real
// kube-apiserver shows an answered admission, and what publishing costs admission
// (docs/performance.md, "NodeResourceTopology publishing"). One run starts etcd and
// kube-apiserver with the CRD, a Node, and three topologyd daemons on the same machine: one
// publishing (nrt.apiServer), two not (the second shows how far identical daemons differ in the
// run). Each round admits one Guaranteed pod on each, in rotating order, times the answers, then
// waits until a watch on the object shows the publishing daemon's new pods fingerprint; then
// releases the pods and pauses `--spacing-ms`, so that each round starts outside the publisher's
// coalescing window. Baseline in the same run: a server-side apply of the same object by this
// tool, the API server's own share, over a kept connection and over a new one. The daemons are
// this build's (as the integration tests run them).
//
//   topologyd_nrt_publish_latency [--admissions N] [--spacing-ms MS]
#include <curl/curl.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "bench/latency_support.h"
#include "lib/curl_easy/curl_easy.h"
#include "lib/kube_api/kube_api_client.h"
#include "tests/integration/api_pods.h"
#include "tests/integration/process.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/kube/nrt_crd.h"
#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::bench {
namespace {

namespace v1 = ::topologyd::v1;
namespace kube = ::topologyd::testing::kube;

constexpr char kCollection[] = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";

std::string FingerprintOf(const nlohmann::json& object) {
  for (const nlohmann::json& a : object.value("attributes", nlohmann::json::array())) {
    if (a.value("name", "") == "nodeTopologyPodsFingerprint") return a.value("value", "");
  }
  return "";
}

// A watch on the node's object: when each pods fingerprint first showed.
class ObjectWatch {
 public:
  ObjectWatch(const kube::ControlPlane& control_plane, const std::string& node) {
    thread_ = std::thread([this,
                           url = control_plane.server() + kCollection +
                                 "?watch=1&fieldSelector=metadata.name%3D" + node,
                           ca = control_plane.ca_file()] { Run(url, ca); });
  }
  ~ObjectWatch() {
    stop_.store(true);
    thread_.join();
  }

  // When `fingerprint` first showed; waits up to 10 s.
  std::optional<Clock::time_point> WaitFor(const std::string& fingerprint) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(10), [&] { return seen_.count(fingerprint) > 0; });
    auto it = seen_.find(fingerprint);
    return it == seen_.end() ? std::nullopt : std::make_optional(it->second);
  }

 private:
  static size_t Write(char* data, size_t size, size_t count, void* self) {
    static_cast<ObjectWatch*>(self)->Take(std::string_view(data, size * count));
    return size * count;
  }
  static int Progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<ObjectWatch*>(self)->stop_.load() ? 1 : 0;
  }

  void Take(std::string_view bytes) {
    const Clock::time_point now = Clock::now();
    buffer_.append(bytes);
    for (size_t end; (end = buffer_.find('\n')) != std::string::npos;) {
      const nlohmann::json event =
          nlohmann::json::parse(buffer_.substr(0, end), nullptr, /*allow_exceptions=*/false);
      buffer_.erase(0, end + 1);
      if (!event.is_object() || !event.contains("object")) continue;
      std::lock_guard<std::mutex> lock(mu_);
      seen_.emplace(FingerprintOf(event["object"]), now);
      changed_.notify_all();
    }
  }

  void Run(const std::string& url, const std::string& ca_file) {
    absl::StatusOr<curl_easy::Handle> handle = curl_easy::NewHandle();
    if (!handle.ok()) return;
    CURL* h = handle->get();
    curl_easy::Headers headers(curl_slist_append(nullptr, "Accept: application/json"));
    curl_easy::AppendHeader(headers, fmt::format("Authorization: Bearer {}", kube::kAdminToken));
    char error[CURL_ERROR_SIZE] = {};
    curl_easy::ResponseBody unused(0);
    curl_easy::SetCommonOptions(h, url, std::chrono::hours(1), error, headers.get(), &unused);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca_file.c_str());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &ObjectWatch::Write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &ObjectWatch::Progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, this);
    curl_easy_perform(h);
  }

  std::atomic<bool> stop_{false};
  std::string buffer_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Clock::time_point> seen_;
  std::thread thread_;
};

struct Daemon {
  std::string dir;
  std::string socket;
  testing::DaemonProcess process;
  std::unique_ptr<v1::Topologyd::Stub> stub;

  void Start(const std::string& extra) {
    std::filesystem::create_directories(dir);
    const std::string config = dir + "/config.yaml";
    testing::WriteFile(config, testing::MinimalConfig(dir, extra));
    socket = dir + "/topologyd.sock";
    process.Start(config, dir + "/topologyd.log");
    if (!process.WaitUntilServing(socket, std::chrono::seconds(30))) {
      throw Failure("topologyd did not start; see " + dir + "/topologyd.log");
    }
    stub = v1::Topologyd::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  }

  double Admit(const std::string& uid) {
    return Timed([&] {
      grpc::ClientContext context;
      v1::AdmitRequest request;
      *request.mutable_pod() = testing::GuaranteedPod(uid, "1");
      v1::AdmitResponse response;
      Check(stub->Admit(&context, request, &response), "Admit " + uid);
      if (!response.admitted()) throw Failure("not admitted: " + response.message());
    });
  }

  void Release(const std::string& uid) {
    grpc::ClientContext context;
    v1::ReleaseRequest request;
    request.set_pod_uid(uid);
    v1::ReleaseResponse response;
    Check(stub->Release(&context, request, &response), "Release " + uid);
  }

  std::string Fingerprint() {
    grpc::ClientContext context;
    v1::GetNodeResourceTopologyResponse response;
    Check(stub->GetNodeResourceTopology(&context, {}, &response), "GetNodeResourceTopology");
    return FingerprintOf(nlohmann::json::parse(response.object_json()));
  }

  std::string ObjectJson() {
    grpc::ClientContext context;
    v1::GetNodeResourceTopologyResponse response;
    Check(stub->GetNodeResourceTopology(&context, {}, &response), "GetNodeResourceTopology");
    return response.object_json();
  }
};

int Run(int admissions, int spacing_ms) {
  if (std::string reason = kube::ControlPlaneSkipReason(); !reason.empty()) {
    std::cout << "skipped: " << reason << "\n";
    return testing::ComponentsRequired() ? 1 : 0;
  }
  absl::StatusOr<std::string> crd = kube::NrtCrdPath();
  if (!crd.ok()) {
    std::cout << "skipped: " << crd.status().message() << "\n";
    return testing::ComponentsRequired() ? 1 : 0;
  }
  kube::ControlPlane control_plane;
  if (absl::Status s = control_plane.Start(); !s.ok()) throw Failure(s.ToString());
  if (absl::Status s = kube::ApplyNrtCrd(control_plane, *crd); !s.ok()) {
    throw Failure(s.ToString());
  }
  absl::StatusOr<kube::ApiResponse> node =
      control_plane.Request("POST", "/api/v1/nodes", {{"metadata", {{"name", "worker-1"}}}});
  if (!node.ok() || node->code != 201) throw Failure("cannot create the Node");
  absl::StatusOr<std::string> kubeconfig = control_plane.Kubeconfig(kube::kAdminToken);
  if (!kubeconfig.ok()) throw Failure(kubeconfig.status().ToString());

  testing::TempDir dir("topologyd-nrt-latency");
  Daemon publishing{.dir = dir.path() + "/on"};
  Daemon quiet{.dir = dir.path() + "/off"};
  // A second daemon without publishing: how far two identical daemons differ in this run.
  Daemon control{.dir = dir.path() + "/control"};
  publishing.Start("nrt:\n  nodeName: worker-1\n  apiServer:\n    kubeconfig: " + *kubeconfig +
                   "\n");
  quiet.Start("nrt: {nodeName: worker-1}\n");
  control.Start("nrt: {nodeName: worker-1}\n");
  ObjectWatch watch(control_plane, "worker-1");
  if (!watch.WaitFor(publishing.Fingerprint())) throw Failure("the object never appeared");

  absl::StatusOr<kube_api::KubeApiClient> client =
      kube_api::KubeApiClient::FromKubeconfig(*kubeconfig);
  if (!client.ok()) throw Failure(client.status().ToString());

  std::vector<double> update, admit_on, admit_off, admit_control, apply_floor, apply_fresh;
  for (int i = 0; i < admissions; ++i) {
    const std::string uid = fmt::format("pod-{}", i);
    // Rotate which daemon answers first, so that none gains from its place in the round.
    const std::array<std::pair<Daemon*, std::vector<double>*>, 3> order = {
        {{&publishing, &admit_on}, {&quiet, &admit_off}, {&control, &admit_control}}};
    for (int k = 0; k < 3; ++k) {
      const auto& [daemon, samples] = order[static_cast<size_t>((i + k) % 3)];
      samples->push_back(daemon->Admit(uid));
    }
    const Clock::time_point answered = Clock::now();
    std::optional<Clock::time_point> shown = watch.WaitFor(publishing.Fingerprint());
    if (!shown) throw Failure("the object never showed " + uid);
    update.push_back(Micros(*shown - answered).count());
    publishing.Release(uid);
    quiet.Release(uid);
    control.Release(uid);
    std::this_thread::sleep_for(std::chrono::milliseconds(spacing_ms));
    // The floor: the same object applied by this tool under another name, over the connection
    // its client kept (as the daemon's publisher does) and, for comparison, by a new client
    // over a new TLS connection (as the publisher did before it kept its connection).
    nlohmann::json object = nlohmann::json::parse(publishing.ObjectJson());
    object["metadata"]["name"] = "floor";
    auto apply = [&](const kube_api::KubeApiClient& by) {
      absl::StatusOr<std::string> applied =
          by.Apply(std::string(kCollection) + "/floor", "bench", object.dump());
      if (!applied.ok()) throw Failure(applied.status().ToString());
    };
    apply_floor.push_back(Timed([&] { apply(*client); }));
    absl::StatusOr<kube_api::KubeApiClient> fresh =
        kube_api::KubeApiClient::FromKubeconfig(*kubeconfig);
    if (!fresh.ok()) throw Failure(fresh.status().ToString());
    apply_fresh.push_back(Timed([&] { apply(*fresh); }));
  }
  std::cout << fmt::format("NodeResourceTopology publishing, {} admissions, {} ms apart:\n",
                           admissions, spacing_ms);
  Report("admission answered -> object", update);
  Report("client apply, kept connection", apply_floor);
  Report("client apply, new connection", apply_fresh);
  std::cout << fmt::format("  apply p50 kept/new connection: {:.3f}\n",
                           Percentile(apply_floor, 0.5) / Percentile(apply_fresh, 0.5));
  Report("Admit, publishing on", admit_on);
  Report("Admit, publishing off", admit_off);
  Report("Admit, publishing off (control)", admit_control);
  std::cout << fmt::format("  Admit p50 on/off: {:.3f}; off (control)/off: {:.3f}\n",
                           Percentile(admit_on, 0.5) / Percentile(admit_off, 0.5),
                           Percentile(admit_control, 0.5) / Percentile(admit_off, 0.5));
  return 0;
}

}  // namespace
}  // namespace topologyd::bench

int main(int argc, char** argv) {
  CLI::App app("NodeResourceTopology publishing latency against a private kube-apiserver");
  int admissions = 120;
  int spacing_ms = 100;
  app.add_option("--admissions", admissions, "admissions on each daemon")
      ->check(CLI::Range(1, 100000));
  app.add_option("--spacing-ms", spacing_ms, "pause after each round")->check(CLI::Range(0, 10000));
  CLI11_PARSE(app, argc, argv);
  try {
    return topologyd::bench::Run(admissions, spacing_ms);
  } catch (const topologyd::bench::Failure& e) {
    std::cerr << "topologyd_nrt_publish_latency: " << e.what() << "\n";
    return 1;
  }
}
