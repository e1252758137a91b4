// Ledger: the one record of what the node has given away. It owns the providers' working
// states (admission::AllocationState) and the records the checkpoint stores (state::State:
// each container's state::ContainerRecord, its holdings and runtime binding) as one value,
// which every change replaces in one step, and answers the queries the API, the checkpoint,
// Explain and the exports need. Every change goes through it; each one that changes anything
// raises the generation by one.
//
// A value with no locking and no I/O: the engine serialises calls and makes Snapshot()s
// durable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/admission/admission.h"
#include "lib/admission/node_policy.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/policy.h"
#include "lib/pod/pod.h"
#include "lib/state/state.h"
#include "lib/topology/topology.h"

namespace topologyd::ledger {

// An admission that changed the ledger raised generation() by one; one answered from what
// the pod holds, or refused, did not.
struct AdmitOutcome {
  bool admitted = false;
  std::string reason;   // a refusal's, kubelet's wording
  std::string message;  // a refusal's
  // When admitted: what the pod's containers hold, a shared-pool container showing the pool
  // now as `cpus` (its record keeps the pool of its admission).
  std::vector<state::ContainerRecord> containers;
  // False when the uid was answered with what it already holds (nothing decided).
  bool decided = true;
  // The decision's policy and scope and its managers' counts, for metrics.
  hints::Policy policy = hints::Policy::kNone;
  admission::Scope scope = admission::Scope::kContainer;
  admission::ManagerCounts counts;
  // The merges this decision made (empty when answered from what the pod holds): what
  // `topoctl simulate` counts kubelet's work from, without deciding twice.
  admission::Explanation explanation;
};

// A release of one container that holds only while the container is bound as given.
struct ReleaseGuard {
  // The runtime container id the container must be bound to. A caller that releases one
  // instance of a restarted container (kubelet's garbage collection of the old one) must not
  // release the instance that runs now: FAILED_PRECONDITION naming the id it is bound to.
  std::string container_id;
  // Also this cgroup, when set: reconcile decides from a snapshot, and an Allocate may have
  // bound the container to a new, live cgroup since. ABORTED then.
  std::optional<std::string> cgroup;
};

// Records with every shared-pool container showing the current pool, and the pools.
struct Allocations {
  CpuSet reserved;
  CpuSet shared_pool;
  state::State state;
};

// `records` as List() shows them, with `shared_pool` as the pool shared-pool containers show.
Allocations ListOf(state::State records, CpuSet reserved, CpuSet shared_pool);

// The record of `pod` after a successful admission (`result.admitted`): its containers as
// admitted, in admission order; container_id and cgroup stay empty until Bind.
state::PodRecord ToPodRecord(const pod::Pod& pod, const admission::AdmissionResult& result);

// One NUMA node's share of the node, for exports.
struct NumaUsage {
  int numa_id = 0;
  CpuSet cpus;            // the node's CPUs
  CpuSet exclusive_cpus;  // of those, held exclusively by a container
  CpuSet reserved_cpus;   // of those, reserved
  // Per memory resource ("memory", "hugepages-2Mi", ...): bytes held by containers.
  std::map<std::string, uint64_t> memory_used;
};

// Each NUMA node of `machine` with what `records` hold on it.
std::vector<NumaUsage> PerNumaOf(const topology::Topology& machine, const state::State& records,
                                 const CpuSet& reserved);

class Ledger {
 public:
  // The ledger of `records` (read from `state_path`; an empty State for a new node) under
  // `policy` (built from `config_file`). FAILED_PRECONDITION naming pod, container and what
  // conflicts, and what the operator can do, when the records break the binding rules
  // (ledger/bindings.h) or hold what this node cannot give.
  static absl::StatusOr<Ledger> Restore(std::shared_ptr<const admission::NodePolicy> policy,
                                        state::State records, std::string_view state_path,
                                        std::string_view config_file);

  // Admits `pod`, idempotently by uid: an admitted pod gets what it holds; one whose
  // containers were released one by one gets those allocated again, keeping the rest (and
  // their bindings). A refusal is an outcome, not an error, and changes nothing.
  absl::StatusOr<AdmitOutcome> Admit(const pod::Pod& pod);
  // The decision Admit would make now, with every hint. An admitted pod is answered with what
  // it holds, as Admit answers it.
  absl::StatusOr<admission::AdmissionResult> Explain(const pod::Pod& pod) const;

  // Binds an admitted container to its runtime container id and cgroup path (relative to the
  // cgroup root). `derive_cgroup` gives the path when `cgroup` is empty, from the pod's record.
  // NOT_FOUND for an unknown pod or container; INVALID_ARGUMENT for a malformed id or path,
  // or one another container is bound to (or nested with).
  absl::StatusOr<state::ContainerRecord> Bind(
      const std::string& pod_uid, const std::string& container, const std::string& container_id,
      const std::string& cgroup,
      const std::function<absl::StatusOr<std::string>(const state::PodRecord&)>& derive_cgroup);

  // A container of an admitted pod started (Bind calls it): the pod's regular init containers
  // before it have run to completion, and what kubelet frees at that point is freed — their
  // memory (kubelet's memory manager AddContainer); their records then hold no memory. CPUs
  // and devices stay held until the pod goes. NOT_FOUND for an unknown pod or container.
  absl::Status ContainerStarted(const std::string& pod_uid, const std::string& container);

  // Releases a pod, or one of its containers. NOT_FOUND for an unknown pod or container. With
  // `guard` (one container only), nothing changes unless the container is bound as it says:
  // see ReleaseGuard.
  absl::Status Release(const std::string& pod_uid, const std::optional<std::string>& container,
                       const ReleaseGuard* guard = nullptr);

  // A reload's node policy (live keys only: what is held stays valid).
  void SetPolicy(std::shared_ptr<const admission::NodePolicy> policy);

  const std::shared_ptr<const admission::NodePolicy>& policy() const { return policy_; }
  uint64_t generation() const { return given_.records.generation; }
  size_t pod_count() const { return given_.records.pods.size(); }
  const CpuSet& shared_pool() const { return given_.providers.cpu.default_cpu_set; }
  // The reserved CPUs; empty without the static CPU policy.
  CpuSet reserved() const;
  // The records as the checkpoint stores them.
  const state::State& Snapshot() const { return given_.records; }
  Allocations List() const;
  std::vector<NumaUsage> PerNuma() const;

 private:
  // What the node has given away, twice over: the providers' states, which admission decides
  // against, and the records, which the checkpoint stores and the API shows. Only Commit
  // changes it, both halves at once.
  struct Given {
    admission::AllocationState providers;
    state::State records;
  };

  Ledger(std::shared_ptr<const admission::NodePolicy> policy, Given given);
  // The one way the ledger changes: pod `uid`'s record becomes `record` (the pod is removed
  // when nullopt), the providers' states become `providers` when given, and the generation is
  // raised by one.
  void Commit(const std::string& uid, std::optional<state::PodRecord> record,
              std::optional<admission::AllocationState> providers);
  // The pod's containers as the API shows them.
  std::vector<state::ContainerRecord> Holdings(const state::PodRecord& pod) const;

  std::shared_ptr<const admission::NodePolicy> policy_;
  Given given_;
};

}  // namespace topologyd::ledger
