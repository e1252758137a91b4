// EngineEvents: what the engine tells an observer (the metrics export) as things happen, so
// the engine itself knows nothing of Prometheus. The state the observer reports at scrape
// time (pools, per-NUMA use, counters kept by the engine) it reads from Engine::Status() and
// Engine::Usage() instead; only what those cannot show — durations, and how each decision
// came out — arrives here.
//
// Thread-safety: calls come from any engine thread (the admitting caller, the checkpoint
// writer, the reconcile loop, the reloading thread), concurrently, and never with an engine
// lock held. An implementation must be thread-safe and must not block or call the engine:
// the admitting caller waits for it.
#pragma once

#include <chrono>
#include <string_view>

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/hints/policy.h"

namespace topologyd::engine {

// One Admit decided (an error before any decision, e.g. an invalid request, is none).
struct AdmissionEvent {
  bool admitted = false;
  std::string_view reason;  // a refusal's, kubelet's wording; empty when admitted
  // From the call to the decision, the wait for the engine's lock included; not the wait for
  // the checkpoint that acknowledges it.
  std::chrono::nanoseconds duration{0};
  // False when an admitted uid was answered with what it holds: the topology manager did not
  // run, and kubelet's manager counters stay as they were.
  bool decided = true;
  hints::Policy policy = hints::Policy::kNone;  // the pod's (annotations included)
  admission::Scope scope = admission::Scope::kContainer;
  // Containers admitted (init and app): under container scope each one is an alignment.
  size_t containers = 0;
  admission::ManagerCounts counts;  // the CPU and Memory managers' Allocate calls
};

// How a SIGHUP reload came out.
enum class ReloadOutcome {
  kApplied,   // every changed key applied (or nothing changed)
  kPartial,   // restart-only changes refused (changed live keys, if any, applied)
  kRejected,  // the file did not load or validate; the old configuration stays
};
std::string_view ReloadOutcomeName(ReloadOutcome outcome);  // "applied", "partial", "rejected"

class EngineEvents {
 public:
  virtual ~EngineEvents() = default;
  virtual void AdmissionDecided(const AdmissionEvent& event) = 0;
  // One checkpoint write (several changes may share it) and how long it took.
  virtual void CheckpointWritten(std::chrono::nanoseconds duration, bool ok) = 0;
  // One reconcile pass and how long it took.
  virtual void Reconciled(std::chrono::nanoseconds duration) = 0;
  virtual void Reloaded(ReloadOutcome outcome) = 0;
};

}  // namespace topologyd::engine
