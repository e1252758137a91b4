// The cluster test's loop through a real node: the kubelet of the kubelet end-to-end tests
// (topologyd-shim on a private containerd 1.6, topologyd on this host's cgroup v1 cpuset
// hierarchy) registered to a private API server as a Node, and kube-scheduler with
// NodeResourceTopologyMatch. topologyd publishes the Node's NodeResourceTopology object; a
// Guaranteed pod created through the API is bound by the scheduler, run by kubelet on the CPUs
// topologyd chose, and the object in the API server shows them taken; a pod no NUMA zone can
// take then stays Pending. Root only, as the kubelet tests.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/kube_api/nrt_scheduler.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/kube/nrt_crd.h"
#include "tests/support/kube/scheduler_process.h"
#include "tests/support/node/node_stack.h"
#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"

namespace topologyd::testing::kube {
namespace {

using containerd::ContainerdInstance;

const std::string kNode = KubeletProcess::kNodeName;
const std::string kNrtPath = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/" + kNode;

// Polls `read` every 100 ms until it returns an object, for up to kNodePatience.
std::optional<nlohmann::json> PollFor(const std::function<std::optional<nlohmann::json>()>& read) {
  std::optional<nlohmann::json> found;
  PollUntil([&] { return (found = read()).has_value(); });
  return found;
}

// A Guaranteed pod `name` of one container "app" asking for `cpus` CPUs, on the host's network
// with the image the containerd harness imports.
nlohmann::json GuaranteedPod(const std::string& name, long long cpus) {
  const nlohmann::json quantities = {{"cpu", std::to_string(cpus)}, {"memory", "256Mi"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"hostNetwork", true},
            {"terminationGracePeriodSeconds", 1},
            {"containers",
             {{{"name", "app"},
               {"image", ContainerdInstance::kImage},
               {"imagePullPolicy", "Never"},
               {"command", {"sh", "-c", "sleep 3600"}},
               {"resources", {{"requests", quantities}, {"limits", quantities}}}}}}}}};
}

// The object's CPUs available in each NUMA zone, and its pods fingerprint.
std::vector<long long> AvailableCpusByZone(const nlohmann::json& nrt) {
  std::vector<long long> out;
  for (const nlohmann::json& zone : nrt.value("zones", nlohmann::json::array())) {
    for (const nlohmann::json& r : zone.value("resources", nlohmann::json::array())) {
      if (r.value("name", "") != "cpu") continue;
      const nlohmann::json& value = r["available"];
      out.push_back(value.is_string() ? std::stoll(value.get<std::string>())
                                      : value.get<long long>());
    }
  }
  return out;
}
long long AvailableCpus(const nlohmann::json& nrt) {
  const std::vector<long long> zones = AvailableCpusByZone(nrt);
  return std::accumulate(zones.begin(), zones.end(), 0LL);
}
std::string Fingerprint(const nlohmann::json& nrt) {
  for (const nlohmann::json& a : nrt.value("attributes", nlohmann::json::array())) {
    if (a.value("name", "") == "nodeTopologyPodsFingerprint") return a.value("value", "");
  }
  return "";
}

