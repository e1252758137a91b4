#include "tests/integration/kube_api/cluster_run.h"

#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"

#include "tests/integration/kube_api/node_agent.h"
#include "tests/support/kube/nrt_crd.h"

namespace topologyd::testing::kube {
namespace {

using Clock = std::chrono::steady_clock;

const char kNrtCollection[] = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/";

absl::Status Unexpected(const std::string& what, const ApiResponse& response) {
  return absl::InternalError(
      absl::StrCat(what, ": HTTP ", response.code, ": ", response.body.dump()));
}

// The scheduler's verdict on an unbound pod: PodScheduled False with reason Unschedulable.
bool MarkedUnschedulable(const nlohmann::json& pod) {
  for (const nlohmann::json& c : pod["status"].value("conditions", nlohmann::json::array())) {
    if (c.value("type", "") == "PodScheduled") {
      return c.value("status", "") == "False" && c.value("reason", "") == "Unschedulable";
    }
  }
  return false;
}

// A whole-number quantity of the object, which the API serves as a string or a number.
long long WholeQuantity(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<long long>();
  return value.is_string() ? std::stoll(value.get<std::string>()) : 0;
}

}  // namespace

int WaveOutcome::Decided() const {
  int n = running;
  for (const auto& [reason, count] : failed) n += count;
  return n;
}

int WaveOutcome::Refused(const std::string& reason) const {
  const auto it = failed.find(reason);
  return it == failed.end() ? 0 : it->second;
}

std::string WaveOutcome::Summary() const {
  int refused = 0;
  std::string reasons;
  for (const auto& [reason, count] : failed) {
    refused += count;
    absl::StrAppend(&reasons, reasons.empty() ? "" : ", ", reason, " ", count);
  }
  return absl::StrCat(running, " running, ", refused, " refused",
                      reasons.empty() ? "" : " (" + reasons + ")", ", ", pending, " pending");
}

absl::Status ClusterRun::Start(const std::string& crd_path) {
  if (absl::Status s = control_plane_.Start(); !s.ok()) return s;
  if (absl::Status s = ApplyNrtCrd(control_plane_, crd_path); !s.ok()) return s;
  absl::StatusOr<std::string> kubeconfig = control_plane_.Kubeconfig(kAdminToken);
  if (!kubeconfig.ok()) return kubeconfig.status();
  for (const Worker& spec : worker_specs_) {
    if (absl::Status s = StartWorker(spec, *kubeconfig); !s.ok()) return s;
  }
  for (const auto& worker : workers_) {
    if (absl::Status s = WaitForNrt(*worker); !s.ok()) return s;
  }
  std::filesystem::create_directories(dir_.File("scheduler"));
  return scheduler_.Start(control_plane_, dir_.File("scheduler"), scheduler_options_);
}

absl::Status ClusterRun::StartWorker(const Worker& spec, const std::string& kubeconfig) {
  const std::string dir = dir_.File(spec.node);
  std::filesystem::create_directories(dir);
  workers_.push_back(std::make_unique<WorkerNode>(spec.node, spec.machine_xml, dir));
  WorkerNode& worker = *workers_.back();
  // The Node first: topologyd's object names it as its owner.
  absl::StatusOr<nlohmann::json> node = worker.NodeObject();
  if (!node.ok()) return node.status();
  absl::StatusOr<ApiResponse> created = control_plane_.Request("POST", "/api/v1/nodes", *node);
  if (!created.ok()) return created.status();
  if (created->code != 201) return Unexpected("creating Node " + spec.node, *created);
  // The API server's TaintNodesByCondition admission taints a new Node not-ready; the node
  // lifecycle controller, which lifts that once the Node is Ready, does not run here.
  absl::StatusOr<ApiResponse> untainted =
      control_plane_.Patch("/api/v1/nodes/" + spec.node, {{"spec", {{"taints", nullptr}}}},
                           "application/merge-patch+json");
  if (!untainted.ok()) return untainted.status();
  if (untainted->code != 200) return Unexpected("untainting Node " + spec.node, *untainted);
  return worker.Start(kubeconfig);
}

absl::Status ClusterRun::WaitForNrt(const WorkerNode& worker) const {
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < until) {
    absl::StatusOr<ApiResponse> got = control_plane_.Request("GET", kNrtCollection + worker.name());
    if (got.ok() && got->code == 200) {
      const nlohmann::json owners =
          got->body["metadata"].value("ownerReferences", nlohmann::json::array());
      if (owners.size() != 1 || owners[0].value("kind", "") != "Node" ||
          owners[0].value("name", "") != worker.name()) {
        return absl::InternalError("the NodeResourceTopology object of " + worker.name() +
                                   " is not owned by its Node: " + got->body.dump());
      }
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError("topologyd of " + worker.name() +
                                     " published no NodeResourceTopology object in 30 s:\n" +
                                     worker.log());
}

absl::StatusOr<WaveOutcome> ClusterRun::Run(const std::vector<WavePod>& wave,
                                            std::chrono::seconds quiet,
                                            std::chrono::seconds patience) {
  const auto start = Clock::now();
  for (const WavePod& pod : wave) {
    absl::StatusOr<ApiResponse> created =
        control_plane_.Request("POST", "/api/v1/namespaces/default/pods", PodManifest(pod));
    if (!created.ok()) return created.status();
    if (created->code != 201) return Unexpected("creating pod " + pod.name, *created);
  }
  std::map<std::string, WorkerNode*> by_name;
  for (const auto& worker : workers_) by_name[worker->name()] = worker.get();
  NodeAgent agent(control_plane_, by_name);
  const int size = static_cast<int>(wave.size());
  std::string last;
  auto last_change = Clock::now();
  while (true) {
    if (absl::Status polled = agent.Poll(); !polled.ok()) return polled;
    absl::StatusOr<WaveOutcome> outcome = Observe();
    if (!outcome.ok()) return outcome.status();
    const std::string now = outcome->Summary();
    if (now != last) {
      last = now;
      last_change = Clock::now();
    }
    // Bound pods are decided at the next pass, so only unbound ones can be left over.
    if (outcome->Decided() == size ||
        (outcome->Decided() + outcome->pending == size && Clock::now() - last_change > quiet)) {
      outcome->seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (outcome->running != agent.admitted()) {
        return absl::InternalError(absl::StrCat("the API server shows ", outcome->running,
                                                " pods running, the node agent admitted ",
                                                agent.admitted()));
      }
      return outcome;
    }
    if (Clock::now() - start > patience) {
      return absl::DeadlineExceededError(
          absl::StrCat("the wave did not settle in ", patience.count(), " s: ", now));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

absl::StatusOr<WaveOutcome> ClusterRun::Observe() const {
  absl::StatusOr<ApiResponse> list =
      control_plane_.Request("GET", "/api/v1/namespaces/default/pods");
  if (!list.ok()) return list.status();
  if (list->code != 200) return Unexpected("listing pods", *list);
  WaveOutcome outcome;
  for (const nlohmann::json& pod : list->body["items"]) {
    const std::string phase = pod["status"].value("phase", "");
    const std::string node = pod["spec"].value("nodeName", "");
    if (phase == "Running") {
      ++outcome.running;
      const nlohmann::json& requests = pod["spec"]["containers"][0]["resources"]["requests"];
      outcome.cpus_by_node[node] += std::stoi(requests.value("cpu", "0"));
    } else if (phase == "Failed") {
      ++outcome.failed[pod["status"].value("reason", "")];
    } else if (node.empty()) {
      ++outcome.pending;
      if (MarkedUnschedulable(pod)) ++outcome.unschedulable;
    }
  }
  return outcome;
}

absl::Status ClusterRun::WaitForPublishedCpus(
    const std::map<std::string, int>& cpus_by_node) const {
  const auto until = Clock::now() + std::chrono::seconds(30);
  std::string differences;
  while (Clock::now() < until) {
    differences.clear();
    for (const auto& worker : workers_) {
      absl::StatusOr<ApiResponse> nrt =
          control_plane_.Request("GET", kNrtCollection + worker->name());
      if (!nrt.ok()) return nrt.status();
      long long taken = 0;
      for (const nlohmann::json& zone : nrt->body.value("zones", nlohmann::json::array())) {
        for (const nlohmann::json& r : zone.value("resources", nlohmann::json::array())) {
          if (r.value("name", "") != "cpu") continue;
          taken += WholeQuantity(r["allocatable"]) - WholeQuantity(r["available"]);
        }
      }
      const auto expected = cpus_by_node.find(worker->name());
      const long long want = expected == cpus_by_node.end() ? 0 : expected->second;
      if (taken != want) {
        absl::StrAppend(&differences, worker->name(), ": ", taken,
                        " CPUs taken, its running pods ask for ", want, "; ");
      }
    }
    if (differences.empty()) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError("the published objects disagree: " + differences);
}

std::string ClusterRun::Logs() const {
  std::string out = "== kube-scheduler\n" + scheduler_.log();
  for (const auto& worker : workers_) {
    absl::StrAppend(&out, "\n== topologyd of ", worker->name(), "\n", worker->log());
  }
  return out;
}

}  // namespace topologyd::testing::kube
