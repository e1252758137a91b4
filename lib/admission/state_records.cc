#include "lib/admission/state_records.h"

#include <map>
#include <set>
#include <string>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/pci_bus_id.h"
#include "lib/memory/memory_policy.h"

namespace topologyd::admission {
namespace {

constexpr std::string_view kDrainHint = "or drain the node and remove the state file";

std::string Who(const state::PodRecord& pod, const state::ContainerRecord& c) {
  const std::string name = pod.name.empty() ? std::string("(unknown name)")
                                            : fmt::format("{}/{}", pod.namespace_name, pod.name);
  return fmt::format("pod {} (uid {}) container \"{}\"", name, pod.uid, c.name);
}

absl::Status Conflict(const state::PodRecord& pod, const state::ContainerRecord& c,
                      std::string_view what, std::string_view fix) {
  return absl::FailedPreconditionError(
      fmt::format("{}: {}; {}, {}", Who(pod, c), what, fix, kDrainHint));
}

absl::Status RestoreCpus(const NodePolicy& node, const state::State& records,
                         AllocationState& out) {
  std::map<int, const state::PodRecord*> owner;
  CpuSet taken;
  for (const auto& [uid, pod] : records.pods) {
    for (const state::ContainerRecord& c : pod.containers) {
      if (!c.exclusive || c.cpus.IsEmpty()) continue;
      if (!node.cpu.has_value()) {
        return Conflict(
            pod, c,
            fmt::format("holds exclusive CPUs {} but cpuManagerPolicy is none", c.cpus.ToString()),
            "set cpuManagerPolicy: static again");
      }
      const CpuSet gone = c.cpus.Difference(node.cpu->topology().Cpus());
      if (!gone.IsEmpty()) {
        return Conflict(pod, c,
                        fmt::format("exclusive CPUs {} are not on this machine (offline, or "
                                    "outside every NUMA node)",
                                    gone.ToString()),
                        "bring the CPUs back online");
      }
      const CpuSet reserved = c.cpus.Intersection(node.cpu->reserved());
      if (!reserved.IsEmpty()) {
        return Conflict(pod, c,
                        fmt::format("exclusive CPUs {} are now reserved", reserved.ToString()),
                        "give reservedSystemCPUs / cpuReservedCount other CPUs");
      }
      for (int cpu : c.cpus) {
        auto [it, inserted] = owner.emplace(cpu, &pod);
        if (!inserted && it->second != &pod) {
          return Conflict(
              pod, c, fmt::format("exclusive CPU {} is also held by pod {}", cpu, it->second->uid),
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
  if (!started.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("restored CPU assignments are inconsistent: {}; {}", started.status().message(),
                    kDrainHint));
  }
  out.cpu = *std::move(started);
  return absl::OkStatus();
}

absl::Status RestoreDevices(const NodePolicy& node, const state::State& records,
                            AllocationState& out) {
  std::map<std::pair<std::string, std::string>, std::string> owner;  // (resource, id) -> uid
  for (const auto& [uid, pod] : records.pods) {
    for (const state::ContainerRecord& c : pod.containers) {
      for (const auto& [resource, ids] : c.devices) {
        if (ids.empty()) continue;
        const device::DevicePool* pool = node.devices.Find(resource);
        if (pool == nullptr) {
          return Conflict(pod, c,
                          fmt::format("holds {} devices {} but no device pool serves {}", resource,
                                      fmt::join(ids, ","), resource),
                          "configure the pool again under `devices`");
        }
        for (const std::string& id : ids) {
          if (pool->Find(id) == nullptr) {
            // Ids imported from kubelet are its device plugin's (GPU UUIDs, ...), while a `pci`
            // pool names devices by bus id: that needs another pool, not another device.
            const bool foreign = !IsPciBusId(id);
            return Conflict(
                pod, c,
                fmt::format("holds {} device {}, which is no longer in the pool", resource, id),
                foreign ? "if the id is a device plugin's (kept from a kubelet import), declare "
                          "the pool with `devices: [{id, numaNode}]` listing those ids (`topoctl "
                          "state import-kubelet` prints the entry); otherwise restore the device "
                          "or the pool's match"
                        : "restore the device or the pool's match");
          }
          auto [it, inserted] = owner.emplace(std::make_pair(resource, id), uid);
          if (!inserted && it->second != uid) {
            return Conflict(
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

absl::Status RestoreMemory(const NodePolicy& node, const state::State& records,
                           AllocationState& out) {
  for (const auto& [uid, pod] : records.pods) {
    for (const state::ContainerRecord& c : pod.containers) {
      if (c.memory.empty()) continue;
      if (!node.memory_static) {
        return Conflict(pod, c, "holds memory blocks but memoryManagerPolicy is None",
                        "set memoryManagerPolicy: Static again");
      }
      // resource -> (nodes, bytes)
      std::map<std::string, std::pair<std::vector<int>, uint64_t>> blocks;
      for (const auto& [numa, resources] : c.memory) {
        auto ns = out.memory.machine_state.find(numa);
        for (const auto& [resource, bytes] : resources) {
          if (ns == out.memory.machine_state.end()) {
            return Conflict(
                pod, c,
                fmt::format("holds {} on NUMA node {}, which this machine lacks", resource, numa),
                "restore the NUMA node");
          }
          // A zero request of a type the machine lacks is admitted and takes nothing.
          if (!ns->second.memory_map.contains(resource) && bytes > 0) {
            return Conflict(
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
          const std::vector<int>& cells = out.memory.machine_state.at(id).cells;
          const bool own = cells.size() == 1 && cells[0] == id;
          if (several_nodes && !own && cells != block.first) {
            return Conflict(
                pod, c,
                fmt::format("{} block on NUMA nodes [{}] overlaps the group [{}] of "
                            "another container",
                            resource, fmt::join(block.first, ","), fmt::join(cells, ",")),
                "remove one of the pods from the state");
          }
        }
        if (!TakeBlock(out.memory, block.first, resource, block.second)) {
          return Conflict(pod, c,
                          fmt::format("{} bytes of {} on NUMA nodes [{}] no longer fit (other "
                                      "blocks and reservedMemory take the rest)",
                                      block.second, resource, fmt::join(block.first, ",")),
                          "lower reservedMemory");
        }
        list.push_back(
            memory::Block{.numa_affinity = block.first, .type = resource, .size = block.second});
      }
      out.memory.assignments[uid][c.name] = std::move(list);
    }
  }
  if (!node.memory_static) return absl::OkStatus();
  absl::Status valid =
      memory::ValidateMemoryState(out.memory, *node.topology, node.reserved_memory);
  if (!valid.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "restored memory blocks are inconsistent: {}; {}", valid.message(), kDrainHint));
  }
  return absl::OkStatus();
}

}  // namespace

state::PodRecord ToPodRecord([[maybe_unused]] const NodePolicy& node, const pod::Pod& pod,
                             const AdmissionResult& result) {
  return state::PodRecord{.uid = pod.uid,
                          .namespace_name = pod.namespace_name,
                          .name = pod.name,
                          .qos = std::string(pod::QosClassName(pod::ComputeQos(pod))),
                          .containers = result.containers};
}

absl::StatusOr<AllocationState> RestoreAllocationState(const NodePolicy& node,
                                                       const state::State& records) {
  AllocationState out = node.empty_state;
  if (absl::Status s = RestoreCpus(node, records, out); !s.ok()) return s;
  if (absl::Status s = RestoreMemory(node, records, out); !s.ok()) return s;
  if (absl::Status s = RestoreDevices(node, records, out); !s.ok()) return s;
  return out;
}

}  // namespace topologyd::admission
