// The static CPU policy as pure functions over a CpuState value (docs/cpu-policy.md, "Pools"):
// reserved CPUs, the shared (default) pool, exclusive CPUs for Guaranteed containers with integer
// CPU requests, init-container CPU reuse, restartable init containers (sidecars), release on
// removal.
//
// Nothing here performs I/O or keeps mutable state: every operation takes the current
// CpuState and returns a new one (or a rejection), so an orchestrator can evaluate
// several providers and commit or drop the results together.
//
// Thread-safety: StaticPolicy is immutable after Create(); share it freely.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "lib/cpu/cpu_topology.h"
#include "lib/cpu/policy_options.h"
#include "lib/cpu/take_by_topology.h"
#include "lib/cpuset/cpuset.h"
#include "lib/hints/numa_mask.h"

namespace topologyd::cpu {

// The CPU manager's state: the shared pool and the exclusive sets per (pod uid, container
// name), as in kubelet's checkpoint, plus the policy's in-memory record of CPUs an app
// container may take over from the pod's finished init containers (not checkpointed by
// kubelet; a restart forgets it).
struct CpuState {
  CpuSet default_cpu_set;
  std::map<std::string, std::map<std::string, CpuSet>> assignments;
  std::map<std::string, CpuSet> cpus_to_reuse;  // pod uid -> reusable CPUs (one pod at a time)

  // The exclusive set of a container, if any.
  std::optional<CpuSet> Assignment(const std::string& pod_uid, const std::string& name) const;
  // What the container runs on: its exclusive set, else the shared pool.
  CpuSet CpuSetOrDefault(const std::string& pod_uid, const std::string& name) const;
  friend bool operator==(const CpuState&, const CpuState&) = default;
};

enum class ContainerKind {
  kApp,
  kInit,             // runs to completion before the app containers; its CPUs are reused
  kRestartableInit,  // restartPolicy: Always ("sidecar"); runs alongside the app containers
};

struct ContainerRequest {
  std::string pod_uid;
  std::string name;
  ContainerKind kind = ContainerKind::kApp;
  // Exclusive CPUs wanted: GuaranteedCpus() of the container; 0 = shared pool.
  int exclusive_cpus = 0;
  // CPUs held by the pod's containers that can run at the same time as this one (see
  // pod::RunsAlongsideLater). Never reusable by it, whatever the reuse bookkeeping says: when a
  // pod is admitted again, containers it keeps may hold CPUs that the replayed bookkeeping
  // of its init containers offers again.
  CpuSet held_alongside;
};

// kubelet's guaranteedCPUs: the integer CPU request when the pod's QoS class is Guaranteed
// and the request is a whole number of CPUs (2 or 2000m; not 1500m), else 0.
int GuaranteedCpus(bool pod_is_guaranteed, int64_t cpu_request_millis);

// numReservedCPUs from kube-reserved.cpu + system-reserved.cpu in millicores: rounded up to
// whole CPUs. nullopt = no CPU entry. INVALID_ARGUMENT with kubelet's texts
// "[cpumanager] unable to determine reserved CPU resources for static policy" /
// "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be
// greater than zero".
absl::StatusOr<int> ReservedCpuCount(std::optional<int64_t> reserved_millis);

// The reserved set kubelet picks for a count: takeByTopology over all CPUs with the policy's
// own options. INVALID_ARGUMENT "[cpumanager] unable to reserve the required amount of CPUs
// (size of <set> did not equal <n>)" when it cannot.
absl::StatusOr<CpuSet> ReservedCpusFromCount(const CpuTopology& topology,
                                             const StaticPolicyOptions& options, int count);

// Reason strings of a rejection, as kubelet's admission reports them.
inline constexpr std::string_view kSmtAlignmentErrorReason = "SMTAlignmentError";
inline constexpr std::string_view kUnexpectedAdmissionErrorReason = "UnexpectedAdmissionError";
// The admission reason carried by an Allocate() error: kSmtAlignmentErrorReason for the
// full-pcpus-only refusals, kUnexpectedAdmissionErrorReason for every other error.
std::string RejectionReason(const absl::Status& status);
// What a refusal for want of free CPUs says before kubelet's text, which counts what is left
// after the hint's NUMA nodes were taken: "the container asks 64 CPUs, 23 are free for
// exclusive use". Empty for any other status.
std::string RejectionSummary(const absl::Status& status);

// The CPUs of the pod's finished init containers that `request` may take over: kubelet's
// reuse bookkeeping for the pod, less what runs alongside the container.
CpuSet ReusableCpus(const CpuState& state, const ContainerRequest& request);

struct Allocation {
  CpuState state;  // the state after the allocation
  CpuSet cpus;     // the container's exclusive CPUs; empty for a shared-pool container
};

class StaticPolicy {
 public:
  // `reserved` is the reserved set (an explicit list, or ReservedCpusFromCount()).
  // INVALID_ARGUMENT for incompatible options, or "[cpumanager] unable to build the reserved
  // physical CPUs from the reserved set: ..." when a reserved CPU is not in the topology.
  static absl::StatusOr<StaticPolicy> Create(CpuTopology topology, StaticPolicyOptions options,
                                             CpuSet reserved);

