#include "lib/metrics/metrics.h"

#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <utility>

#include "lib/common/version.h"
#include "lib/metrics/kubelet_names.h"

namespace topologyd::metrics {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildHistogram;
using prometheus::Counter;
using prometheus::Histogram;
using prometheus::Registry;

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
double Millis(std::chrono::nanoseconds d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

Counter* PlainCounter(Registry& r, std::string_view name, const std::string& help) {
  return &BuildCounter().Name(std::string(name)).Help(help).Register(r).Add({});
}

// Seconds from 10 µs to 10 s: admission decides in tens of microseconds, a checkpoint fsync
// takes milliseconds, a stalled one seconds. One copy: RpcFinished passes it on every call,
// and it is read only when a new series is made.
const Histogram::BucketBoundaries& SecondsBuckets() {
  static const auto* const kBuckets = new Histogram::BucketBoundaries{
      0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,     0.1,     0.25,   0.5,     1,      2.5,   5,      10};
  return *kBuckets;
}

// An unlabelled histogram in seconds.
Histogram* PlainSecondsHistogram(Registry& r, std::string_view name, const std::string& help) {
  return &BuildHistogram().Name(std::string(name)).Help(help).Register(r).Add({}, SecondsBuckets());
}

prometheus::ClientMetric GaugeOf(double value,
                                 std::vector<prometheus::ClientMetric::Label> labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  return m;
}

prometheus::ClientMetric CounterOf(double value) {
  prometheus::ClientMetric m;
  m.counter.value = value;
  return m;
}

prometheus::MetricFamily FamilyOf(std::string_view name, std::string help,
                                  prometheus::MetricType type,
                                  std::vector<prometheus::ClientMetric> metrics) {
  return prometheus::MetricFamily{std::string(name), std::move(help), type, std::move(metrics)};
}

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<Registry>()) {
  Registry& r = *registry_;
  // kubelet's, with kubelet's help texts.
  admission_requests_ = PlainCounter(r, kubelet::kAdmissionRequests,
                                     "The number of admission requests where resources have to be "
                                     "aligned.");
  admission_errors_ = PlainCounter(r, kubelet::kAdmissionErrors,
                                   "The number of admission request failures where resources "
                                   "could not be aligned.");
  admission_duration_ms_ = &BuildHistogram()
                                .Name(std::string(kubelet::kAdmissionDuration))
                                .Help("Duration in milliseconds to serve a pod admission request.")
                                .Register(r)
                                .Add({}, kubelet::AdmissionDurationBucketsMs());
  cpu_pinning_requests_ = PlainCounter(r, kubelet::kCpuPinningRequests,
                                       "The number of cpu core allocations which required "
                                       "pinning.");
  cpu_pinning_errors_ = PlainCounter(r, kubelet::kCpuPinningErrors,
                                     "The number of cpu core allocations which required pinning "
                                     "failed.");
  memory_pinning_requests_ = PlainCounter(r, kubelet::kMemoryPinningRequests,
                                          "The number of memory pages allocations which required "
                                          "pinning.");
  memory_pinning_errors_ = PlainCounter(r, kubelet::kMemoryPinningErrors,
                                        "The number of memory pages allocations which required "
                                        "pinning that failed.");
  auto& aligned = BuildCounter()
                      .Name(std::string(kubelet::kAligned))
                      .Help(
                          "Cumulative number of aligned compute resources allocated to "
                          "containers by alignment type.")
                      .Register(r);
  auto& failed = BuildCounter()
                     .Name(std::string(kubelet::kAlignedFailures))
                     .Help(
                         "Cumulative number of failures to allocate aligned compute resources "
                         "to containers by alignment type.")
                     .Register(r);
  // Created at zero, as kubelet's managers do at start-up, so rate() and alerts see them.
  auto labels = [](std::string_view scope, std::string_view boundary) {
    return prometheus::Labels{{std::string(kubelet::kScopeLabel), std::string(scope)},
                              {std::string(kubelet::kBoundaryLabel), std::string(boundary)}};
  };
  aligned_container_numa_ =
      &aligned.Add(labels(kubelet::kScopeContainer, kubelet::kBoundaryNumaNode));
  aligned_pod_numa_ = &aligned.Add(labels(kubelet::kScopePod, kubelet::kBoundaryNumaNode));
  aligned_container_physical_cpu_ =
      &aligned.Add(labels(kubelet::kScopeContainer, kubelet::kBoundaryPhysicalCpu));
  failed_container_numa_ =
      &failed.Add(labels(kubelet::kScopeContainer, kubelet::kBoundaryNumaNode));
  failed_pod_numa_ = &failed.Add(labels(kubelet::kScopePod, kubelet::kBoundaryNumaNode));
  failed_container_physical_cpu_ =
      &failed.Add(labels(kubelet::kScopeContainer, kubelet::kBoundaryPhysicalCpu));

  // topologyd's.
  admissions_ = &BuildCounter()
                     .Name("topologyd_admissions_total")
                     .Help(
                         "Admit calls decided, by outcome (admitted, unchanged: the pod already "
                         "held everything asked, refused) and a refusal's kubelet reason.")
                     .Register(r);
  admitted_ = &admissions_->Add({{"outcome", "admitted"}, {"reason", ""}});
  admitted_unchanged_ = &admissions_->Add({{"outcome", "unchanged"}, {"reason", ""}});
  admission_duration_ = PlainSecondsHistogram(
      r, "topologyd_admission_duration_seconds",
      "Time from an Admit call to its decision (the engine lock wait included; the checkpoint "
      "that acknowledges it not).");
  checkpoint_write_duration_ = PlainSecondsHistogram(
      r, "topologyd_checkpoint_write_duration_seconds",
      "State checkpoint writes (write, fsync, rename, fsync of the directory), failed ones "
      "included.");
  checkpoint_write_failures_ = PlainCounter(r, "topologyd_checkpoint_write_failures_total",
                                            "State checkpoint writes that failed; the changes "
                                            "they carried were answered UNAVAILABLE.");
  reconcile_duration_ = PlainSecondsHistogram(r, "topologyd_reconcile_duration_seconds",
                                              "Reconcile passes (cgroup drift check and repair).");
  reloads_ = &BuildCounter()
                  .Name("topologyd_reloads_total")
                  .Help(
                      "SIGHUP reloads by outcome: applied, partial (restart-only changes "
                      "refused), rejected (the old configuration stays).")
                  .Register(r);
  for (auto outcome : {engine::ReloadOutcome::kApplied, engine::ReloadOutcome::kPartial,
                       engine::ReloadOutcome::kRejected}) {
    reloads_->Add({{"outcome", std::string(engine::ReloadOutcomeName(outcome))}});
  }
  rpc_duration_ = &BuildHistogram()
                       .Name("topologyd_rpc_duration_seconds")
                       .Help(
                           "Unary gRPC calls from arrival to the answer, by method and "
                           "status code.")
                       .Register(r);
}

void Metrics::AdmissionDecided(const engine::AdmissionEvent& event) {
  admission_duration_->Observe(Seconds(event.duration));
  if (!event.decided) {
    admitted_unchanged_->Increment();
    return;
  }
  if (event.admitted) {
    admitted_->Increment();
  } else {
    admissions_->Add({{"outcome", "refused"}, {"reason", std::string(event.reason)}}).Increment();
  }
  // kubelet's topology manager: every pod it admits is a request, every refusal an error.
  admission_requests_->Increment();
  if (!event.admitted) admission_errors_->Increment();
  admission_duration_ms_->Observe(Millis(event.duration));
  // Its CPU and Memory managers count each Allocate that pins, and each that failed.
  const admission::ManagerCounts& c = event.counts;
  cpu_pinning_requests_->Increment(c.cpu.requests);
  cpu_pinning_errors_->Increment(c.cpu.errors);
  memory_pinning_requests_->Increment(c.memory.requests);
  memory_pinning_errors_->Increment(c.memory.errors);
  // With full-pcpus-only, each CPU allocation is a physical-CPU alignment, or a failed one.
  aligned_container_physical_cpu_->Increment(c.cpu_full_pcpus.requests - c.cpu_full_pcpus.errors);
  failed_container_physical_cpu_->Increment(c.cpu_full_pcpus.errors);
  // Only single-numa-node guarantees NUMA alignment (kubelet's IsAlignmentGuaranteed):
  // container scope counts each container, pod scope the pod; a failure is a merge that did
  // not admit (not an allocation failing afterwards).
  if (event.policy != hints::Policy::kSingleNumaNode) return;
  const bool pod_scope = event.scope == admission::Scope::kPod;
  if (event.admitted) {
    if (pod_scope) {
      aligned_pod_numa_->Increment();
    } else {
      aligned_container_numa_->Increment(static_cast<double>(event.containers));
    }
  } else if (event.reason == "TopologyAffinityError") {
    (pod_scope ? failed_pod_numa_ : failed_container_numa_)->Increment();
  }
}

void Metrics::CheckpointWritten(std::chrono::nanoseconds duration, bool ok) {
  checkpoint_write_duration_->Observe(Seconds(duration));
  if (!ok) checkpoint_write_failures_->Increment();
}

void Metrics::Reconciled(std::chrono::nanoseconds duration) {
  reconcile_duration_->Observe(Seconds(duration));
}

void Metrics::Reloaded(engine::ReloadOutcome outcome) {
  reloads_->Add({{"outcome", std::string(engine::ReloadOutcomeName(outcome))}}).Increment();
}

void Metrics::RpcFinished(std::string_view method, std::string_view code,
                          std::chrono::nanoseconds duration) {
  rpc_duration_
      ->Add({{"method", std::string(method)}, {"code", std::string(code)}}, SecondsBuckets())
      .Observe(Seconds(duration));
}

std::vector<prometheus::MetricFamily> EngineCollector::Collect() const {
  std::optional<EngineSnapshot> snapshot = source_();
  if (!snapshot) return {};
  const engine::EngineUsage& u = snapshot->usage;
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  // kubelet's GetAvailableCPUs: the shared pool less the reserved CPUs.
  const double shared = static_cast<double>(u.shared_pool.Difference(u.reserved).Size());
  out.push_back(FamilyOf(kubelet::kSharedPoolMillicores,
                         "The size of the shared CPU pool for non-guaranteed QoS pods, in "
                         "millicores.",
                         MetricType::Gauge, {GaugeOf(shared * 1000, {})}));
  out.push_back(FamilyOf(kubelet::kExclusiveCpus,
                         "The total number of CPUs exclusively allocated to containers running "
                         "on this node",
                         MetricType::Gauge,
                         {GaugeOf(static_cast<double>(u.exclusive_cpus.Size()), {})}));
  std::vector<prometheus::ClientMetric> per_numa_cpus;
  std::vector<prometheus::ClientMetric> exclusive;
  std::vector<prometheus::ClientMetric> reserved;
  std::vector<prometheus::ClientMetric> memory;
  for (const ledger::NumaUsage& n : u.per_numa) {
    const std::string id = std::to_string(n.numa_id);
    per_numa_cpus.push_back(
        GaugeOf(static_cast<double>(n.exclusive_cpus.Size()), {{"numa_node", id}}));
    exclusive.push_back(GaugeOf(static_cast<double>(n.exclusive_cpus.Size()), {{"numa_node", id}}));
    reserved.push_back(GaugeOf(static_cast<double>(n.reserved_cpus.Size()), {{"numa_node", id}}));
    for (const auto& [resource, bytes] : n.memory_used) {
      memory.push_back(
          GaugeOf(static_cast<double>(bytes), {{"numa_node", id}, {"resource", resource}}));
    }
  }
  out.push_back(FamilyOf(kubelet::kAllocationPerNuma, "Number of CPUs allocated per NUMA node",
                         MetricType::Gauge, std::move(per_numa_cpus)));
  out.push_back(FamilyOf("topologyd_numa_exclusive_cpus",
                         "CPUs of each NUMA node held exclusively by a container.",
                         MetricType::Gauge, std::move(exclusive)));
  out.push_back(FamilyOf("topologyd_numa_reserved_cpus", "Reserved CPUs of each NUMA node.",
                         MetricType::Gauge, std::move(reserved)));
  out.push_back(FamilyOf("topologyd_numa_memory_used_bytes",
                         "Bytes of each memory resource (memory, hugepages-<size>) held by "
                         "containers on each NUMA node.",
                         MetricType::Gauge, std::move(memory)));
  out.push_back(FamilyOf("topologyd_admitted_pods", "Pods holding an allocation.",
                         MetricType::Gauge,
                         {GaugeOf(static_cast<double>(snapshot->admitted_pods), {})}));
  const engine::EnforcerCounters& g = snapshot->cgroup;
  out.push_back(FamilyOf("topologyd_cgroup_writes_total",
                         "cgroup file writes (cpuset.cpus, cpuset.mems), failed ones included.",
                         MetricType::Counter, {CounterOf(static_cast<double>(g.writes))}));
  out.push_back(FamilyOf("topologyd_cgroup_write_failures_total",
                         "cgroup file writes that failed (reconcile retries them).",
                         MetricType::Counter, {CounterOf(static_cast<double>(g.failed_writes))}));
  out.push_back(FamilyOf("topologyd_drift_repairs_total",
                         "cgroups reconcile found changed by someone else and set back.",
                         MetricType::Counter, {CounterOf(static_cast<double>(g.drift_repairs))}));
  out.push_back(FamilyOf("topologyd_constrained_containers",
                         "Container cgroups the last reconcile found running on fewer CPUs or "
                         "memory nodes than assigned (a parent cgroup narrowed them).",
                         MetricType::Gauge, {GaugeOf(static_cast<double>(g.constrained), {})}));
  return out;
}

EngineSnapshot SnapshotOf(const engine::Engine& engine) {
  EngineSnapshot snapshot;
  snapshot.usage = engine.Usage();
  engine::EngineStatus status = engine.Status();
  snapshot.cgroup = status.cgroup;
  snapshot.admitted_pods = status.admitted_pods;
  return snapshot;
}

std::vector<prometheus::MetricFamily> NrtPublishCollector::Collect() const {
  const NrtPublishFigures f = source_();
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  prometheus::ClientMetric ok = CounterOf(static_cast<double>(f.publishes));
  ok.label.push_back({"result", "ok"});
  prometheus::ClientMetric failed = CounterOf(static_cast<double>(f.failed_publishes));
  failed.label.push_back({"result", "error"});
  out.push_back(FamilyOf("topologyd_nrt_api_applies_total",
                         "Applies of the NodeResourceTopology object to the API server, by result.",
                         MetricType::Counter, {ok, failed}));
  out.push_back(FamilyOf("topologyd_nrt_api_consecutive_failures",
                         "Applies to the API server that failed since the last success.",
                         MetricType::Gauge,
                         {GaugeOf(static_cast<double>(f.consecutive_failures), {})}));
  if (f.last_success_unix_seconds) {
    out.push_back(FamilyOf("topologyd_nrt_api_last_success_timestamp_seconds",
                           "When the last apply to the API server succeeded (Unix time).",
                           MetricType::Gauge, {GaugeOf(*f.last_success_unix_seconds, {})}));
  }
  out.push_back(FamilyOf("topologyd_nrt_api_last_delay_seconds",
                         "For the last successful apply: from the change being durable to the API "
                         "server having the object.",
                         MetricType::Gauge, {GaugeOf(f.last_delay_seconds, {})}));
  return out;
}

std::vector<prometheus::MetricFamily> BuildInfoCollector::Collect() const {
  return {FamilyOf("topologyd_build_info", "topologyd's version; always 1.",
                   prometheus::MetricType::Gauge, {GaugeOf(1, {{"version", kVersion}})})};
}

std::string Render(const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& c : collectables) {
    for (prometheus::MetricFamily& f : c->Collect()) families.push_back(std::move(f));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace topologyd::metrics
