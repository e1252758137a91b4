// The metric families after fake engine events: kubelet's names, types, labels and buckets,
// which event counts where, and the scrape-time families from an engine snapshot.
#include "lib/metrics/metrics.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/metrics/kubelet_names.h"
#include "lib/metrics/rpc_timer.h"

namespace topologyd::metrics {
namespace {

using std::chrono::microseconds;
using ::testing::HasSubstr;

std::string Scrape(const Metrics& m) { return Render({m.registry()}); }

constexpr const char* kAligned = "kubelet_container_aligned_compute_resources_count";
constexpr const char* kFailed = "kubelet_container_aligned_compute_resources_failure_count";

// One series of kubelet's aligned-compute counters as the text format shows it (labels
// sorted by name).
std::string Series(const char* family, const char* scope, const char* boundary, int value) {
  return std::string(family) + "{boundary=\"" + boundary + "\",scope=\"" + scope + "\"} " +
         std::to_string(value) + "\n";
}

engine::AdmissionEvent Admitted(hints::Policy policy, admission::Scope scope, size_t containers) {
  engine::AdmissionEvent e;
  e.admitted = true;
  e.policy = policy;
  e.scope = scope;
  e.containers = containers;
  e.duration = microseconds(300);
  return e;
}

engine::AdmissionEvent Refused(std::string_view reason, hints::Policy policy,
                               admission::Scope scope) {
  engine::AdmissionEvent e;
  e.admitted = false;
  e.reason = reason;
  e.policy = policy;
  e.scope = scope;
  e.duration = microseconds(120);
  return e;
}

TEST(MetricsTest, KubeletFamiliesHaveKubeletsNamesAndTypes) {
  Metrics m;
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_topology_manager_admission_requests_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_topology_manager_admission_errors_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_topology_manager_admission_duration_ms histogram"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_cpu_manager_pinning_requests_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_cpu_manager_pinning_errors_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_memory_manager_pinning_requests_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_memory_manager_pinning_errors_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_container_aligned_compute_resources_count counter"));
  EXPECT_THAT(
      text, HasSubstr("# TYPE kubelet_container_aligned_compute_resources_failure_count counter"));
  // Series kubelet creates at start-up, at zero.
  for (const char* family : {kAligned, kFailed}) {
    EXPECT_THAT(text, HasSubstr(Series(family, "container", "numa_node", 0)));
    EXPECT_THAT(text, HasSubstr(Series(family, "pod", "numa_node", 0)));
    EXPECT_THAT(text, HasSubstr(Series(family, "container", "physical_cpu", 0)));
  }
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_requests_total 0\n"));
}

TEST(MetricsTest, AdmissionDurationUsesKubeletsMillisecondBuckets) {
  const std::vector<double> buckets = kubelet::AdmissionDurationBucketsMs();
  ASSERT_EQ(buckets.size(), 15u);
  EXPECT_DOUBLE_EQ(buckets.front(), 0.05);
  EXPECT_DOUBLE_EQ(buckets[1], 0.1);
  EXPECT_DOUBLE_EQ(buckets.back(), 819.2);
  Metrics m;
  m.AdmissionDecided(Admitted(hints::Policy::kBestEffort, admission::Scope::kContainer, 1));
  const std::string text = Scrape(m);
  // 0.3 ms: not in the 0.2 bucket, in the 0.4 one.
  EXPECT_THAT(text,
              HasSubstr("kubelet_topology_manager_admission_duration_ms_bucket{le=\"0.2\"} 0"));
  EXPECT_THAT(text,
              HasSubstr("kubelet_topology_manager_admission_duration_ms_bucket{le=\"0.4\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("kubelet_topology_manager_admission_duration_ms_bucket{le=\"819.2\"} 1"));
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_duration_ms_count 1"));
}

TEST(MetricsTest, RequestsAndErrorsCountDecisionsNotRepeats) {
  Metrics m;
  m.AdmissionDecided(Admitted(hints::Policy::kBestEffort, admission::Scope::kContainer, 2));
  m.AdmissionDecided(
      Refused("TopologyAffinityError", hints::Policy::kBestEffort, admission::Scope::kContainer));
  engine::AdmissionEvent repeat =
      Admitted(hints::Policy::kBestEffort, admission::Scope::kContainer, 2);
  repeat.decided = false;
  m.AdmissionDecided(repeat);
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_requests_total 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_topology_manager_admission_errors_total 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admissions_total{outcome=\"admitted\",reason=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admissions_total{outcome=\"unchanged\",reason=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admissions_total{outcome=\"refused\",reason="
                              "\"TopologyAffinityError\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admission_duration_seconds_count 3\n"));
}

