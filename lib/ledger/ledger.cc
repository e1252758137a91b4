#include "lib/ledger/ledger.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/admission/state_records.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"
#include "lib/ledger/bindings.h"

namespace topologyd::ledger {
namespace {

const state::ContainerRecord* FindContainer(const state::PodRecord& pod, const std::string& name) {
  for (const auto& c : pod.containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

state::ContainerRecord* FindContainer(state::PodRecord& pod, const std::string& name) {
  return const_cast<state::ContainerRecord*>(
      FindContainer(static_cast<const state::PodRecord&>(pod), name));
}

// The shared-pool view, made here only: `container` as the API shows it, a shared-pool
// container's `cpus` being `shared_pool`, the pool now (its record keeps the pool of its
// admission, informational).
state::ContainerRecord AsShown(state::ContainerRecord container, const CpuSet& shared_pool) {
  if (!container.exclusive) container.cpus = shared_pool;
  return container;
}

// Containers of `pod` that `record` does not hold yet: new to the pod (a caller that learns
// the pod's containers one at a time admits each as it comes), or released one by one (by a
// caller, or by reconcile when their cgroup stayed gone) while the pod stayed admitted.
std::vector<std::string> NotHeldYet(const state::PodRecord& record, const pod::Pod& pod) {
  std::vector<std::string> missing;
  for (const pod::OrderedContainer& c : pod::StartOrder(pod)) {
    const bool held =
        std::any_of(record.containers.begin(), record.containers.end(),
                    [&](const state::ContainerRecord& r) { return r.name == c.spec->name; });
    if (!held) missing.push_back(c.spec->name);
  }
  return missing;
}

}  // namespace

Ledger::Ledger(std::shared_ptr<const admission::NodePolicy> policy, Given given)
    : policy_(std::move(policy)), given_(std::move(given)) {}

void Ledger::Commit(const std::string& uid, std::optional<state::PodRecord> record,
                    std::optional<admission::AllocationState> providers) {
  if (record.has_value()) {
    given_.records.pods[uid] = *std::move(record);
  } else {
    given_.records.pods.erase(uid);
  }
  if (providers.has_value()) given_.providers = *std::move(providers);
  ++given_.records.generation;
}

state::PodRecord ToPodRecord(const pod::Pod& pod, const admission::AdmissionResult& result) {
  return state::PodRecord{.uid = pod.uid,
                          .namespace_name = pod.namespace_name,
                          .name = pod.name,
                          .qos = std::string(pod::QosClassName(pod::ComputeQos(pod))),
                          .containers = result.containers};
}

absl::StatusOr<Ledger> Ledger::Restore(std::shared_ptr<const admission::NodePolicy> policy,
                                       state::State records, std::string_view state_path,
                                       std::string_view config_file) {
  if (absl::Status bindings = ValidateBindings(records); !bindings.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: {}. The file passed its checksum, so it was written or edited this way; restore an "
        "earlier copy, or correct or remove the entry and start again",
        state_path, bindings.message()));
  }
  absl::StatusOr<admission::AllocationState> allocation =
      admission::RestoreAllocationState(*policy, records);
  if (!allocation.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "the allocations in {} cannot be kept with {} and this machine: {}\nEither restore "
        "the previous configuration, or drain the pods named above from this node, remove "
        "their entries (or the state file once the node is empty) and start again.",
        state_path, config_file, allocation.status().message()));
  }
  return Ledger(std::move(policy),
                Given{.providers = *std::move(allocation), .records = std::move(records)});
}

std::vector<state::ContainerRecord> Ledger::Holdings(const state::PodRecord& pod) const {
  std::vector<state::ContainerRecord> held;
  held.reserve(pod.containers.size());
  for (const state::ContainerRecord& c : pod.containers) held.push_back(AsShown(c, shared_pool()));
  return held;
}

