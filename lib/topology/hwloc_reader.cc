#include "lib/topology/hwloc_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/topology/machine_wire.h"

namespace topologyd::topology {
namespace {

CpuSet ToCpuSet(hwloc_const_bitmap_t bitmap) {
  CpuSet set;
  // An infinite or absent set cannot be enumerated; cpusets of real objects are finite.
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return set;
  for (int id = hwloc_bitmap_first(bitmap); id >= 0; id = hwloc_bitmap_next(bitmap, id)) {
    set.Add(id);
  }
  return set;
}

int OsIndex(hwloc_obj_t object) {
  return object->os_index == HWLOC_UNKNOWN_INDEX ? ObjectDescription::kUnknownIndex
                                                 : static_cast<int>(object->os_index);
}

std::vector<ObjectDescription> Objects(hwloc_topology_t topology, hwloc_obj_type_t type) {
  std::vector<ObjectDescription> objects;
  for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, type, nullptr); object != nullptr;
       object = hwloc_get_next_obj_by_type(topology, type, object)) {
    objects.push_back(
        ObjectDescription{.os_index = OsIndex(object), .cpus = ToCpuSet(object->cpuset)});
  }
  return objects;
}

std::vector<NumaDescription> NumaNodes(hwloc_topology_t topology) {
  std::vector<NumaDescription> nodes;
  for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
       object != nullptr;
       object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, object)) {
    NumaDescription node;
    node.os_index = static_cast<int>(object->os_index);
    node.cpus = ToCpuSet(object->cpuset);
    node.memory_bytes = object->attr->numanode.local_memory;
    for (unsigned i = 0; i < object->attr->numanode.page_types_len; ++i) {
      node.page_types.push_back(PageType{.size_bytes = object->attr->numanode.page_types[i].size,
                                         .count = object->attr->numanode.page_types[i].count});
    }
    if (object->subtype != nullptr) node.subtype = object->subtype;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// hwloc may hold several NUMA matrices (latency from the OS, bandwidths from HMAT, ...).
// The OS "NUMALatency" matrix is what numactl and kubelet's prefer-closest-numa-nodes use;
// XML exports from hwloc 1.x carry an unnamed latency matrix instead.
void ReadDistances(hwloc_topology_t topology, MachineDescription* machine) {
  unsigned count = 0;
  if (hwloc_distances_get_by_type(topology, HWLOC_OBJ_NUMANODE, &count, nullptr, 0, 0) != 0 ||
      count == 0) {
    return;
  }
  std::vector<hwloc_distances_s*> matrices(count, nullptr);
  if (hwloc_distances_get_by_type(topology, HWLOC_OBJ_NUMANODE, &count, matrices.data(), 0, 0) !=
      0) {
    return;
  }
  matrices.resize(count);
  hwloc_distances_s* chosen = nullptr;
  for (hwloc_distances_s* matrix : matrices) {
    const char* name = hwloc_distances_get_name(topology, matrix);
    if (name != nullptr && std::strcmp(name, "NUMALatency") == 0) chosen = matrix;
  }
  for (hwloc_distances_s* matrix : matrices) {
    if (chosen == nullptr && (matrix->kind & HWLOC_DISTANCES_KIND_MEANS_LATENCY) != 0) {
      chosen = matrix;
    }
  }
  if (chosen != nullptr) {
    for (unsigned i = 0; i < chosen->nbobjs; ++i) {
      machine->distance_node_ids.push_back(static_cast<int>(chosen->objs[i]->os_index));
    }
    machine->distance_values.assign(chosen->values,
                                    chosen->values + size_t{chosen->nbobjs} * chosen->nbobjs);
  }
  for (hwloc_distances_s* matrix : matrices) hwloc_distances_release(topology, matrix);
}

bool HasGpuOsDevice(hwloc_obj_t pci) {
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type == HWLOC_OBJ_OS_DEVICE && child->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU) {
      return true;
    }
  }
  return false;
}

std::vector<PciDescription> PciDevices(hwloc_topology_t topology) {
  std::vector<PciDescription> devices;
  for (hwloc_obj_t object = hwloc_get_next_pcidev(topology, nullptr); object != nullptr;
       object = hwloc_get_next_pcidev(topology, object)) {
    const auto& pci = object->attr->pcidev;
    PciDescription device;
    device.busid = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", static_cast<unsigned>(pci.domain),
                               static_cast<unsigned>(pci.bus), static_cast<unsigned>(pci.dev),
                               static_cast<unsigned>(pci.func));
    device.vendor_id = pci.vendor_id;
    device.device_id = pci.device_id;
    device.class_id = pci.class_id;
    device.has_gpu_os_device = HasGpuOsDevice(object);
    hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, object);
    if (ancestor != nullptr) {
      device.locality = ToCpuSet(ancestor->cpuset);
      device.attached_to_root = ancestor->parent == nullptr;
    } else {
      device.attached_to_root = true;
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

bool IsKubeletTestMap(hwloc_topology_t topology) {
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  for (unsigned i = 0; i < root->infos_count; ++i) {
    if (root->infos[i].name != nullptr && root->infos[i].value != nullptr &&
        std::strcmp(root->infos[i].name, "Backend") == 0 &&
        kKubeletTestMapBackend == root->infos[i].value) {
      return true;
    }
  }
  return false;
}

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Far above any machine's description (an 8192-PU machine's is well under 1 MiB).
constexpr size_t kMaxChildMessage = size_t{64} << 20;

