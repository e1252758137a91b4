#include "lib/cpu/static_policy.h"

#include <utility>

#include "absl/strings/cord.h"
#include "fmt/format.h"

namespace topologyd::cpu {
namespace {

// Status payload that marks the full-pcpus-only refusals, so the admission reason survives
// being passed around as a plain absl::Status.
constexpr char kReasonPayloadUrl[] = "type.topologyd.io/cpu.RejectionReason";
constexpr char kSummaryPayloadUrl[] = "type.topologyd.io/cpu.RejectionSummary";

absl::Status SmtAlignmentError(std::string message) {
  absl::Status status = absl::FailedPreconditionError(message);
  status.SetPayload(kReasonPayloadUrl, absl::Cord(std::string(kSmtAlignmentErrorReason)));
  return status;
}

// Go's %q for the strings these messages quote (cpu lists, ids): no escaping needed.
std::string Quote(const std::string& text) { return fmt::format("\"{}\"", text); }

// kubelet's allocator on `allocatable`, never handing out a CPU outside it. kubelet sizes
// cores by integer division of its counters (24 CPUs / 16 cores = 1 CPU per core on a
// hybrid part) and groups CPUs by core id (kubelet's test maps reuse core ids across
// sockets); its take() then takes every CPU of a chosen core, including threads another
// container holds. Handing those out twice is a kubelet bug, not a decision to copy: keep
// the free part of its choice and take the rest the same way from what is still free. Any
// other choice is kubelet's, quirks included.
absl::StatusOr<CpuSet> AllocateFreeCpus(const CpuTopology& topology, const TakeOptions& options,
                                        const CpuSet& allocatable, int num_cpus,
                                        const std::optional<hints::NumaMask>& affinity) {
  absl::StatusOr<CpuSet> cpus = AllocateCpus(topology, options, allocatable, num_cpus, affinity);
  if (!cpus.ok() || cpus->IsSubsetOf(allocatable)) return cpus;
  CpuSet chosen = cpus->Intersection(allocatable);
  while (chosen.Size() < num_cpus) {
    absl::StatusOr<CpuSet> more = AllocateCpus(topology, options, allocatable.Difference(chosen),
                                               num_cpus - chosen.Size(), affinity);
    if (!more.ok()) return more.status();
    const CpuSet free_part = more->Intersection(allocatable).Difference(chosen);
    if (free_part.IsEmpty()) {
      return absl::InternalError(fmt::format(
          "the CPU allocator chose only CPUs that are not available ({}; available: {})",
          more->ToString(), allocatable.Difference(chosen).ToString()));
    }
    chosen = chosen.Union(free_part);
  }
  return chosen;
}

}  // namespace

std::optional<CpuSet> CpuState::Assignment(const std::string& pod_uid,
                                           const std::string& name) const {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return std::nullopt;
  auto container = pod->second.find(name);
  if (container == pod->second.end()) return std::nullopt;
  return container->second;
}

CpuSet CpuState::CpuSetOrDefault(const std::string& pod_uid, const std::string& name) const {
  std::optional<CpuSet> assigned = Assignment(pod_uid, name);
  return assigned.has_value() ? *assigned : default_cpu_set;
}

int GuaranteedCpus(bool pod_is_guaranteed, int64_t cpu_request_millis) {
  if (!pod_is_guaranteed || cpu_request_millis <= 0) return 0;
  if (cpu_request_millis % 1000 != 0) return 0;
  return static_cast<int>(cpu_request_millis / 1000);
}

absl::StatusOr<int> ReservedCpuCount(std::optional<int64_t> reserved_millis) {
  if (!reserved_millis.has_value()) {
    return absl::InvalidArgumentError(
        "[cpumanager] unable to determine reserved CPU resources for static policy");
  }
  // kubelet rounds the quantity up to whole CPUs.
  const int64_t millis = *reserved_millis;
  const int64_t count = millis <= 0 ? 0 : (millis + 999) / 1000;
  if (count == 0) {
    return absl::InvalidArgumentError(
        "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
        "greater than zero");
  }
  return static_cast<int>(count);
}

absl::StatusOr<CpuSet> ReservedCpusFromCount(const CpuTopology& topology,
                                             const StaticPolicyOptions& options, int count) {
  absl::StatusOr<CpuSet> reserved =
      TakeByTopology(topology, MakeTakeOptions(topology, options), topology.Cpus(), count);
  // kubelet ignores the allocator's error and checks the size of what it got.
  CpuSet chosen = reserved.ok() ? *reserved : CpuSet();
  if (chosen.Size() != count) {
    return absl::InvalidArgumentError(fmt::format(
        "[cpumanager] unable to reserve the required amount of CPUs (size of {} did not equal "
        "{})",
        chosen.ToString(), count));
  }
  return chosen;
}

std::string RejectionReason(const absl::Status& status) {
  if (status.ok()) return "";
  auto reason = status.GetPayload(kReasonPayloadUrl);
  if (reason.has_value()) return std::string(*reason);
  return std::string(kUnexpectedAdmissionErrorReason);
}

std::string RejectionSummary(const absl::Status& status) {
  auto summary = status.GetPayload(kSummaryPayloadUrl);
  return summary.has_value() ? std::string(*summary) : std::string();
}

StaticPolicy::StaticPolicy(CpuTopology topology, StaticPolicyOptions options, CpuSet reserved,
                           CpuSet reserved_physical)
    : topology_(std::move(topology)),
      options_(options),
      take_options_(MakeTakeOptions(topology_, options_)),
      reserved_(std::move(reserved)),
      reserved_physical_(std::move(reserved_physical)) {}

absl::StatusOr<StaticPolicy> StaticPolicy::Create(CpuTopology topology, StaticPolicyOptions options,
                                                  CpuSet reserved) {
  absl::Status compatible = ValidateOptionCompatibility(options);
  if (!compatible.ok()) return compatible;
  CpuSet reserved_physical;
  for (int cpu : reserved) {
    const CpuInfo* info = topology.Find(cpu);
    if (info == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
          "unknown CPU ID: {}",
          cpu));
    }
    reserved_physical.AddAll(topology.Cores().at(info->core_id));
  }
  return StaticPolicy(std::move(topology), options, std::move(reserved),
                      std::move(reserved_physical));
}

