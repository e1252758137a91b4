#include "lib/kubelet_import/kubelet_checksum.h"

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace topologyd::state::kubelet {
namespace {

// go-spew writes "<nil>" for a nil map, slice or pointer, whatever its type.
constexpr std::string_view kNil = "<nil>";

// Renders a map (sorted keys, as std::map already is) with `value` rendering each entry.
template <typename Map, typename RenderValue>
void SpewMap(std::string& out, const std::optional<Map>& m, RenderValue value) {
  if (!m) {
    out += kNil;
    return;
  }
  out += "map[";
  bool first = true;
  for (const auto& [k, v] : *m) {
    if (!first) out += ' ';
    first = false;
    out += fmt::format("{}:", k);
    value(out, v);
  }
  out += ']';
}

template <typename T>
void SpewList(std::string& out, const std::optional<std::vector<T>>& list) {
  if (!list) {
    out += kNil;
    return;
  }
  out += fmt::format("[{}]", fmt::join(*list, " "));
}

void SpewMemoryTable(std::string& out, const std::optional<MemoryTable>& t) {
  if (!t) {
    out += kNil;
    return;
  }
  out += fmt::format(
      "<*>{{TotalMemSize:(uint64){} SystemReserved:(uint64){} Allocatable:(uint64){} "
      "Reserved:(uint64){} Free:(uint64){}}}",
      t->total, t->system_reserved, t->allocatable, t->reserved, t->free);
}

void SpewNumaNode(std::string& out, const std::optional<NumaNodeState>& n) {
  if (!n) {
    out += kNil;
    return;
  }
  out += fmt::format(
      "<*>{{NumberOfAssignments:(int){} MemoryMap:(map[v1.ResourceName]*state.MemoryTable)",
      n->number_of_assignments);
  SpewMap(out, n->memory_map, SpewMemoryTable);
  out += " Cells:([]int)";
  SpewList(out, n->cells);
  out += '}';
}

void SpewBlocks(std::string& out, const OptionalBlocks& blocks) {
  if (!blocks) {
    out += kNil;
    return;
  }
  out += '[';
  bool first = true;
  for (const MemoryBlock& b : *blocks) {
    if (!first) out += ' ';
    first = false;
    out += "{NUMAAffinity:([]int)";
    SpewList(out, b.numa_affinity);
    out += fmt::format(" Type:(v1.ResourceName){} Size:(uint64){}}}", b.type, b.size);
  }
  out += ']';
}

}  // namespace

uint32_t Fnv1a32(std::string_view data) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

uint32_t DataStringChecksum(std::string_view data) {
  return Fnv1a32(std::string("(string)").append(data));
}

std::string SpewCpuCheckpoint(const CpuCheckpoint& cp) {
  std::string out = fmt::format(
      "(*state.CPUManagerCheckpoint){{PolicyName:(string){} DefaultCPUSet:(string){} "
      "Entries:(map[string]map[string]string)",
      cp.policy_name, cp.default_cpu_set);
  SpewMap(out, cp.entries, [](std::string& o, const auto& containers) {
    SpewMap(o, containers, [](std::string& o2, const std::string& cpus) { o2 += cpus; });
  });
  out += " Checksum:(checksum.Checksum)0}";
  return out;
}

std::string SpewMemoryCheckpoint(const MemoryCheckpoint& cp, bool with_pod_entries) {
  std::string out = fmt::format(
      "(*state.MemoryManagerCheckpoint){{PolicyName:(string){} MachineState:(state.NUMANodeMap)",
      cp.policy_name);
  SpewMap(out, cp.machine_state, SpewNumaNode);
  out += " Entries:(state.ContainerMemoryAssignments)";
  SpewMap(out, cp.entries,
          [](std::string& o, const auto& containers) { SpewMap(o, containers, SpewBlocks); });
  if (with_pod_entries) {
    out += " PodEntries:(state.PodMemoryAssignments)";
    SpewMap(out, cp.pod_entries, [](std::string& o, const PodMemoryEntry& e) {
      o += "{MemoryBlocks:([]state.Block)";
      SpewBlocks(o, e.memory_blocks);
      o += '}';
    });
  }
  out += " Checksum:(checksum.Checksum)0}";
  return out;
}

std::string SpewDeviceData(const DeviceCheckpoint& cp) {
  std::string out = "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)";
  if (!cp.pod_device_entries) {
    out += kNil;
  } else {
    out += '[';
    bool first = true;
    for (const PodDevicesEntry& e : *cp.pod_device_entries) {
      if (!first) out += ' ';
      first = false;
      out += fmt::format(
          "{{PodUID:(string){} ContainerName:(string){} ResourceName:(string){} "
          "DeviceIDs:(checkpoint.DevicesPerNUMA)",
          e.pod_uid, e.container_name, e.resource_name);
      SpewMap(out, e.device_ids,
              [](std::string& o, const std::optional<std::vector<std::string>>& ids) {
                SpewList(o, ids);
              });
      out += " AllocResp:([]uint8)";
      if (!e.alloc_resp) {
        out += kNil;
      } else {
        // []byte renders as decimal bytes.
        out += '[';
        for (size_t i = 0; i < e.alloc_resp->size(); ++i) {
          if (i > 0) out += ' ';
          out += std::to_string(static_cast<unsigned char>((*e.alloc_resp)[i]));
        }
        out += ']';
      }
      out += '}';
    }
    out += ']';
  }
  out += " RegisteredDevices:(map[string][]string)";
  SpewMap(
      out, cp.registered_devices,
      [](std::string& o, const std::optional<std::vector<std::string>>& ids) { SpewList(o, ids); });
  out += '}';
  return out;
}

}  // namespace topologyd::state::kubelet
