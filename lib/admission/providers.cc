// The three providers of lib/admission/provider.h over the pure device, CPU and memory
// policies. Each restores its state from the records as its kubelet manager reads its
// checkpoint; what is not restored, and the memory record's layout: docs/admission.md,
// "Persisted state".
#include <algorithm>
#include <map>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/admission/provider.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/pci_bus_id.h"
#include "lib/cpu/cpu_hints.h"
#include "lib/device/device_allocator.h"
#include "lib/device/device_hints.h"
#include "lib/device/device_state.h"
#include "lib/memory/memory_policy.h"

namespace topologyd::admission {
namespace {

constexpr std::string_view kDrainHint = "or drain the node and remove the state file";

std::string Who(const state::PodRecord& pod, const state::ContainerRecord& c) {
  const std::string name = pod.name.empty() ? std::string("(unknown name)")
                                            : fmt::format("{}/{}", pod.namespace_name, pod.name);
  return fmt::format("pod {} (uid {}) container \"{}\"", name, pod.uid, c.name);
}

// What a Restore refuses: FAILED_PRECONDITION naming the pod and container whose record holds
// `what`, then what the operator can do (`fix`, or drain the node).
absl::Status RestoreConflict(const state::PodRecord& pod, const state::ContainerRecord& container,
                             std::string_view what, std::string_view fix) {
  return absl::FailedPreconditionError(
      fmt::format("{}: {}; {}, {}", Who(pod, container), what, fix, kDrainHint));
}

// Restored state a policy finds inconsistent (`what`: "CPU assignments", ...), which only
// draining the node clears.
absl::Status RestoredInconsistent(std::string_view what, const absl::Status& status) {
  return absl::FailedPreconditionError(
      fmt::format("restored {} are inconsistent: {}; {}", what, status.message(), kDrainHint));
}

ProviderFailure Unexpected(const absl::Status& status) {
  return ProviderFailure{.reason = std::string(cpu::kUnexpectedAdmissionErrorReason),
                         .message = std::string(status.message()),
                         .message_is_reason = false};
}

// kubelet's updateMachineState for one block (the same rule memory::Allocate applies).
bool TakeBlock(memory::MemoryState& state, const std::vector<int>& ids, const std::string& type,
               uint64_t size) {
  for (int id : ids) {
    memory::NumaNodeState& node = state.machine_state.at(id);
    node.number_of_assignments++;
    node.cells = ids;
    auto table = node.memory_map.find(type);
    if (table == node.memory_map.end()) continue;
    const uint64_t take = std::min(table->second.free, size);
    table->second.reserved += take;
    table->second.free -= take;
    size -= take;
  }
  return size == 0;
}

class DeviceProvider final : public Provider {
 public:
  std::string_view name() const override { return "devices"; }
  std::string_view manager() const override { return "device"; }
  PinningCounters Pinning(const NodePolicy&, const ContainerContext&,
                          ManagerCounts&) const override {
    return {};
  }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    return device::GetContainerTopologyHints(node.devices, state.devices, c.pod, *c.container.spec);
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    return device::GetPodTopologyHints(node.devices, state.devices, pod.pod);
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    absl::StatusOr<device::DeviceState> devices =
        device::Allocate(node.devices, std::move(state.devices), c.pod, *c.container.spec, hint);
    if (!devices.ok()) return Unexpected(devices.status());
    state.devices = *std::move(devices);
    return std::nullopt;
  }
  void Release(const NodePolicy&, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    state.devices = container
                        ? device::ReleaseContainer(std::move(state.devices), pod_uid, *container)
                        : device::ReleasePod(std::move(state.devices), pod_uid);
  }
  void Describe(const NodePolicy&, const AllocationState& state, const std::string& pod_uid,
                state::ContainerRecord& record) const override {
    if (auto pod = state.devices.pods.find(pod_uid); pod != state.devices.pods.end()) {
      if (auto ctr = pod->second.find(record.name); ctr != pod->second.end()) {
        for (const auto& [resource, ids] : ctr->second) record.devices[resource] = ids;
      }
    }
  }
  absl::Status Restore(const NodePolicy& node, const state::State& records,
                       AllocationState& out) const override {
    std::map<std::pair<std::string, std::string>, std::string> owner;  // (resource, id) -> uid
    for (const auto& [uid, pod] : records.pods) {
      for (const state::ContainerRecord& c : pod.containers) {
        for (const auto& [resource, ids] : c.devices) {
          if (ids.empty()) continue;
          const device::DevicePool* pool = node.devices.Find(resource);
          if (pool == nullptr) {
            return RestoreConflict(pod, c,
                                   fmt::format("holds {} devices {} but no device pool serves {}",
                                               resource, fmt::join(ids, ","), resource),
                                   "configure the pool again under `devices`");
          }
          for (const std::string& id : ids) {
            if (pool->Find(id) == nullptr) {
              // Ids imported from kubelet are its device plugin's (GPU UUIDs, ...), while a
              // `pci` pool names devices by bus id: that needs another pool, not another device.
              const bool foreign = !IsPciBusId(id);
              return RestoreConflict(
                  pod, c,
                  fmt::format("holds {} device {}, which is no longer in the pool", resource, id),
                  foreign ? "if the id is a device plugin's (kept from a kubelet import), declare "
                            "the pool with `devices: [{id, numaNode}]` listing those ids "
                            "(`topoctl state import-kubelet` prints the entry); otherwise restore "
                            "the device or the pool's match"
                          : "restore the device or the pool's match");
            }
            auto [it, inserted] = owner.emplace(std::make_pair(resource, id), uid);
            if (!inserted && it->second != uid) {
              return RestoreConflict(
                  pod, c,
                  fmt::format("{} device {} is also held by pod {}", resource, id, it->second),
                  "remove one of the pods from the state");
            }
          }
          std::vector<std::string> sorted = ids;
          std::sort(sorted.begin(), sorted.end());
          out.devices.pods[uid][c.name][resource] = std::move(sorted);
        }
      }
    }
    return absl::OkStatus();
  }
};

cpu::ContainerRequest CpuRequest(const pod::Pod& pod, const pod::OrderedContainer& c,
                                 bool guaranteed) {
  int64_t millis = 0;
  if (auto it = c.spec->requests.find(pod::kResourceCpu); it != c.spec->requests.end()) {
    millis = it->second.MilliValue();
  }
  cpu::ContainerKind kind = cpu::ContainerKind::kApp;
  if (c.role == pod::ContainerRole::kInit) kind = cpu::ContainerKind::kInit;
  if (c.role == pod::ContainerRole::kSidecar) kind = cpu::ContainerKind::kRestartableInit;
  return cpu::ContainerRequest{.pod_uid = pod.uid,
                               .name = c.spec->name,
                               .kind = kind,
                               .exclusive_cpus = cpu::GuaranteedCpus(guaranteed, millis),
                               .held_alongside = {}};
}

cpu::ContainerRequest CpuRequest(const ContainerContext& c) {
  cpu::ContainerRequest request = CpuRequest(c.pod, c.container, c.guaranteed);
  request.held_alongside = c.held_alongside;
  return request;
}

class CpuProvider final : public Provider {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view manager() const override { return "cpu"; }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    if (!node.cpu.has_value()) return hints::ProviderHints();
    return cpu::GetTopologyHints(*node.cpu, state.cpu, CpuRequest(c));
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    if (!node.cpu.has_value()) return hints::ProviderHints();
    std::vector<cpu::ContainerRequest> requests;
    for (const pod::OrderedContainer& c : pod.order) {
      requests.push_back(CpuRequest(pod.pod, c, pod.guaranteed));
    }
    return cpu::GetPodTopologyHints(*node.cpu, state.cpu, pod.pod.uid, requests);
  }
  PinningCounters Pinning(const NodePolicy& node, const ContainerContext& c,
                          ManagerCounts& counts) const override {
    if (!node.cpu.has_value() || CpuRequest(c).exclusive_cpus == 0) return {};
    if (node.cpu->options().full_pcpus_only) return {&counts.cpu, &counts.cpu_full_pcpus};
    return {&counts.cpu, nullptr};
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    if (!node.cpu.has_value()) return std::nullopt;
    absl::StatusOr<cpu::Allocation> cpus =
        node.cpu->Allocate(std::move(state.cpu), CpuRequest(c), hint.affinity);
    if (!cpus.ok()) {
      ProviderFailure failure = Unexpected(cpus.status());
      failure.reason = cpu::RejectionReason(cpus.status());
      // The CPU manager's own error type: kubelet uses its text as the message.
      failure.message_is_reason = failure.reason == cpu::kSmtAlignmentErrorReason;
      failure.summary = cpu::RejectionSummary(cpus.status());
      return failure;
    }
    state.cpu = std::move(cpus->state);
    return std::nullopt;
  }
  void Release(const NodePolicy& node, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    if (!container) state.cpu.cpus_to_reuse.erase(pod_uid);
    if (!node.cpu.has_value()) return;
    if (container) {
      state.cpu = node.cpu->RemoveContainer(state.cpu, pod_uid, *container);
      return;
    }
    std::vector<std::string> names;
    if (auto it = state.cpu.assignments.find(pod_uid); it != state.cpu.assignments.end()) {
      for (const auto& [name, cpus] : it->second) names.push_back(name);
    }
    for (const std::string& name : names) {
      state.cpu = node.cpu->RemoveContainer(state.cpu, pod_uid, name);
    }
  }
  void Describe(const NodePolicy& node, const AllocationState& state, const std::string& pod_uid,
                state::ContainerRecord& record) const override {
    std::optional<CpuSet> exclusive;
    if (node.cpu.has_value()) exclusive = state.cpu.Assignment(pod_uid, record.name);
    record.exclusive = exclusive.has_value();
    record.cpus = exclusive.has_value()  ? *exclusive
                  : node.cpu.has_value() ? state.cpu.default_cpu_set
                                         : node.all_cpus;
  }
  absl::Status Restore(const NodePolicy& node, const state::State& records,
                       AllocationState& out) const override {
    std::map<int, const state::PodRecord*> owner;
    CpuSet taken;
    for (const auto& [uid, pod] : records.pods) {
      for (const state::ContainerRecord& c : pod.containers) {
        if (!c.exclusive || c.cpus.IsEmpty()) continue;
        if (!node.cpu.has_value()) {
          return RestoreConflict(pod, c,
                                 fmt::format("holds exclusive CPUs {} but cpuManagerPolicy is none",
                                             c.cpus.ToString()),
                                 "set cpuManagerPolicy: static again");
        }
        const CpuSet gone = c.cpus.Difference(node.cpu->topology().Cpus());
        if (!gone.IsEmpty()) {
          return RestoreConflict(pod, c,
                                 fmt::format("exclusive CPUs {} are not on this machine (offline, "
                                             "or outside every NUMA node)",
                                             gone.ToString()),
                                 "bring the CPUs back online");
        }
        const CpuSet reserved = c.cpus.Intersection(node.cpu->reserved());
        if (!reserved.IsEmpty()) {
          return RestoreConflict(
              pod, c, fmt::format("exclusive CPUs {} are now reserved", reserved.ToString()),
              "give reservedSystemCPUs / cpuReservedCount other CPUs");
        }
        for (int cpu : c.cpus) {
          auto [it, inserted] = owner.emplace(cpu, &pod);
          if (!inserted && it->second != &pod) {
            return RestoreConflict(
                pod, c,
                fmt::format("exclusive CPU {} is also held by pod {}", cpu, it->second->uid),
                "remove one of the pods from the state");
          }
        }
        CpuSet& slot = out.cpu.assignments[uid][c.name];
        slot = slot.Union(c.cpus);
        taken = taken.Union(c.cpus);
      }
    }
    if (!node.cpu.has_value()) return absl::OkStatus();
    out.cpu.default_cpu_set = node.empty_state.cpu.default_cpu_set.Difference(taken);
    absl::StatusOr<cpu::CpuState> started = node.cpu->Start(out.cpu);
    if (!started.ok()) return RestoredInconsistent("CPU assignments", started.status());
    out.cpu = *std::move(started);
    return absl::OkStatus();
  }
};