StaticPolicy StaticPolicy::WithTakeOptions(const TakeOptions& take_options) const {
  StaticPolicy copy = *this;
  copy.take_options_ = take_options;
  return copy;
}

CpuSet StaticPolicy::AllCpus() const {
  if (options_.strict_cpu_reservation) return topology_.Cpus().Difference(reserved_);
  return topology_.Cpus();
}

CpuSet StaticPolicy::AvailableCpus(const CpuState& state) const {
  return state.default_cpu_set.Difference(reserved_);
}

CpuSet StaticPolicy::AllocatableCpus() const { return topology_.Cpus().Difference(reserved_); }

absl::StatusOr<CpuState> StaticPolicy::Start(const CpuState& state) const {
  const CpuSet all = AllCpus();
  const CpuSet& pool = state.default_cpu_set;
  bool has_assignments = false;
  for (const auto& [pod, containers] : state.assignments) {
    if (!containers.empty()) has_assignments = true;
  }
  // kubelet refuses an empty pool beside assignments. With strict-cpu-reservation its own
  // allocator empties the pool when it gives out the last unreserved CPU, and the next start
  // would refuse the state it wrote; there an empty pool is consistent when the assignments
  // account for every CPU (checked below).
  if (pool.IsEmpty() && (!has_assignments || !options_.strict_cpu_reservation)) {
    if (has_assignments) return absl::FailedPreconditionError("default cpuset cannot be empty");
    CpuState fresh = state;
    fresh.default_cpu_set = all;
    return fresh;
  }
  if (options_.strict_cpu_reservation) {
    if (reserved_.Intersects(pool)) {
      return absl::FailedPreconditionError(
          fmt::format("some of strictly reserved cpus: {} are present in defaultCpuSet: {}",
                      Quote(reserved_.Intersection(pool).ToString()), Quote(pool.ToString())));
    }
  } else if (!reserved_.IsSubsetOf(pool)) {
    return absl::FailedPreconditionError(
        fmt::format("not all reserved cpus: {} are present in defaultCpuSet: {}",
                    Quote(reserved_.ToString()), Quote(pool.ToString())));
  }
  CpuSet known = pool;
  for (const auto& [pod, containers] : state.assignments) {
    for (const auto& [name, cpus] : containers) {
      if (cpus.Intersects(pool)) {
        return absl::FailedPreconditionError(
            fmt::format("pod: {}, container: {} cpuset: {} overlaps with default cpuset {}", pod,
                        name, Quote(cpus.ToString()), Quote(pool.ToString())));
      }
      known.AddAll(cpus);
    }
  }
  if (!(known == all)) {
    return absl::FailedPreconditionError(
        fmt::format("current set of available CPUs {} doesn't match with CPUs in state {}",
                    Quote(all.ToString()), Quote(known.ToString())));
  }
  return state;
}

