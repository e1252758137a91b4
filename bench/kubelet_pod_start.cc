// topologyd_kubelet_pod_start: what topologyd and its shim add to a real kubelet's static pod
// start, manifest written to container running, measured in one run against two identical
// stacks, the two alternated pod by pod:
//   - direct: kubelet (managers none) on its own private containerd;
//   - shim:   kubelet (managers none) on topologyd-shim, which relays to another private
//             containerd and asks a real topologyd (CPU 0 reserved, cgroup v1 cpuset) where
//             each container goes.
// Each round starts the same Guaranteed one-CPU pod on one stack and then on the other (the
// order alternates), and removes it again before the next start. "Running" is containerd's
// own start time of the app container (ContainerStatus started_at), so polling adds nothing.
// Prints the median, p90 and the paired per-round difference, and the overhead against the
// target of docs/performance.md.
//
// Needs root, containerd and a kubelet (tools/build-kube.sh kubelet; --kubelet-dir or
// $TOPOLOGYD_KUBE_BIN_DIR); without them it prints why and exits 0. A pod that does not start
// exits 1.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"

#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/kube/kubelet_process.h"
#include "tests/support/node/node_stack.h"

namespace {

namespace cri = runtime::v1;
namespace v1 = topologyd::v1;
using topologyd::testing::NodeStack;
using topologyd::testing::NodeStackOptions;
using topologyd::testing::PollUntil;
using topologyd::testing::containerd::ContainerdInstance;
using topologyd::testing::containerd::ContainerdSkipReason;
using topologyd::testing::containerd::EmulatorOptions;
using topologyd::testing::containerd::KubeletEmulator;
using topologyd::testing::kube::KubeletProcess;
using topologyd::testing::kube::KubeletSkipReason;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Check(const absl::Status& status, const std::string& what) {
  if (!status.ok()) throw Failure(what + ": " + status.ToString());
}

// Named after its uid: kubelet starts a static pod only once an earlier one of the same name has
// terminated completely, which would put the previous round's removal into this round.
std::string Manifest(const std::string& uid) {
  return fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: {}, namespace: default, uid: {}}}\n"
      "spec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n"
      "  - name: app\n    image: {}\n    imagePullPolicy: Never\n"
      "    command: [sleep, '3600']\n"
      "    resources: {{limits: {{cpu: '1', memory: 64Mi}}}}\n",
      uid, uid, ContainerdInstance::kImage);
}

// One kubelet on one runtime endpoint, with a CRI client on the containerd behind it.
struct Side {
  std::string name;
  ContainerdInstance containerd;
  std::unique_ptr<NodeStack> stack;  // the shim side only
  std::unique_ptr<KubeletEmulator> runtime;
  KubeletProcess kubelet;
  std::vector<double> millis;
};

// The start of pod `uid`'s app container on `side`, in ms after `written`.
double StartPod(Side& side, const std::string& uid) {
  const auto written = std::chrono::system_clock::now();
  Check(side.kubelet.WriteManifest(uid, Manifest(uid)), "write the manifest");
  int64_t started_ns = 0;
  const bool running = PollUntil([&] {
    cri::ListContainersRequest request;
    request.mutable_filter()->mutable_label_selector()->insert({"io.kubernetes.pod.uid", uid});
    cri::ListContainersResponse response;
    auto context = side.runtime->NewContext();
    if (!side.runtime->runtime().ListContainers(context.get(), request, &response).ok()) {
      return false;
    }
    for (const cri::Container& c : response.containers()) {
      if (c.state() != cri::CONTAINER_RUNNING) continue;
      cri::ContainerStatusResponse status;
      if (side.runtime->ContainerStatus(c.id(), &status, /*verbose=*/false).ok()) {
        started_ns = status.status().started_at();
        return started_ns > 0;
      }
    }
    return false;
  });
  if (!running) {
    throw Failure(fmt::format("{}: pod {} did not start:\n{}", side.name, uid,
                              side.kubelet.log().substr(0, 4000)));
  }
  const auto started = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(started_ns)));
  return std::chrono::duration<double, std::milli>(started - written).count();
}

// Removes the manifest and waits until kubelet has stopped the pod's sandbox (kubelet's garbage
// collection removes it up to a minute later) and, on the shim's side, topologyd has released
// the pod: the next start does not overlap the last one's removal.
void RemovePod(Side& side, const std::string& uid) {
  Check(side.kubelet.RemoveManifest(uid), "remove the manifest");
  const bool gone = PollUntil([&] {
    cri::ListPodSandboxRequest request;
    request.mutable_filter()->mutable_label_selector()->insert({"io.kubernetes.pod.uid", uid});
    request.mutable_filter()->mutable_state()->set_state(cri::SANDBOX_READY);
    cri::ListPodSandboxResponse response;
    auto context = side.runtime->NewContext();
    if (!side.runtime->runtime().ListPodSandbox(context.get(), request, &response).ok() ||
        !response.items().empty()) {
      return false;
    }
    v1::ListAllocationsResponse held;
    return side.stack == nullptr ||
           (side.stack->Allocations(&held).ok() &&
            std::none_of(held.pods().begin(), held.pods().end(),
                         [&](const v1::PodAllocation& pod) { return pod.uid() == uid; }));
  });
  if (!gone) {
    throw Failure(fmt::format("{}: pod {} was not stopped:\n{}\n{}", side.name, uid,
                              side.stack ? side.stack->Logs() : "",
                              side.kubelet.log().substr(0, 20000)));
  }
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[index];
}