class MemoryProvider final : public Provider {
 public:
  std::string_view name() const override { return "memory"; }
  std::string_view manager() const override { return "memory"; }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    if (!node.memory_static) return hints::ProviderHints();
    return memory::GetContainerTopologyHints(state.memory, c.pod, c.container, c.guaranteed);
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    if (!node.memory_static) return hints::ProviderHints();
    return memory::GetPodTopologyHints(state.memory, pod.pod);
  }
  PinningCounters Pinning(const NodePolicy& node, const ContainerContext& c,
                          ManagerCounts& counts) const override {
    if (!node.memory_static || !c.guaranteed) return {};
    return {&counts.memory, nullptr};
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    if (!node.memory_static) return std::nullopt;
    absl::StatusOr<memory::MemoryState> memory =
        memory::Allocate(std::move(state.memory), c.pod, c.container, c.guaranteed, hint);
    if (!memory.ok()) return Unexpected(memory.status());
    state.memory = *std::move(memory);
    return std::nullopt;
  }
  void Release(const NodePolicy&, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    state.memory = container ? memory::RemoveContainer(std::move(state.memory), pod_uid, *container)
                             : memory::RemovePod(std::move(state.memory), pod_uid);
  }
  void InitContainersFinished(const NodePolicy& node, AllocationState& state,
                              const std::string& pod_uid,
                              const std::vector<std::string>& finished) const override {
    if (!node.memory_static) return;
    for (const std::string& name : finished) {
      state.memory = memory::RemoveContainer(std::move(state.memory), pod_uid, name);
    }
  }
  void Describe(const NodePolicy& node, const AllocationState& state, const std::string& pod_uid,
                state::ContainerRecord& record) const override {
    if (!node.memory_static) return;
    record.memory = memory::ContainerMemoryByNode(state.memory, pod_uid, record.name);
  }
  absl::Status Restore(const NodePolicy& node, const state::State& records,
                       AllocationState& out) const override {
    for (const auto& [uid, pod] : records.pods) {
      for (const state::ContainerRecord& c : pod.containers) {
        if (c.memory.empty()) continue;
        if (!node.memory_static) {
          return RestoreConflict(pod, c, "holds memory blocks but memoryManagerPolicy is None",
                                 "set memoryManagerPolicy: Static again");
        }
        absl::StatusOr<std::vector<memory::Block>> blocks = RestoreBlocks(pod, c, out.memory);
        if (!blocks.ok()) return blocks.status();
        out.memory.assignments[uid][c.name] = *std::move(blocks);
      }
    }
    if (!node.memory_static) return absl::OkStatus();
    absl::Status valid =
        memory::ValidateMemoryState(out.memory, *node.topology, node.reserved_memory);
    if (!valid.ok()) return RestoredInconsistent("memory blocks", valid);
    return absl::OkStatus();
  }

 private:
  // The blocks of one container's record, taken from `state`'s tables.
  static absl::StatusOr<std::vector<memory::Block>> RestoreBlocks(const state::PodRecord& pod,
                                                                  const state::ContainerRecord& c,
                                                                  memory::MemoryState& state) {
    // resource -> (nodes, bytes)
    std::map<std::string, std::pair<std::vector<int>, uint64_t>> blocks;
    for (const auto& [numa, resources] : c.memory) {
      auto ns = state.machine_state.find(numa);
      for (const auto& [resource, bytes] : resources) {
        if (ns == state.machine_state.end()) {
          return RestoreConflict(
              pod, c,
              fmt::format("holds {} on NUMA node {}, which this machine lacks", resource, numa),
              "restore the NUMA node");
        }
        // A zero request of a type the machine lacks is admitted and takes nothing.
        if (!ns->second.memory_map.contains(resource) && bytes > 0) {
          return RestoreConflict(
              pod, c,
              fmt::format("holds {} on NUMA node {}, which has none configured", resource, numa),
              "configure the hugepages again");
        }
        auto& block = blocks[resource];
        block.first.push_back(numa);
        block.second += bytes;
      }
    }
    std::vector<memory::Block> list;
    for (auto& [resource, block] : blocks) {
      // A block of several nodes must not cut across another group. A single-node block may
      // sit on a grouped node: kubelet's allocator (memory::Allocate) checks the group rule
      // only for masks of several nodes, so such states are ones the daemon writes itself.
      const bool several_nodes = block.first.size() > 1;
      for (int id : block.first) {
        const std::vector<int>& cells = state.machine_state.at(id).cells;
        const bool own = cells.size() == 1 && cells[0] == id;
        if (several_nodes && !own && cells != block.first) {
          return RestoreConflict(
              pod, c,
              fmt::format("{} block on NUMA nodes [{}] overlaps the group [{}] of "
                          "another container",
                          resource, fmt::join(block.first, ","), fmt::join(cells, ",")),
              "remove one of the pods from the state");
        }
      }
      if (!TakeBlock(state, block.first, resource, block.second)) {
        return RestoreConflict(pod, c,
                               fmt::format("{} bytes of {} on NUMA nodes [{}] no longer fit (other "
                                           "blocks and reservedMemory take the rest)",
                                           block.second, resource, fmt::join(block.first, ",")),
                               "lower reservedMemory");
      }
      list.push_back(
          memory::Block{.numa_affinity = block.first, .type = resource, .size = block.second});
    }
    return list;
  }
};

// One instance of each kind, never destroyed: admissions may run until the process exits.
template <typename P>
const Provider* Instance() {
  static const Provider* const provider = new P();
  return provider;
}

}  // namespace

const std::vector<const Provider*>& Providers() {
  static const auto* const providers = new std::vector<const Provider*>{
      Instance<DeviceProvider>(), Instance<CpuProvider>(), Instance<MemoryProvider>()};
  return *providers;
}

const std::vector<const Provider*>& ProvidersInStartOrder() {
  static const auto* const providers = new std::vector<const Provider*>{
      Instance<CpuProvider>(), Instance<MemoryProvider>(), Instance<DeviceProvider>()};
  return *providers;
}

}  // namespace topologyd::admission
