#include "lib/topology/machine_wire.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/status_macros.h"

namespace topologyd::topology {
namespace {

class Writer {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_integral_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void PutString(std::string_view text) {
    Put<uint64_t>(text.size());
    out_.append(text);
  }
  void PutCpus(const CpuSet& cpus) { PutString(cpus.ToString()); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  absl::StatusOr<T> Get(const char* what) {
    static_assert(std::is_integral_v<T>);
    if (rest_.size() < sizeof(T)) return Short(what);
    T value;
    std::memcpy(&value, rest_.data(), sizeof value);
    rest_.remove_prefix(sizeof value);
    return value;
  }

  absl::StatusOr<std::string> GetString(const char* what) {
    TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t size, Get<uint64_t>(what));
    if (rest_.size() < size) return Short(what);
    std::string text(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return text;
  }

  absl::StatusOr<CpuSet> GetCpus(const char* what) {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string text, GetString(what));
    absl::StatusOr<CpuSet> cpus = CpuSet::Parse(text);
    if (!cpus.ok()) return Invalid(what, std::string(cpus.status().message()));
    return cpus;
  }

  // A element count: each element takes at least one byte, so a count beyond what is left
  // is damage, and is refused before anything is reserved for it.
  absl::StatusOr<size_t> GetCount(const char* what) {
    TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t count, Get<uint64_t>(what));
    if (count > rest_.size()) return Invalid(what, fmt::format("count {} is too large", count));
    return static_cast<size_t>(count);
  }

  absl::StatusOr<int> GetInt(const char* what) { return Get<int32_t>(what); }

  absl::StatusOr<bool> GetBool(const char* what) {
    TOPOLOGYD_ASSIGN_OR_RETURN(uint8_t value, Get<uint8_t>(what));
    if (value > 1) return Invalid(what, fmt::format("{} is not a truth value", value));
    return value == 1;
  }

  absl::Status Finish() const {
    if (!rest_.empty()) {
      return absl::InternalError(
          fmt::format("machine description has {} trailing bytes", rest_.size()));
    }
    return absl::OkStatus();
  }

 private:
  static absl::Status Short(const char* what) {
    return absl::InternalError(fmt::format("machine description is cut short in {}", what));
  }
  static absl::Status Invalid(const char* what, std::string_view problem) {
    return absl::InternalError(fmt::format("machine description: invalid {}: {}", what, problem));
  }

  std::string_view rest_;
};

void PutObjects(Writer& w, const std::vector<ObjectDescription>& objects) {
  w.Put<uint64_t>(objects.size());
  for (const ObjectDescription& object : objects) {
    w.Put<int32_t>(object.os_index);
    w.PutCpus(object.cpus);
  }
}

absl::StatusOr<std::vector<ObjectDescription>> GetObjects(Reader& r, const char* what) {
  TOPOLOGYD_ASSIGN_OR_RETURN(size_t count, r.GetCount(what));
  std::vector<ObjectDescription> objects(count);
  for (ObjectDescription& object : objects) {
    TOPOLOGYD_ASSIGN_OR_RETURN(object.os_index, r.GetInt(what));
    TOPOLOGYD_ASSIGN_OR_RETURN(object.cpus, r.GetCpus(what));
  }
  return objects;
}

// The first byte of a load result.
constexpr char kDescribed = 'D';
constexpr char kFailed = 'E';  // then the status code (4 bytes) and the message

}  // namespace

std::string EncodeMachine(const MachineDescription& machine) {
  Writer w;
  w.PutCpus(machine.pus);
  PutObjects(w, machine.packages);
  PutObjects(w, machine.dies);
  w.Put<uint64_t>(machine.numa_nodes.size());
  for (const NumaDescription& node : machine.numa_nodes) {
    w.Put<int32_t>(node.os_index);
    w.PutCpus(node.cpus);
    w.Put<uint64_t>(node.memory_bytes);
    w.Put<uint64_t>(node.page_types.size());
    for (const PageType& page : node.page_types) {
      w.Put<uint64_t>(page.size_bytes);
      w.Put<uint64_t>(page.count);
    }
    w.PutString(node.subtype);
  }
  PutObjects(w, machine.cores);
  PutObjects(w, machine.l3_caches);
  w.Put<uint64_t>(machine.distance_node_ids.size());
  for (int id : machine.distance_node_ids) w.Put<int32_t>(id);
  w.Put<uint64_t>(machine.distance_values.size());
  for (uint64_t value : machine.distance_values) w.Put<uint64_t>(value);
  w.Put<uint64_t>(machine.pci_devices.size());
  for (const PciDescription& device : machine.pci_devices) {
    w.PutString(device.busid);
    w.Put<uint16_t>(device.vendor_id);
    w.Put<uint16_t>(device.device_id);
    w.Put<uint16_t>(device.class_id);
    w.Put<uint8_t>(device.has_gpu_os_device ? 1 : 0);
    w.PutCpus(device.locality);
    w.Put<uint8_t>(device.attached_to_root ? 1 : 0);
    w.Put<uint8_t>(device.physfn_busid.has_value() ? 1 : 0);
    if (device.physfn_busid) w.PutString(*device.physfn_busid);
  }
  w.Put<uint8_t>(machine.kubelet_test_map ? 1 : 0);
  return w.Take();
}