int Run(int pods, const std::string& topologyd, const std::string& shim) {
  std::string pattern = "/tmp/tkps-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw Failure("mkdtemp");
  auto direct_side = std::make_unique<Side>();
  auto relayed_side = std::make_unique<Side>();
  direct_side->name = "direct";
  relayed_side->name = "shim";
  Side& direct = *direct_side;
  Side& relayed = *relayed_side;
  for (Side* side : {&direct, &relayed}) {
    const std::string own = pattern + "/" + side->name;
    std::filesystem::create_directories(own);
    auto socket = side->containerd.Start();
    Check(socket.status(), side->name + ": containerd");
    std::string endpoint = "unix://" + *socket;
    if (side == &relayed) {
      NodeStackOptions options{.topologyd_binary = topologyd, .shim_binary = shim};
      // The shim's and topologyd's own periods, as deployed (config/shim.yaml, config/).
      options.shim_config = "podSpec: {sources: [estimate]}\n";
      side->stack = std::make_unique<NodeStack>(own, *socket, options);
      Check(side->stack->Start(), "topologyd and the shim");
      endpoint = side->stack->shim_endpoint();
    }
    side->runtime = std::make_unique<KubeletEmulator>(
        EmulatorOptions{.endpoint = *socket, .image = side->containerd.image_id()});
    Check(side->kubelet.Start(own + "/kubelet", {.runtime_endpoint = endpoint}),
          side->name + ": kubelet");
  }
  // One pod each first: the first start pays for caches on both sides.
  for (Side* side : {&direct, &relayed}) {
    StartPod(*side, "warm-" + side->name);
    RemovePod(*side, "warm-" + side->name);
  }
  std::vector<double> paired;
  for (int i = 0; i < pods; ++i) {
    Side* first = i % 2 == 0 ? &direct : &relayed;
    Side* second = first == &direct ? &relayed : &direct;
    for (Side* side : {first, second}) {
      const std::string uid = fmt::format("{}-{}", side->name, i);
      side->millis.push_back(StartPod(*side, uid));
      RemovePod(*side, uid);
    }
    paired.push_back(relayed.millis.back() - direct.millis.back());
  }
  for (Side* side : {&direct, &relayed}) {
    side->kubelet.Stop(SIGTERM);
    Check(side->containerd.RemoveAllPods(), side->name + ": remove the pods");
  }
  const std::vector<double> direct_ms = direct.millis;
  const std::vector<double> shim_ms = relayed.millis;
  direct_side.reset();  // unmounts what kubelet left mounted in the directory
  relayed_side.reset();
  std::filesystem::remove_all(pattern);

  const double direct_p50 = Percentile(direct_ms, 0.5);
  const double shim_p50 = Percentile(shim_ms, 0.5);
  fmt::print(
      "static pod start, manifest written -> app container running ({} pods each, "
      "alternated)\n",
      pods);
  for (const auto& [name, millis] : {std::pair{"direct", direct_ms}, std::pair{"shim", shim_ms}}) {
    fmt::print("  {:<7} p50 {:7.1f} ms  p90 {:7.1f} ms  min {:7.1f} ms\n", name,
               Percentile(millis, 0.5), Percentile(millis, 0.9), Percentile(millis, 0.0));
  }
  fmt::print("  paired difference (shim - direct, per round): median {:+.1f} ms\n",
             Percentile(paired, 0.5));
  fmt::print("  overhead at p50: {:+.1f} ms = {:+.1f}% (target <= 5%)\n", shim_p50 - direct_p50,
             100.0 * (shim_p50 - direct_p50) / direct_p50);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"topologyd_kubelet_pod_start: a real kubelet's static pod start through the shim"};
  int pods = 20;
  std::string topologyd;
  std::string shim;
  std::string kubelet_dir;
  app.add_option("--pods", pods, "pods per stack")->check(CLI::PositiveNumber);
  app.add_option("--topologyd", topologyd, "the topologyd binary")->required();
  app.add_option("--shim", shim, "the topologyd-shim binary")->required();
  app.add_option("--kubelet-dir", kubelet_dir,
                 "the directory tools/build-kube.sh printed (default: $TOPOLOGYD_KUBE_BIN_DIR)");
  CLI11_PARSE(app, argc, argv);
  if (!kubelet_dir.empty()) ::setenv("TOPOLOGYD_KUBE_BIN_DIR", kubelet_dir.c_str(), 1);
  for (const std::string& reason : {ContainerdSkipReason(), KubeletSkipReason()}) {
    if (!reason.empty()) {
      std::cout << "topologyd_kubelet_pod_start: skipped: " << reason << "\n";
      return 0;
    }
  }
  try {
    return Run(pods, topologyd, shim);
  } catch (const Failure& e) {
    std::cerr << "topologyd_kubelet_pod_start: " << e.what() << "\n";
    return 1;
  }
}