namespace {

// kubelet's updateCPUsToReuse: reuse bookkeeping is kept for one pod at a time; an init
// container's CPUs become reusable, an app container's or a sidecar's stop being so.
void UpdateCpusToReuse(CpuState& state, const ContainerRequest& request, const CpuSet& cpus) {
  for (auto it = state.cpus_to_reuse.begin(); it != state.cpus_to_reuse.end();) {
    it = it->first == request.pod_uid ? std::next(it) : state.cpus_to_reuse.erase(it);
  }
  CpuSet& reusable = state.cpus_to_reuse[request.pod_uid];
  if (request.kind == ContainerKind::kInit) {
    reusable.AddAll(cpus);
  } else {
    reusable = reusable.Difference(cpus);
  }
}

}  // namespace

CpuSet ReusableCpus(const CpuState& state, const ContainerRequest& request) {
  auto it = state.cpus_to_reuse.find(request.pod_uid);
  if (it == state.cpus_to_reuse.end()) return CpuSet();
  return it->second.Difference(request.held_alongside);
}

absl::StatusOr<Allocation> StaticPolicy::Allocate(
    CpuState state, const ContainerRequest& request,
    const std::optional<hints::NumaMask>& affinity) const {
  const int num_cpus = request.exclusive_cpus;
  if (num_cpus <= 0) return Allocation{std::move(state), CpuSet()};

  if (options_.full_pcpus_only) {
    const int per_core = cpu_group_size();
    if (per_core == 0 || num_cpus % per_core != 0) {
      return SmtAlignmentError(
          fmt::format("SMT Alignment Error: requested {} cpus not multiple cpus per core = {}",
                      num_cpus, per_core));
    }
    // Reserved CPUs' siblings count as used: they cannot be part of a whole free core.
    const int available_physical = state.default_cpu_set.Difference(reserved_physical_).Size();
    if (num_cpus > available_physical) {
      return SmtAlignmentError(fmt::format(
          "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = {}, "
          "requested CPUs = {}, CPUs per core = {}",
          available_physical, num_cpus, per_core));
    }
  }

  // The state is taken by value and moved through: an admission allocates container after
  // container, and copying the state each time would cost the size of the node's state.
  if (std::optional<CpuSet> existing = state.Assignment(request.pod_uid, request.name)) {
    UpdateCpusToReuse(state, request, *existing);
    return Allocation{std::move(state), *std::move(existing)};
  }

  const CpuSet allocatable = AvailableCpus(state).Union(ReusableCpus(state, request));
  absl::StatusOr<CpuSet> cpus =
      AllocateFreeCpus(topology_, take_options_, allocatable, num_cpus, affinity);
  if (absl::IsResourceExhausted(cpus.status())) {
    // kubelet's text counts what is left after the hint's NUMA nodes were taken (64 CPUs asked
    // reads "requested=41, available=0"): the request and the free CPUs go first.
    absl::Status refused = cpus.status();
    refused.SetPayload(kSummaryPayloadUrl,
                       absl::Cord(fmt::format("the container asks {} CPUs, {} are free for "
                                              "exclusive use",
                                              num_cpus, allocatable.Size())));
    return refused;
  }
  if (!cpus.ok()) return cpus.status();

  state.default_cpu_set = state.default_cpu_set.Difference(*cpus);
  state.assignments[request.pod_uid][request.name] = *cpus;
  UpdateCpusToReuse(state, request, *cpus);
  return Allocation{std::move(state), *std::move(cpus)};
}

CpuState StaticPolicy::RemoveContainer(const CpuState& state, const std::string& pod_uid,
                                       const std::string& name) const {
  std::optional<CpuSet> released = state.Assignment(pod_uid, name);
  if (!released.has_value()) return state;
  CpuState next = state;
  CpuSet still_used;
  auto& containers = next.assignments[pod_uid];
  containers.erase(name);
  for (const auto& [other, cpus] : containers) still_used.AddAll(cpus);
  if (containers.empty()) next.assignments.erase(pod_uid);
  next.default_cpu_set = next.default_cpu_set.Union(released->Difference(still_used));
  return next;
}

}  // namespace topologyd::cpu