absl::StatusOr<MachineDescription> DecodeMachine(std::string_view bytes) {
  Reader r(bytes);
  MachineDescription machine;
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.pus, r.GetCpus("PUs"));
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.packages, GetObjects(r, "packages"));
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.dies, GetObjects(r, "dies"));
  TOPOLOGYD_ASSIGN_OR_RETURN(size_t numa_count, r.GetCount("NUMA nodes"));
  machine.numa_nodes.resize(numa_count);
  for (NumaDescription& node : machine.numa_nodes) {
    TOPOLOGYD_ASSIGN_OR_RETURN(node.os_index, r.GetInt("NUMA nodes"));
    TOPOLOGYD_ASSIGN_OR_RETURN(node.cpus, r.GetCpus("NUMA nodes"));
    TOPOLOGYD_ASSIGN_OR_RETURN(node.memory_bytes, r.Get<uint64_t>("NUMA nodes"));
    TOPOLOGYD_ASSIGN_OR_RETURN(size_t page_count, r.GetCount("page types"));
    node.page_types.resize(page_count);
    for (PageType& page : node.page_types) {
      TOPOLOGYD_ASSIGN_OR_RETURN(page.size_bytes, r.Get<uint64_t>("page types"));
      TOPOLOGYD_ASSIGN_OR_RETURN(page.count, r.Get<uint64_t>("page types"));
    }
    TOPOLOGYD_ASSIGN_OR_RETURN(node.subtype, r.GetString("NUMA nodes"));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.cores, GetObjects(r, "cores"));
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.l3_caches, GetObjects(r, "L3 caches"));
  TOPOLOGYD_ASSIGN_OR_RETURN(size_t id_count, r.GetCount("distance node ids"));
  machine.distance_node_ids.resize(id_count);
  for (int& id : machine.distance_node_ids) {
    TOPOLOGYD_ASSIGN_OR_RETURN(id, r.GetInt("distance node ids"));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(size_t value_count, r.GetCount("distances"));
  machine.distance_values.resize(value_count);
  for (uint64_t& value : machine.distance_values) {
    TOPOLOGYD_ASSIGN_OR_RETURN(value, r.Get<uint64_t>("distances"));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(size_t device_count, r.GetCount("PCI devices"));
  machine.pci_devices.resize(device_count);
  for (PciDescription& device : machine.pci_devices) {
    TOPOLOGYD_ASSIGN_OR_RETURN(device.busid, r.GetString("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.vendor_id, r.Get<uint16_t>("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.device_id, r.Get<uint16_t>("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.class_id, r.Get<uint16_t>("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.has_gpu_os_device, r.GetBool("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.locality, r.GetCpus("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(device.attached_to_root, r.GetBool("PCI devices"));
    TOPOLOGYD_ASSIGN_OR_RETURN(bool has_physfn, r.GetBool("PCI devices"));
    if (has_physfn) {
      TOPOLOGYD_ASSIGN_OR_RETURN(std::string physfn, r.GetString("PCI devices"));
      device.physfn_busid = std::move(physfn);
    }
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(machine.kubelet_test_map, r.GetBool("the test-map marker"));
  TOPOLOGYD_RETURN_IF_ERROR(r.Finish());
  return machine;
}

std::string EncodeLoadResult(const absl::StatusOr<MachineDescription>& result) {
  if (result.ok()) return kDescribed + EncodeMachine(*result);
  const auto code = static_cast<int32_t>(result.status().code());
  std::string bytes(1, kFailed);
  bytes.append(reinterpret_cast<const char*>(&code), sizeof code);
  bytes.append(std::string(result.status().message()));
  return bytes;
}

absl::StatusOr<MachineDescription> DecodeLoadResult(std::string_view bytes, std::string_view what) {
  if (!bytes.empty() && bytes[0] == kDescribed) {
    absl::StatusOr<MachineDescription> machine = DecodeMachine(bytes.substr(1));
    if (!machine.ok()) {
      return absl::InternalError(
          fmt::format("reading {}: {}", what, std::string(machine.status().message())));
    }
    return machine;
  }
  int32_t code = 0;
  if (bytes.size() >= 1 + sizeof code && bytes[0] == kFailed) {
    std::memcpy(&code, bytes.data() + 1, sizeof code);
  }
  // Only failures travel with a code; a message cut short before it is no result.
  if (code == 0) {
    return absl::InternalError(fmt::format("the process loading {} gave no result", what));
  }
  return absl::Status(static_cast<absl::StatusCode>(code),
                      std::string(bytes.substr(1 + sizeof code)));
}

}  // namespace topologyd::topology
