#include "lib/kubelet_import/kubelet_import.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"

namespace topologyd::state::kubelet {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ContainerRecord& Container(State& state, const std::string& uid, const std::string& name) {
  PodRecord& pod = state.pods[uid];
  pod.uid = uid;
  for (ContainerRecord& c : pod.containers) {
    if (c.name == name) return c;
  }
  pod.containers.push_back(ContainerRecord{.name = name});
  return pod.containers.back();
}

absl::Status ImportCpu(const CpuCheckpoint& cp, State& state) {
  if (cp.policy_name != "static" && cp.policy_name != "none") {
    return absl::FailedPreconditionError(
        fmt::format("cpu_manager_state: unknown policy {} (kubelet writes \"none\" or \"static\")",
                    QuoteForMessage(cp.policy_name)));
  }
  absl::StatusOr<CpuSet> shared = CpuSet::Parse(cp.default_cpu_set);
  if (!shared.ok()) {
    return absl::FailedPreconditionError(
        // The parser's message quotes the list.
        fmt::format("cpu_manager_state: could not parse the default cpu set: {}",
                    shared.status().message()));
  }
  if (!cp.entries) return absl::OkStatus();
  for (const auto& [uid, containers] : *cp.entries) {
    if (!containers) continue;
    for (const auto& [name, text] : *containers) {
      if (cp.policy_name == "none") {
        return absl::FailedPreconditionError(fmt::format(
            "cpu_manager_state: policy is \"none\" but container {} of pod {} has CPUs {}; "
            "whether they are still pinned is unknown. Run kubelet with the static policy "
            "until the file matches the node, then import",
            QuoteForMessage(name), QuoteForMessage(uid), QuoteForMessage(text)));
      }
      absl::StatusOr<CpuSet> cpus = CpuSet::Parse(text);
      if (!cpus.ok()) {
        return absl::FailedPreconditionError(fmt::format(
            "cpu_manager_state: could not parse the cpuset of container {} in pod {}: {}",
            QuoteForMessage(name), QuoteForMessage(uid), cpus.status().message()));
      }
      if (cpus->Intersects(*shared)) {
        return absl::FailedPreconditionError(fmt::format(
            "cpu_manager_state: pod {} container {} cpuset {} overlaps with the default "
            "cpuset {}",
            QuoteForMessage(uid), QuoteForMessage(name), QuoteForMessage(text),
            QuoteForMessage(cp.default_cpu_set)));
      }
      // kubelet's validateState refuses this too: with nothing shared, its shared pool was
      // lost, not handed out.
      if (shared->IsEmpty()) {
        return absl::FailedPreconditionError(fmt::format(
            "cpu_manager_state: default cpuset cannot be empty while pod {} container {} "
            "holds CPUs {} (kubelet refuses to start on this file as well)",
            QuoteForMessage(uid), QuoteForMessage(name), QuoteForMessage(text)));
      }
      ContainerRecord& c = Container(state, uid, name);
      c.cpus = *std::move(cpus);
      c.exclusive = true;
      state.pods[uid].qos = "Guaranteed";
    }
  }
  return absl::OkStatus();
}

// What the machine state says each node has reserved per resource; consumed while splitting.
using Remaining = std::map<int64_t, std::map<std::string, uint64_t>>;

Remaining ReservedPerNode(const MemoryCheckpoint& cp) {
  Remaining remaining;
  if (!cp.machine_state) return remaining;
  for (const auto& [node, st] : *cp.machine_state) {
    if (!st || !st->memory_map) continue;
    for (const auto& [resource, table] : *st->memory_map) {
      if (table) remaining[node][resource] = table->reserved;
    }
  }
  return remaining;
}

absl::Status CheckNode(int64_t node, const std::string& uid, const std::string& name) {
  if (node < 0 || node > (1 << 16)) {
    return absl::FailedPreconditionError(
        fmt::format("memory_manager_state: pod {} container {} has a block on NUMA node {}",
                    QuoteForMessage(uid), QuoteForMessage(name), node));
  }
  return absl::OkStatus();
}

absl::Status ImportMemory(const MemoryCheckpoint& cp, State& state) {
  // Kubelet writes "Static" / "None"; its own test fixtures also use lower case.
  const std::string policy = Lower(cp.policy_name);
  if (policy != "static" && policy != "none") {
    return absl::FailedPreconditionError(fmt::format(
        "memory_manager_state: unknown policy {} (kubelet writes \"None\" or \"Static\")",
        QuoteForMessage(cp.policy_name)));
  }
  if (cp.pod_entries && !cp.pod_entries->empty()) {
    return absl::FailedPreconditionError(
        "memory_manager_state: holds pod-level memory blocks (podEntries, kubelet's "
        "PodLevelResourceManagers feature), which topologyd does not import; drain the pods "
        "that use pod-level resources first");
  }
  if (!cp.entries) return absl::OkStatus();

  struct Pending {
    std::string uid, name;
    const MemoryBlock* block;
  };
  std::vector<Pending> blocks;
  for (const auto& [uid, containers] : *cp.entries) {
    if (!containers) continue;
    for (const auto& [name, list] : *containers) {
      if (!list || list->empty()) continue;
      if (policy == "none") {
        return absl::FailedPreconditionError(fmt::format(
            "memory_manager_state: policy is \"None\" but container {} of pod {} has memory "
            "blocks; whether they are still in force is unknown. Run kubelet with the Static "
            "policy until the file matches the node, then import",
            QuoteForMessage(name), QuoteForMessage(uid)));
      }
      for (const MemoryBlock& b : *list) {
        if (!b.numa_affinity || b.numa_affinity->empty()) {
          return absl::FailedPreconditionError(
              fmt::format("memory_manager_state: pod {} container {} has a {} block without NUMA "
                          "affinity",
                          QuoteForMessage(uid), QuoteForMessage(name), QuoteForMessage(b.type)));
        }
        for (int64_t node : *b.numa_affinity) TOPOLOGYD_RETURN_IF_ERROR(CheckNode(node, uid, name));
        blocks.push_back({uid, name, &b});
      }
    }
  }
  // Single-node blocks are exact; take them off their node's reserved figure first so that
  // spanning blocks only share what is left.
  std::stable_partition(blocks.begin(), blocks.end(),
                        [](const Pending& p) { return p.block->numa_affinity->size() == 1; });
  Remaining remaining = ReservedPerNode(cp);
  for (const Pending& p : blocks) {
    ContainerRecord& c = Container(state, p.uid, p.name);
    state.pods[p.uid].qos = "Guaranteed";
    std::vector<int64_t> nodes = *p.block->numa_affinity;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    uint64_t left = p.block->size;
    for (int64_t node : nodes) {
      uint64_t& available = remaining[node][p.block->type];
      const uint64_t take = nodes.size() == 1 ? left : std::min(left, available);
      available -= std::min(available, take);
      // Every node of the block is kept, even with 0 bytes: the node set is the block's
      // affinity, which is the container's cpuset.mems (kubelet writes the whole affinity).
      c.memory[static_cast<int>(node)][p.block->type] += take;
      left -= take;
    }
    // The machine state under-reports (or is missing): charge the rest to the first node.
    if (left > 0) c.memory[static_cast<int>(nodes.front())][p.block->type] += left;
    std::set<int> affinity(c.numa_affinity.begin(), c.numa_affinity.end());
    for (int64_t node : nodes) affinity.insert(static_cast<int>(node));
    c.numa_affinity.assign(affinity.begin(), affinity.end());
  }
  return absl::OkStatus();
}

void ImportDevices(const DeviceCheckpoint& cp, State& state) {
  if (!cp.pod_device_entries) return;
  for (const PodDevicesEntry& e : *cp.pod_device_entries) {
    if (!e.device_ids) continue;
    ContainerRecord& c = Container(state, e.pod_uid, e.container_name);
    std::vector<std::string>& ids = c.devices[e.resource_name];
    for (const auto& [node, list] : *e.device_ids) {
      if (!list) continue;
      for (const std::string& id : *list) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
  }
}

}  // namespace

absl::StatusOr<State> ImportKubeletState(const CpuCheckpoint& cpu, const MemoryCheckpoint* memory,
                                         const DeviceCheckpoint* devices) {
  State state;
  TOPOLOGYD_RETURN_IF_ERROR(ImportCpu(cpu, state));
  if (memory != nullptr) TOPOLOGYD_RETURN_IF_ERROR(ImportMemory(*memory, state));
  if (devices != nullptr) ImportDevices(*devices, state);
  for (auto& [uid, pod] : state.pods) {
    if (uid.empty()) {
      return absl::FailedPreconditionError(
          "a kubelet checkpoint has an entry with an empty pod uid");
    }
    std::sort(pod.containers.begin(), pod.containers.end(),
              [](const ContainerRecord& a, const ContainerRecord& b) { return a.name < b.name; });
  }
  if (absl::Status valid = Validate(state); !valid.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("the kubelet checkpoints conflict: {}", valid.message()));
  }
  return state;
}

}  // namespace topologyd::state::kubelet