  const CpuTopology& topology() const { return topology_; }
  const StaticPolicyOptions& options() const { return options_; }
  const TakeOptions& take_options() const { return take_options_; }
  const CpuSet& reserved() const { return reserved_; }
  // Every CPU of every core holding a reserved CPU (full-pcpus-only counts these as used).
  const CpuSet& reserved_physical() const { return reserved_physical_; }
  // kubelet's cpuGroupSize: CPUsPerCore.
  int cpu_group_size() const { return topology_.CpusPerCore(); }

  // The same policy with a different allocator configuration (e.g. another group size for
  // distribute-cpus-across-numa); options and reservation unchanged.
  StaticPolicy WithTakeOptions(const TakeOptions& take_options) const;

  // The CPUs the shared pool starts from: all CPUs, minus reserved with strict reservation.
  CpuSet AllCpus() const;
  // Shared pool minus reserved: what exclusive allocations draw from.
  CpuSet AvailableCpus(const CpuState& state) const;
  // All CPUs minus reserved (reported as allocatable).
  CpuSet AllocatableCpus() const;

  // kubelet's Start/validateState: a state with an empty pool and no assignments becomes a
  // fresh one (pool = AllCpus()); anything else must be consistent. FAILED_PRECONDITION with
  // kubelet's texts otherwise (the operator has to drain the node and remove the state).
  absl::StatusOr<CpuState> Start(const CpuState& state) const;

  // kubelet's Allocate for one container under the topology manager's NUMA affinity (mask
  // over NUMA positions; nullopt = none). A shared-pool request (exclusive_cpus == 0) leaves
  // the state unchanged; a container already in the state keeps its CPUs. Errors:
  // FAILED_PRECONDITION "SMT Alignment Error: ..." (reason SMTAlignmentError) under
  // full-pcpus-only; RESOURCE_EXHAUSTED with kubelet's "not enough cpus available to satisfy
  // request: ..." (RejectionSummary() says how many were asked and are free) and other
  // allocator errors (reason UnexpectedAdmissionError). See RejectionReason().
  absl::StatusOr<Allocation> Allocate(CpuState state, const ContainerRequest& request,
                                      const std::optional<hints::NumaMask>& affinity) const;

  // kubelet's RemoveContainer: drops the container's set and returns to the pool the CPUs no
  // other container of the same pod holds. Unknown containers: state unchanged.
  CpuState RemoveContainer(const CpuState& state, const std::string& pod_uid,
                           const std::string& name) const;

 private:
  StaticPolicy(CpuTopology topology, StaticPolicyOptions options, CpuSet reserved,
               CpuSet reserved_physical);

  CpuTopology topology_;
  StaticPolicyOptions options_;
  TakeOptions take_options_;
  CpuSet reserved_;
  CpuSet reserved_physical_;
};

}  // namespace topologyd::cpu
