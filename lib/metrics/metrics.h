// Metrics: topologyd's Prometheus metric families and what fills them. Events from the engine
// (engine::EngineEvents) and the RPC layer (RpcFinished) update counters and histograms as
// they happen; the gauges of the engine's state (pools, per-NUMA use, cgroup counters) are
// read from one engine snapshot at scrape time by EngineCollector. Names, types, labels and
// buckets: docs/operations.md, "Metrics"; kubelet's own metrics keep kubelet's names
// (kubelet_names.h).
//
// Thread-safety: every method may be called concurrently. An event costs a few atomic
// increments and, for histograms, one short uncontended lock inside prometheus-cpp; nothing
// here blocks on I/O or on the engine.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/engine/cpuset_enforcer.h"
#include "lib/engine/engine.h"
#include "lib/engine/engine_events.h"

namespace topologyd::metrics {

class Metrics final : public engine::EngineEvents {
 public:
  Metrics();

  // The families updated by events, for an exposer (and tests).
  std::shared_ptr<prometheus::Collectable> registry() const { return registry_; }

  void AdmissionDecided(const engine::AdmissionEvent& event) override;
  void CheckpointWritten(std::chrono::nanoseconds duration, bool ok) override;
  void Reconciled(std::chrono::nanoseconds duration) override;
  void Reloaded(engine::ReloadOutcome outcome) override;
  // One unary RPC answered: its method ("Admit") and gRPC status code name ("OK").
  void RpcFinished(std::string_view method, std::string_view code,
                   std::chrono::nanoseconds duration);

 private:
  std::shared_ptr<prometheus::Registry> registry_;

  // kubelet's.
  prometheus::Counter* admission_requests_;
  prometheus::Counter* admission_errors_;
  prometheus::Histogram* admission_duration_ms_;
  prometheus::Counter* cpu_pinning_requests_;
  prometheus::Counter* cpu_pinning_errors_;
  prometheus::Counter* memory_pinning_requests_;
  prometheus::Counter* memory_pinning_errors_;
  prometheus::Counter* aligned_container_numa_;
  prometheus::Counter* aligned_pod_numa_;
  prometheus::Counter* aligned_container_physical_cpu_;
  prometheus::Counter* failed_container_numa_;
  prometheus::Counter* failed_pod_numa_;
  prometheus::Counter* failed_container_physical_cpu_;

  // topologyd's.
  prometheus::Family<prometheus::Counter>* admissions_;
  prometheus::Counter* admitted_;
  prometheus::Counter* admitted_unchanged_;
  prometheus::Histogram* admission_duration_;
  prometheus::Histogram* checkpoint_write_duration_;
  prometheus::Counter* checkpoint_write_failures_;
  prometheus::Histogram* reconcile_duration_;
  prometheus::Family<prometheus::Counter>* reloads_;
  prometheus::Family<prometheus::Histogram>* rpc_duration_;
};

// What one scrape reads of the engine.
struct EngineSnapshot {
  engine::EngineUsage usage;
  engine::EnforcerCounters cgroup;  // running totals, and the constrained gauge
  uint32_t admitted_pods = 0;
};
// Reads the engine; nullopt while there is none to read.
using SnapshotSource = std::function<std::optional<EngineSnapshot>()>;

// The scrape-time families, from one EngineSnapshot per scrape.
class EngineCollector final : public prometheus::Collectable {
 public:
  explicit EngineCollector(SnapshotSource source) : source_(std::move(source)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  SnapshotSource source_;
};

// The snapshot of a running engine: Usage() (no engine lock) and Status() (the engine lock,
// briefly, for its counters).
EngineSnapshot SnapshotOf(const engine::Engine& engine);

// What the NodeResourceTopology publisher has done (nrt_api::NrtApiPublishStatus, in plain
// numbers so that this module needs nothing of the publisher's).
struct NrtPublishFigures {
  uint64_t publishes = 0;
  uint64_t failed_publishes = 0;
  uint64_t consecutive_failures = 0;
  std::optional<double> last_success_unix_seconds;
  double last_delay_seconds = 0;
};

// The topologyd_nrt_api_* families, read from the publisher at scrape time.
class NrtPublishCollector final : public prometheus::Collectable {
 public:
  explicit NrtPublishCollector(std::function<NrtPublishFigures()> source)
      : source_(std::move(source)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<NrtPublishFigures()> source_;
};

// The build_info family (a gauge of 1 labelled with the version).
class BuildInfoCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

// The text exposition format of `collectables`, as a scrape of /metrics returns it.
std::string Render(const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

}  // namespace topologyd::metrics