TEST(MetricsTest, PinningCountsComeFromTheManagersAllocateCalls) {
  Metrics m;
  engine::AdmissionEvent e = Admitted(hints::Policy::kNone, admission::Scope::kContainer, 3);
  e.counts.cpu = {.requests = 2, .errors = 0};
  e.counts.memory = {.requests = 3, .errors = 0};
  m.AdmissionDecided(e);
  engine::AdmissionEvent f =
      Refused("UnexpectedAdmissionError", hints::Policy::kNone, admission::Scope::kContainer);
  f.counts.cpu = {.requests = 1, .errors = 1};
  m.AdmissionDecided(f);
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_pinning_requests_total 3\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_pinning_errors_total 1\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_memory_manager_pinning_requests_total 3\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_memory_manager_pinning_errors_total 0\n"));
}

TEST(MetricsTest, NumaAlignmentCountsOnlyUnderSingleNumaNode) {
  Metrics m;
  m.AdmissionDecided(Admitted(hints::Policy::kRestricted, admission::Scope::kContainer, 2));
  m.AdmissionDecided(
      Refused("TopologyAffinityError", hints::Policy::kRestricted, admission::Scope::kContainer));
  EXPECT_THAT(Scrape(m), HasSubstr(Series(kAligned, "container", "numa_node", 0)));
  EXPECT_THAT(Scrape(m), HasSubstr(Series(kFailed, "container", "numa_node", 0)));

  m.AdmissionDecided(Admitted(hints::Policy::kSingleNumaNode, admission::Scope::kContainer, 2));
  m.AdmissionDecided(Admitted(hints::Policy::kSingleNumaNode, admission::Scope::kPod, 3));
  m.AdmissionDecided(
      Refused("TopologyAffinityError", hints::Policy::kSingleNumaNode, admission::Scope::kPod));
  // An allocation failing after the merge admitted is not an alignment failure.
  m.AdmissionDecided(
      Refused("UnexpectedAdmissionError", hints::Policy::kSingleNumaNode, admission::Scope::kPod));
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr(Series(kAligned, "container", "numa_node", 2)));
  EXPECT_THAT(text, HasSubstr(Series(kAligned, "pod", "numa_node", 1)));
  EXPECT_THAT(text, HasSubstr(Series(kFailed, "pod", "numa_node", 1)));
  EXPECT_THAT(text, HasSubstr(Series(kFailed, "container", "numa_node", 0)));
}

TEST(MetricsTest, FullPcpusOnlyCountsPhysicalCpuAlignment) {
  Metrics m;
  engine::AdmissionEvent e =
      Refused("SMTAlignmentError", hints::Policy::kNone, admission::Scope::kContainer);
  e.counts.cpu = {.requests = 2, .errors = 1};
  e.counts.cpu_full_pcpus = {.requests = 2, .errors = 1};
  m.AdmissionDecided(e);
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr(Series(kAligned, "container", "physical_cpu", 1)));
  EXPECT_THAT(text, HasSubstr(Series(kFailed, "container", "physical_cpu", 1)));
}