void WriteAllOrExit(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(1);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// What the parent got from the child's pipe.
enum class ChildOutput { kComplete, kTooLarge, kTimedOut };

// Reads the child's message until it closes the pipe, the message outgrows kMaxChildMessage
// or `deadline` passes; in the last two cases the child is killed (and still to be reaped).
ChildOutput ReadChildOutput(int fd, pid_t pid, std::chrono::steady_clock::time_point deadline,
                            std::string* message) {
  char buffer[65536];
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      return ChildOutput::kTimedOut;
    }
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (polled == 0 || (polled < 0 && errno == EINTR)) continue;  // the loop checks the deadline
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return ChildOutput::kComplete;
    if (message->size() + static_cast<size_t>(n) > kMaxChildMessage) {
      ::kill(pid, SIGKILL);
      return ChildOutput::kTooLarge;
    }
    message->append(buffer, static_cast<size_t>(n));
  }
}

// hwloc 2.9 crashes on some malformed XML instead of failing (a Package without
// complete_cpuset: SIGSEGV in hwloc_bitmap_compare_first), and we cannot list every such input.
// So a topology file is loaded in a forked child only: the child loads and describes it and
// writes the description to a pipe; a crash kills the child, and the parent never runs hwloc
// on the file (nor loads it a second time). A child that takes longer than `time_limit` (a
// file on a server that does not answer, a FIFO named by HWLOC_XMLFILE) is killed, so that
// start-up fails with a message instead of hanging until systemd gives up. The child logs
// nothing (locks of other threads are copied held) and leaves with _exit().
absl::StatusOr<MachineDescription> DescribeInChild(const TopologySource& source,
                                                   const std::string& what,
                                                   std::chrono::milliseconds time_limit) {
  const auto deadline = std::chrono::steady_clock::now() + time_limit;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        fmt::format("cannot create a pipe to load {}: {}", what, ErrnoText(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(fmt::format("cannot fork to load {}: {}", what, ErrnoText(error)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Die by the signal itself rather than through an inherited handler (ASan's exits 1).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE}) std::signal(sig, SIG_DFL);
    absl::StatusOr<MachineDescription> machine;
    if (absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(source); hwloc.ok()) {
      machine = DescribeMachine(hwloc->get());
    } else {
      machine = hwloc.status();
    }
    WriteAllOrExit(fds[1], EncodeLoadResult(machine));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  const ChildOutput output = ReadChildOutput(fds[0], pid, deadline, &message);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          fmt::format("cannot wait for the process loading {}: {}", what, ErrnoText(errno)));
    }
  }
  if (output == ChildOutput::kTooLarge) {
    return absl::InternalError(
        fmt::format("the description of {} is larger than {} bytes", what, kMaxChildMessage));
  }
  if (output == ChildOutput::kTimedOut) {
    return absl::DeadlineExceededError(fmt::format(
        "hwloc did not finish reading {} within {} ms, and was stopped: is the file on a "
        "device or server that does not answer, or not a file at all?",
        what, time_limit.count()));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::InvalidArgumentError(
        fmt::format("hwloc crashed (signal {}, {}) reading {}: the XML is malformed; export it "
                    "again with lstopo",
                    sig, ::strsignal(sig), what));
  }
  return DecodeLoadResult(message, what);
}

// hwloc takes any index (the synthetic "pack:1 pu:2(indexes=0,2000000000)" loads), but every
// CpuSet copied from such a topology would be a bitmap of hundreds of MB. Refused like
// CpuSet::Parse refuses such ids.
absl::Status CheckCpuIndexes(hwloc_topology_t topology, const std::string& what) {
  const int largest = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topology));
  if (largest > CpuSet::kMaxCpuId) {
    return absl::InvalidArgumentError(fmt::format(
        "{} has CPU index {}; the largest supported is {}", what, largest, CpuSet::kMaxCpuId));
  }
  for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, nullptr); pu != nullptr;
       pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, pu)) {
    if (pu->os_index != HWLOC_UNKNOWN_INDEX &&
        pu->os_index > static_cast<unsigned>(CpuSet::kMaxCpuId)) {
      return absl::InvalidArgumentError(
          fmt::format("{} has a PU with OS index {}; the largest supported is {}", what,
                      pu->os_index, CpuSet::kMaxCpuId));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HwlocTopologyPtr> LoadHwloc(const TopologySource& source) {
  const std::string what = DescribeSource(source);
  // Checked before hwloc sees the path, so a typo is NOT_FOUND with a plain message rather
  // than whatever errno hwloc's XML backend leaves behind.
  if (source.kind == TopologySource::Kind::kXml) {
    std::error_code ec;
    if (source.path.empty()) return absl::InvalidArgumentError("no hwloc XML file given");
    if (!std::filesystem::exists(source.path, ec)) {
      return absl::NotFoundError(fmt::format("{} does not exist", what));
    }
    if (!std::filesystem::is_regular_file(source.path, ec)) {
      return absl::InvalidArgumentError(fmt::format("{} is not a regular file", what));
    }
  }
  if (source.kind == TopologySource::Kind::kSynthetic && source.description.empty()) {
    return absl::InvalidArgumentError("empty hwloc synthetic topology description");
  }

  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::InternalError(fmt::format("hwloc_topology_init failed: {}", ErrnoText(errno)));
  }
  HwlocTopologyPtr topology(raw);
  if (hwloc_topology_set_flags(topology.get(), HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
    return absl::InternalError(
        fmt::format("hwloc_topology_set_flags failed: {}", ErrnoText(errno)));
  }
  if (hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    return absl::InternalError(
        fmt::format("hwloc_topology_set_io_types_filter failed: {}", ErrnoText(errno)));
  }
  switch (source.kind) {
    case TopologySource::Kind::kLive:
      break;
    case TopologySource::Kind::kXml:
      if (hwloc_topology_set_xml(topology.get(), source.path.c_str()) != 0) {
        return absl::InvalidArgumentError(
            fmt::format("hwloc cannot read {}: {}", what, ErrnoText(errno)));
      }
      break;
    case TopologySource::Kind::kSynthetic:
      if (hwloc_topology_set_synthetic(topology.get(), source.description.c_str()) != 0) {
        return absl::InvalidArgumentError(fmt::format("invalid {}", what));
      }
      break;
  }
  errno = 0;
  if (hwloc_topology_load(topology.get()) != 0) {
    std::string reason = errno != 0 ? ErrnoText(errno) : "unknown error";
    if (source.kind == TopologySource::Kind::kLive) {
      return absl::InternalError(fmt::format("hwloc failed to discover {}: {}", what, reason));
    }
    return absl::InvalidArgumentError(
        fmt::format("hwloc failed to load {} (not a valid topology?): {}", what, reason));
  }
  TOPOLOGYD_RETURN_IF_ERROR(CheckCpuIndexes(topology.get(), what));
  return topology;
}

absl::StatusOr<MachineDescription> ReadMachine(const TopologySource& source,
                                               std::chrono::milliseconds time_limit) {
  if (source.kind == TopologySource::Kind::kXml) {
    return DescribeInChild(source, DescribeSource(source), time_limit);
  }
  // hwloc's environment can stand in for the live machine (how tests point it elsewhere); an
  // XML file named there can crash hwloc like a configured one.
  if (const char* xml = std::getenv("HWLOC_XMLFILE");
      source.kind == TopologySource::Kind::kLive && xml != nullptr && *xml != '\0') {
    return DescribeInChild(
        source, fmt::format("{} (HWLOC_XMLFILE {})", DescribeSource(source), EscapeForMessage(xml)),
        time_limit);
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(HwlocTopologyPtr hwloc, LoadHwloc(source));
  return DescribeMachine(hwloc.get());
}

MachineDescription DescribeMachine(hwloc_topology_t topology) {
  MachineDescription machine;
  for (const ObjectDescription& pu : Objects(topology, HWLOC_OBJ_PU)) {
    if (pu.os_index != ObjectDescription::kUnknownIndex) machine.pus.Add(pu.os_index);
  }
  machine.packages = Objects(topology, HWLOC_OBJ_PACKAGE);
  machine.dies = Objects(topology, HWLOC_OBJ_DIE);
  machine.numa_nodes = NumaNodes(topology);
  machine.cores = Objects(topology, HWLOC_OBJ_CORE);
  machine.l3_caches = Objects(topology, HWLOC_OBJ_L3CACHE);
  ReadDistances(topology, &machine);
  machine.pci_devices = PciDevices(topology);
  machine.kubelet_test_map = IsKubeletTestMap(topology);
  return machine;
}

}  // namespace topologyd::topology
