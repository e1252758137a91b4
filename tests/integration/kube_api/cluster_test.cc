// The scheduling loop closed on real components (issue #39): etcd and kube-apiserver with the
// NodeResourceTopology CRD, kube-scheduler as scheduler-plugins builds it, and four workers
// without kubelet, each a topologyd on a different recorded machine (single-numa-node, pod
// scope) that publishes its own NodeResourceTopology object. The same seeded wave of Guaranteed
// pods runs on two fresh clusters: with NodeResourceTopologyMatch no pod may be refused with
// TopologyAffinityError; with the default plugins only, some must be, or the wave shows nothing.
// The test's node agent stands in for each worker's kubelet and front end: it admits the pods
// bound there through that worker's topologyd and writes their status as kubelet would.
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/corpus/corpus_util.h"
#include "tests/integration/kube_api/cluster_run.h"
#include "tests/integration/kube_api/nrt_scheduler.h"
#include "tests/integration/kube_api/pod_wave.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/kube/nrt_crd.h"
#include "tests/support/kube/scheduler_process.h"
#include "tests/support/require_component.h"

namespace topologyd::testing::kube {
namespace {

struct Machine {
  const char* node;
  const char* xml;  // in the recorded-machine corpus
};

// NUMA nodes of different widths, so that a pod fits some and not others.
constexpr std::array<Machine, 4> kMachines = {{
    {"worker-e5", "intel-e5-2695v4-2s-smt-off.xml"},             // 2 NUMA nodes of 18 CPUs
    {"worker-epyc", "amd-epyc7742-2s-nps4-4xa100-ib.xml"},       // 8 of 32
    {"worker-snc", "intel-gold6230-2s-snc2-memside-cache.xml"},  // 4 of 20
    {"worker-opteron", "amd-opteron6276-4s-8numa.xml"},          // 8 of 8
}};

// 35 pods asking for 335 CPUs, 78% of the workers' allocatable 432: with the plugin all of them
// have run in every run so far, without it 3 to 5 were refused (the default scheduler breaks
// ties between nodes at random).
constexpr uint64_t kWaveSeed = 15;
constexpr int kWavePods = 35;

// A wave settles once every pod is decided, or the unbound rest has not changed for longer
// than a flush period, so it has been retried on a cache in step with the objects.
constexpr auto kQuiet = std::chrono::seconds(35);
constexpr auto kPatience = std::chrono::seconds(240);

std::vector<Worker> Workers() {
  std::vector<Worker> workers;
  for (const Machine& m : kMachines) {
    workers.push_back({m.node, (topology::testing::SharedTopologies() / m.xml).string()});
  }
  return workers;
}

TEST(ClusterTest, NodeResourceTopologyMatchAvoidsTheRefusalsOfATopologyUnawareScheduler) {
  TOPOLOGYD_REQUIRE_CORPUS();
  for (const Machine& machine : kMachines) {
    if (!std::filesystem::exists(topology::testing::SharedTopologies() / machine.xml)) {
      CORPUS_SKIP_OR_FAIL() << machine.xml << " is not in the recorded-machine corpus";
    }
  }
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  if (std::string reason = SchedulerSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  absl::StatusOr<std::string> crd_path = NrtCrdPath();
  if (!crd_path.ok()) SKIP_OR_FAIL() << crd_path.status().message();
  const std::vector<WavePod> wave = SeededWave(kWaveSeed, kWavePods);

  WaveOutcome aware;
  {
    ClusterRun run(Workers(), ClusterScheduler(/*topology_aware=*/true));
    absl::Status started = run.Start(*crd_path);
    ASSERT_TRUE(started.ok()) << started << "\n" << run.Logs();
    absl::StatusOr<WaveOutcome> outcome = run.Run(wave, kQuiet, kPatience);
    ASSERT_TRUE(outcome.ok()) << outcome.status() << "\n" << run.Logs();
    aware = *outcome;
    EXPECT_EQ(aware.Refused("TopologyAffinityError"), 0) << aware.Summary() << "\n" << run.Logs();
    EXPECT_TRUE(aware.failed.empty()) << aware.Summary();
    EXPECT_GT(aware.running, 0) << aware.Summary() << "\n" << run.Logs();
    // What is left waits because the plugin found no NUMA node for it, not for lack of a try.
    EXPECT_EQ(aware.unschedulable, aware.pending) << aware.Summary();
    absl::Status published = run.WaitForPublishedCpus(aware.cpus_by_node);
    EXPECT_TRUE(published.ok()) << published << "\n" << run.Logs();
  }
  WaveOutcome unaware;
  {
    ClusterRun run(Workers(), ClusterScheduler(/*topology_aware=*/false));
    absl::Status started = run.Start(*crd_path);
    ASSERT_TRUE(started.ok()) << started << "\n" << run.Logs();
    absl::StatusOr<WaveOutcome> outcome = run.Run(wave, kQuiet, kPatience);
    ASSERT_TRUE(outcome.ok()) << outcome.status() << "\n" << run.Logs();
    unaware = *outcome;
    EXPECT_GT(unaware.Refused("TopologyAffinityError"), 0) << unaware.Summary() << "\n"
                                                           << run.Logs();
    absl::Status published = run.WaitForPublishedCpus(unaware.cpus_by_node);
    EXPECT_TRUE(published.ok()) << published << "\n" << run.Logs();
  }
  std::printf(
      "cluster wave: seed %llu, %d Guaranteed pods, %zu workers (single-numa-node, pod scope). "
      "NodeResourceTopologyMatch (cache %s): %d refused with TopologyAffinityError (%s, "
      "%.1f s). Default plugins only: %d refused with TopologyAffinityError (%s, %.1f s).\n",
      static_cast<unsigned long long>(kWaveSeed), kWavePods, kMachines.size(), kNrtCacheMode,
      aware.Refused("TopologyAffinityError"), aware.Summary().c_str(), aware.seconds,
      unaware.Refused("TopologyAffinityError"), unaware.Summary().c_str(), unaware.seconds);
}

}  // namespace
}  // namespace topologyd::testing::kube