TEST(ClusterKubeletTest, APodTheTopologyAwareSchedulerBindsRunsPinnedAndItsNodesObjectChanges) {
  if (std::string reason = containerd::ContainerdSkipReason(); !reason.empty()) {
    SKIP_OR_FAIL() << reason;
  }
  if (std::string reason = KubeletSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  if (std::string reason = SchedulerSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  absl::StatusOr<std::string> crd_path = NrtCrdPath();
  if (!crd_path.ok()) SKIP_OR_FAIL() << crd_path.status().message();

  ControlPlane control_plane;
  absl::Status started = control_plane.Start();
  ASSERT_TRUE(started.ok()) << started;
  started = ApplyNrtCrd(control_plane, *crd_path);
  ASSERT_TRUE(started.ok()) << started;
  absl::StatusOr<std::string> kubeconfig = control_plane.Kubeconfig(kAdminToken);
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status();

  TempDir dir("tck");
  ContainerdInstance containerd;
  absl::StatusOr<std::string> socket = containerd.Start();
  ASSERT_TRUE(socket.ok()) << socket.status();
  NodeStackOptions options;
  // As the cluster test's workers, on this machine; the shim reads each pod's spec from the
  // API server, as it would on a node of a cluster.
  options.topologyd_policy = absl::StrCat(
      "cpuManagerPolicy: static\n"
      "reservedSystemCPUs: \"0\"\n"
      "topologyManagerPolicy: single-numa-node\n"
      "topologyManagerScope: pod\n"
      "memoryManagerPolicy: Static\n"
      "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
      "nrt:\n  nodeName: ",
      kNode, "\n  apiServer: {kubeconfig: ", *kubeconfig, ", resyncPeriod: 5s}\n");
  options.shim_config = absl::StrCat(
      "failurePolicy: Fail\npodSpec: {sources: [apiServer, estimate], kubeconfig: ", *kubeconfig,
      "}\nresync: {period: 1s}\ntopologydTimeout: 3s\n");
  NodeStack stack(dir.path(), *socket, options);
  started = stack.Start();
  ASSERT_TRUE(started.ok()) << started;
  KubeletProcess kubelet;
  // kubelet's cgroups go with it only once the runtime has removed its containers.
  absl::Cleanup remove_pods = [&] {
    kubelet.Stop(SIGKILL);
    absl::Status removed;
    for (int attempt = 0; attempt < 5 && containerd.running(); ++attempt) {
      if ((removed = containerd.RemoveAllPods()).ok()) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    EXPECT_TRUE(removed.ok()) << removed;
  };
  started = kubelet.Start(dir.File("kubelet"),
                          {.runtime_endpoint = stack.shim_endpoint(), .kubeconfig = *kubeconfig});
  ASSERT_TRUE(started.ok()) << started;
  auto logs = [&] {
    return stack.Logs() + "\n--- kubelet\n" + containerd::Tail(kubelet.log(), 8000);
  };

  // kubelet registers the Node; the API server's admission taints it not-ready, which the node
  // lifecycle controller, not running here, would lift.
  ASSERT_TRUE(PollFor([&]() -> std::optional<nlohmann::json> {
    auto node = control_plane.Request("GET", "/api/v1/nodes/" + kNode);
    if (!node.ok() || node->code != 200) return std::nullopt;
    return node->body;
  })) << "kubelet did not register "
      << kNode << "\n"
      << logs();
  auto untainted = control_plane.Patch("/api/v1/nodes/" + kNode, {{"spec", {{"taints", nullptr}}}},
                                       "application/merge-patch+json");
  ASSERT_TRUE(untainted.ok()) << untainted.status();
  ASSERT_EQ(untainted->code, 200) << untainted->body.dump();

  // topologyd publishes the object once the Node exists, owned by it.
  std::optional<nlohmann::json> before = PollFor([&]() -> std::optional<nlohmann::json> {
    auto nrt = control_plane.Request("GET", kNrtPath);
    if (!nrt.ok() || nrt->code != 200) return std::nullopt;
    return nrt->body;
  });
  ASSERT_TRUE(before) << "no NodeResourceTopology object for " << kNode << "\n" << logs();
  const nlohmann::json owners =
      (*before)["metadata"].value("ownerReferences", nlohmann::json::array());
  ASSERT_EQ(owners.size(), 1u) << before->dump();
  EXPECT_EQ(owners[0].value("kind", ""), "Node");
  EXPECT_EQ(owners[0].value("name", ""), kNode);

  SchedulerProcess scheduler;
  std::filesystem::create_directories(dir.File("scheduler"));
  started = scheduler.Start(control_plane, dir.File("scheduler"),
                            ClusterScheduler(/*topology_aware=*/true));
  ASSERT_TRUE(started.ok()) << started;

  const nlohmann::json pod = GuaranteedPod("pinned", 1);
  auto created = control_plane.Request("POST", "/api/v1/namespaces/default/pods", pod);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->code, 201) << created->body.dump();
  const std::string uid = created->body["metadata"]["uid"];

  // Bound by the scheduler, running as kubelet reports it to the API server.
  std::string last;
  std::optional<nlohmann::json> running = PollFor([&]() -> std::optional<nlohmann::json> {
    auto got = control_plane.Request("GET", "/api/v1/namespaces/default/pods/pinned");
    if (!got.ok() || got->code != 200) return std::nullopt;
    last = got->body["status"].dump();
    for (const nlohmann::json& c :
         got->body["status"].value("containerStatuses", nlohmann::json::array())) {
      if (c.contains("state") && c["state"].contains("running")) return got->body;
    }
    return std::nullopt;
  });
  ASSERT_TRUE(running) << "the pod does not run: " << last << "\n"
                       << scheduler.log() << "\n"
                       << logs();
  EXPECT_EQ((*running)["spec"].value("nodeName", ""), kNode);

  // On the CPUs topologyd gave it: its process and topologyd's allocation, bound to the
  // container kubelet reports.
  std::string id = (*running)["status"]["containerStatuses"][0].value("containerID", "");
  id = id.substr(id.find("://") == std::string::npos ? 0 : id.find("://") + 3);
  containerd::KubeletEmulator runtime({.endpoint = *socket, .image = containerd.image_id()});
  pid_t pid = 0;
  ASSERT_TRUE(runtime.ContainerPid(id, &pid).ok()) << id;
  std::optional<v1::ContainerAllocation> allocation;
  absl::StatusOr<std::string> allowed;
  const bool pinned = PollUntil([&] {
    allocation = stack.Allocation(uid, "app");
    allowed = containerd::CpusAllowedList(pid);
    return allocation && allowed.ok() && allocation->container_id() == id &&
           *allowed == allocation->cpus();
  });
  ASSERT_TRUE(allocation.has_value()) << "topologyd holds nothing for " << uid << "\n" << logs();
  EXPECT_TRUE(allocation->exclusive());
  EXPECT_TRUE(pinned) << "allocation " << allocation->DebugString() << " process "
                      << (allowed.ok() ? *allowed : allowed.status().ToString());

  // The object in the API server shows the CPU taken and the pod in its fingerprint.
  std::optional<nlohmann::json> after = PollFor([&]() -> std::optional<nlohmann::json> {
    auto nrt = control_plane.Request("GET", kNrtPath);
    if (!nrt.ok() || nrt->code != 200) return std::nullopt;
    last = nrt->body.dump();
    if (AvailableCpus(nrt->body) != AvailableCpus(*before) - 1) return std::nullopt;
    return nrt->body;
  });
  ASSERT_TRUE(after) << "the object did not change: before " << before->dump() << "\nnow " << last;
  EXPECT_NE(Fingerprint(*after), Fingerprint(*before));

  // A pod one CPU wider than any NUMA zone has left fits kubelet's Node, which reserves no CPU,
  // but not topologyd's single-numa-node: the plugin keeps it Pending rather than let topologyd
  // refuse it on the node.
  const std::vector<long long> zones = AvailableCpusByZone(*after);
  const long long widest = *std::max_element(zones.begin(), zones.end());
  created = control_plane.Request("POST", "/api/v1/namespaces/default/pods",
                                  GuaranteedPod("second", widest + 1));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->code, 201) << created->body.dump();
  std::optional<nlohmann::json> turned_away = PollFor([&]() -> std::optional<nlohmann::json> {
    auto got = control_plane.Request("GET", "/api/v1/namespaces/default/pods/second");
    if (!got.ok() || got->code != 200) return std::nullopt;
    last = got->body.dump();
    for (const nlohmann::json& c :
         got->body["status"].value("conditions", nlohmann::json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("reason", "") == "Unschedulable") {
        return c;
      }
    }
    return std::nullopt;
  });
  ASSERT_TRUE(turned_away) << "the second pod: " << last;
  EXPECT_NE(turned_away->value("message", "").find("cannot align"), std::string::npos)
      << turned_away->dump();
  std::printf(
      "kubelet node %s: pod %s bound by NodeResourceTopologyMatch runs on CPUs %s, as topologyd "
      "allocated; its object's available CPUs %lld -> %lld, fingerprint %s -> %s; a second pod "
      "of %lld CPUs stays Pending: %s\n",
      kNode.c_str(), uid.c_str(), allowed.ok() ? allowed->c_str() : "?", AvailableCpus(*before),
      AvailableCpus(*after), Fingerprint(*before).c_str(), Fingerprint(*after).c_str(), widest + 1,
      turned_away->value("message", "").c_str());
}

}  // namespace
}  // namespace topologyd::testing::kube