absl::StatusOr<AdmitOutcome> Ledger::Admit(const pod::Pod& pod) {
  AdmitOutcome outcome;
  const std::map<std::string, state::PodRecord>& pods = given_.records.pods;
  auto known = pods.find(pod.uid);
  std::vector<std::string> missing;
  if (known != pods.end()) {
    missing = NotHeldYet(known->second, pod);
    if (missing.empty()) {
      // Idempotent: the same uid gets the allocation it already has (every container it
      // holds, also those the request leaves out).
      outcome.admitted = true;
      outcome.decided = false;
      outcome.containers = Holdings(known->second);
      return outcome;
    }
    // Some containers are not held yet (new, or released while the pod stayed): as kubelet's
    // re-admission, the held ones keep what they hold and these are allocated (all of them
    // or, refused, none).
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(admission::AdmissionResult result,
                             admission::Admit(*policy_, given_.providers, pod));
  outcome.policy = result.explanation.policy;
  outcome.scope = result.explanation.scope;
  outcome.counts = result.counts;
  outcome.explanation = std::move(result.explanation);
  if (!result.admitted) {
    outcome.reason = std::move(result.reason);
    outcome.message = std::move(result.message);
    if (!missing.empty()) {
      outcome.message += fmt::format(
          " (pod {} stays admitted with what its containers hold; containers not held yet "
          "were not allocated: {})",
          pod.uid, fmt::join(missing, ", "));
    }
    return outcome;
  }
  state::PodRecord record = ToPodRecord(pod, result);
  if (known != pods.end()) {
    // Held containers keep their record as it was, binding included (the providers kept
    // what they hold; only the new ones changed the state).
    for (state::ContainerRecord& c : record.containers) {
      if (const state::ContainerRecord* old = FindContainer(known->second, c.name)) c = *old;
    }
    // Held containers the request leaves out (a caller that sends the pod's containers one
    // at a time) still hold what they hold: their records stay.
    for (const state::ContainerRecord& old : known->second.containers) {
      if (FindContainer(record, old.name) == nullptr) record.containers.push_back(old);
    }
  }
  Commit(pod.uid, std::move(record), std::move(result.new_state));
  outcome.admitted = true;
  outcome.containers = Holdings(pods.at(pod.uid));
  return outcome;
}

absl::StatusOr<admission::AdmissionResult> Ledger::Explain(const pod::Pod& pod) const {
  TOPOLOGYD_ASSIGN_OR_RETURN(admission::AdmissionResult result,
                             admission::Explain(*policy_, given_.providers, pod));
  if (auto known = given_.records.pods.find(pod.uid);
      known != given_.records.pods.end() && NotHeldYet(known->second, pod).empty()) {
    // Admit answers an admitted uid with what it holds, without deciding again; so does the
    // decision here. kubelet's re-admission, which the hints show, can differ from it (e.g.
    // full-pcpus-only refuses before it looks at held CPUs).
    result.admitted = true;
    result.reason.clear();
    result.message.clear();
    result.containers.clear();
    result.containers = Holdings(known->second);
    result.explanation.notes.push_back(fmt::format(
        "pod {} is already admitted: Admit returns the allocation it holds (the decision "
        "shown); the hints and merges are kubelet's re-admission of it against the current "
        "state",
        pod.uid));
  }
  return result;
}

absl::StatusOr<state::ContainerRecord> Ledger::Bind(
    const std::string& pod_uid, const std::string& container, const std::string& container_id,
    const std::string& cgroup,
    const std::function<absl::StatusOr<std::string>(const state::PodRecord&)>& derive_cgroup) {
  TOPOLOGYD_RETURN_IF_ERROR(ValidateBindingRequest(container_id, cgroup));
  auto it = given_.records.pods.find(pod_uid);
  if (it == given_.records.pods.end()) {
    return absl::NotFoundError(fmt::format("pod {} is not admitted", pod_uid));
  }
  const state::PodRecord& pod = it->second;
  const state::ContainerRecord* record = FindContainer(pod, container);
  if (record == nullptr) {
    return absl::NotFoundError(
        fmt::format("pod {} has no admitted container \"{}\"", pod_uid, container));
  }
  std::string path = cgroup;
  if (path.empty()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(path, derive_cgroup(pod));
  }
  TOPOLOGYD_RETURN_IF_ERROR(
      CheckFreeBinding(given_.records, pod_uid, container, container_id, path));
  if (record->container_id != container_id || record->cgroup != path) {
    state::PodRecord bound = pod;
    state::ContainerRecord* c = FindContainer(bound, container);
    c->container_id = container_id;
    c->cgroup = path;
    Commit(pod_uid, std::move(bound), std::nullopt);
  }
  TOPOLOGYD_RETURN_IF_ERROR(ContainerStarted(pod_uid, container));
  return AsShown(*FindContainer(given_.records.pods.at(pod_uid), container), shared_pool());
}

absl::Status Ledger::ContainerStarted(const std::string& pod_uid, const std::string& container) {
  auto it = given_.records.pods.find(pod_uid);
  if (it == given_.records.pods.end()) {
    return absl::NotFoundError(fmt::format("pod {} is not admitted", pod_uid));
  }
  const std::vector<state::ContainerRecord>& containers = it->second.containers;
  std::vector<size_t> finished;  // regular init containers before it that still hold memory
  bool found = false;
  for (size_t i = 0; i < containers.size(); ++i) {
    const state::ContainerRecord& c = containers[i];
    if (c.name == container) {
      found = true;
      break;
    }
    // Records keep the pod's start order: init containers first, in spec order.
    if (c.init && !c.restartable && !c.memory.empty()) finished.push_back(i);
  }
  if (!found) {
    return absl::NotFoundError(
        fmt::format("pod {} has no admitted container \"{}\"", pod_uid, container));
  }
  if (finished.empty()) return absl::OkStatus();
  state::PodRecord started = it->second;
  std::vector<std::string> names;
  for (size_t i : finished) {
    names.push_back(started.containers[i].name);
    started.containers[i].memory.clear();
  }
  Commit(pod_uid, std::move(started),
         admission::InitContainersFinished(*policy_, given_.providers, pod_uid, names));
  return absl::OkStatus();
}

absl::Status Ledger::Release(const std::string& pod_uid,
                             const std::optional<std::string>& container,
                             const ReleaseGuard* guard) {
  if (guard && !container) {
    return absl::InvalidArgumentError("container_id: only with container_name");
  }
  if (guard) TOPOLOGYD_RETURN_IF_ERROR(ValidateBindingRequest(guard->container_id, ""));
  auto it = given_.records.pods.find(pod_uid);
  if (it == given_.records.pods.end()) {
    return absl::NotFoundError(fmt::format("pod {} is not admitted", pod_uid));
  }
  if (container) {
    const std::vector<state::ContainerRecord>& containers = it->second.containers;
    auto c = std::find_if(containers.begin(), containers.end(),
                          [&](const state::ContainerRecord& r) { return r.name == *container; });
    if (c == containers.end()) {
      return absl::NotFoundError(
          fmt::format("pod {} has no admitted container \"{}\"", pod_uid, *container));
    }
    if (guard && guard->cgroup &&
        (c->container_id != guard->container_id || c->cgroup != *guard->cgroup)) {
      return absl::AbortedError(fmt::format("it has been bound to cgroup {} since", c->cgroup));
    }
    if (guard && c->container_id != guard->container_id) {
      const std::string bound =
          c->container_id.empty()
              ? std::string("is not bound to a runtime container")
              : fmt::format("is bound to runtime container {}", c->container_id);
      return absl::FailedPreconditionError(
          fmt::format("pod {} container \"{}\" {}, not {}; nothing was released", pod_uid,
                      *container, bound, guard->container_id));
    }
    std::optional<state::PodRecord> rest = it->second;
    rest->containers.erase(rest->containers.begin() + (c - containers.begin()));
    if (rest->containers.empty()) rest.reset();
    Commit(pod_uid, std::move(rest),
           admission::Release(*policy_, given_.providers, pod_uid, *container));
  } else {
    Commit(pod_uid, std::nullopt, admission::Release(*policy_, given_.providers, pod_uid));
  }
  return absl::OkStatus();
}

void Ledger::SetPolicy(std::shared_ptr<const admission::NodePolicy> policy) {
  policy_ = std::move(policy);
}

Allocations ListOf(state::State records, CpuSet reserved, CpuSet shared_pool) {
  for (auto& [uid, pod] : records.pods) {
    for (state::ContainerRecord& c : pod.containers) c = AsShown(std::move(c), shared_pool);
  }
  return Allocations{.reserved = std::move(reserved),
                     .shared_pool = std::move(shared_pool),
                     .state = std::move(records)};
}

CpuSet Ledger::reserved() const { return policy_->cpu ? policy_->cpu->reserved() : CpuSet(); }

Allocations Ledger::List() const { return ListOf(given_.records, reserved(), shared_pool()); }

std::vector<NumaUsage> Ledger::PerNuma() const {
  return PerNumaOf(*policy_->topology, given_.records, reserved());
}

std::vector<NumaUsage> PerNumaOf(const topology::Topology& machine, const state::State& records,
                                 const CpuSet& reserved) {
  const CpuSet exclusive = state::ExclusiveCpus(records);
  const std::map<int, std::map<std::string, uint64_t>> memory = state::MemoryInUse(records);
  std::vector<NumaUsage> out;
  for (const topology::NumaNode& node : machine.numa_nodes) {
    NumaUsage usage;
    usage.numa_id = node.id;
    usage.cpus = node.cpus;
    usage.exclusive_cpus = node.cpus.Intersection(exclusive);
    usage.reserved_cpus = node.cpus.Intersection(reserved);
    if (auto m = memory.find(node.id); m != memory.end()) usage.memory_used = m->second;
    out.push_back(std::move(usage));
  }
  return out;
}

}  // namespace topologyd::ledger