TEST(MetricsTest, CheckpointReconcileReloadAndRpcFamilies) {
  Metrics m;
  m.CheckpointWritten(std::chrono::milliseconds(3), true);
  m.CheckpointWritten(std::chrono::milliseconds(1), false);
  m.Reconciled(std::chrono::milliseconds(2));
  m.Reloaded(engine::ReloadOutcome::kPartial);
  m.Reloaded(engine::ReloadOutcome::kPartial);
  m.RpcFinished("topologyd.v1.Topologyd/Admit", StatusCodeName(grpc::StatusCode::OK),
                microseconds(500));
  m.RpcFinished("topologyd.v1.Topologyd/Admit", StatusCodeName(grpc::StatusCode::UNAVAILABLE),
                microseconds(500));
  const std::string text = Scrape(m);
  EXPECT_THAT(text, HasSubstr("topologyd_checkpoint_write_duration_seconds_count 2\n"));
  EXPECT_THAT(text,
              HasSubstr("topologyd_checkpoint_write_duration_seconds_bucket{le=\"0.0025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_checkpoint_write_failures_total 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_reconcile_duration_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_reloads_total{outcome=\"partial\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_reloads_total{outcome=\"rejected\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_rpc_duration_seconds_count{code=\"UNAVAILABLE\",method="
                              "\"topologyd.v1.Topologyd/Admit\"} 1\n"));
}

TEST(MetricsTest, ScrapeTimeFamiliesReadOneSnapshot) {
  int reads = 0;
  EngineCollector collector([&reads] {
    ++reads;
    EngineSnapshot s;
    s.usage.reserved = *CpuSet::Parse("0");
    s.usage.shared_pool = *CpuSet::Parse("0,3-7");
    s.usage.exclusive_cpus = *CpuSet::Parse("1-2");
    ledger::NumaUsage n0;
    n0.numa_id = 0;
    n0.cpus = *CpuSet::Parse("0-3");
    n0.exclusive_cpus = *CpuSet::Parse("1-2");
    n0.reserved_cpus = *CpuSet::Parse("0");
    n0.memory_used["memory"] = 1 << 30;
    ledger::NumaUsage n1;
    n1.numa_id = 1;
    n1.cpus = *CpuSet::Parse("4-7");
    s.usage.per_numa = {n0, n1};
    s.cgroup.writes = 7;
    s.cgroup.failed_writes = 1;
    s.cgroup.drift_repairs = 2;
    s.cgroup.constrained = 3;
    s.admitted_pods = 4;
    return std::make_optional(s);
  });
  const std::string text =
      Render({std::shared_ptr<prometheus::Collectable>(&collector, [](auto*) {})});
  EXPECT_EQ(reads, 1);
  EXPECT_THAT(text, HasSubstr("# TYPE kubelet_cpu_manager_shared_pool_size_millicores gauge"));
  // kubelet's available CPUs: the pool less the reserved CPU.
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_shared_pool_size_millicores 5000\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_exclusive_cpu_allocation_count 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_allocation_per_numa{numa_node=\"0\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubelet_cpu_manager_allocation_per_numa{numa_node=\"1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_numa_reserved_cpus{numa_node=\"0\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("topologyd_numa_memory_used_bytes{numa_node=\"0\",resource=\"memory\"} "
                        "1073741824\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE topologyd_cgroup_writes_total counter"));
  EXPECT_THAT(text, HasSubstr("topologyd_cgroup_writes_total 7\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_cgroup_write_failures_total 1\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_drift_repairs_total 2\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_constrained_containers 3\n"));
  EXPECT_THAT(text, HasSubstr("topologyd_admitted_pods 4\n"));
}

TEST(MetricsTest, BuildInfoIsOneWithTheVersion) {
  BuildInfoCollector info;
  const std::string text = Render({std::shared_ptr<prometheus::Collectable>(&info, [](auto*) {})});
  EXPECT_THAT(text, HasSubstr("# TYPE topologyd_build_info gauge"));
  EXPECT_THAT(text, HasSubstr("topologyd_build_info{version=\""));
  EXPECT_THAT(text, HasSubstr("\"} 1\n"));
}

}  // namespace
}  // namespace topologyd::metrics
