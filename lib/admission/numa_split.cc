#include "lib/admission/numa_split.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/admission/numa_split_choice.h"
#include "lib/admission/numa_split_request.h"
#include "lib/admission/reasons.h"
#include "lib/common/absl_fmt.h"
#include "lib/cpu/take_by_topology.h"
#include "lib/device/device_allocator.h"
#include "lib/memory/memory_policy.h"

namespace topologyd::admission {
namespace {

// A container of the pod that runs for the pod's lifetime, with what it asks for.
struct SplitContainer {
  const pod::Container* spec;
  int cpus = 0;
  uint64_t memory = 0;
};

// One container's CPUs from one cell.
struct Piece {
  int cell = 0;
  int cpus = 0;
};

class SplitRun {
 public:
  SplitRun(const NodePolicy& node, AllocationState& state, const pod::Pod& pod,
           const std::vector<pod::OrderedContainer>& order, bool guaranteed)
      : node_(node), state_(state), pod_(pod), order_(order), guaranteed_(guaranteed) {}

  SplitAdmission Run() {
    if (!Prepare() || !Choose() || !TakeCpus() || !PinMemory() || !TakeDevices()) {
      return std::move(out_);
    }
    for (size_t c = 0; c < out_.split.cells.size(); ++c) {
      const NumaCell& cell = out_.split.cells[c];
      std::vector<std::string> what;
      if (node_.cpu.has_value()) {
        what.push_back(fmt::format("{} exclusive CPUs ({})", cell.cpus, cell.cpu_set.ToString()));
      }
      if (node_.memory_static) what.push_back(fmt::format("{} memory", BytesText(cell.memory)));
      out_.notes.push_back(fmt::format("NUMA split: cell {} on NUMA node {}: {}", c, cell.numa_node,
                                       fmt::join(what, ", ")));
    }
    return std::move(out_);
  }

 private:
  bool Fail(std::string message, std::string_view reason = kNumaSplitError) {
    out_.failure = std::make_pair(std::string(reason), std::move(message));
    return false;
  }

  // The containers to split and the request; false (with the failure) when the pod cannot be
  // split here.
  bool Prepare() {
    if (!node_.cpu.has_value() && !node_.memory_static) {
      return Fail(
          fmt::format("{}: this node pins neither CPUs nor memory (cpuManagerPolicy none, "
                      "memoryManagerPolicy None), so it cannot split a pod over NUMA nodes",
                      kNumaNodesAnnotation));
    }
    if (state_.cpu.assignments.contains(pod_.uid) || state_.memory.assignments.contains(pod_.uid) ||
        state_.devices.pods.contains(pod_.uid)) {
      // Splitting again around what some containers keep would need the cells they were
      // given, which the records do not keep.
      return Fail(fmt::format(
          "pod {} already holds resources: a pod split over NUMA nodes is admitted whole; "
          "release it first",
          pod_.uid));
    }
    int total_cpus = 0;
    uint64_t total_memory = 0;
    for (const pod::OrderedContainer& c : order_) {
      if (c.role == pod::ContainerRole::kInit) {
        init_.push_back(c.spec->name);
        continue;
      }
      SplitContainer s{.spec = c.spec, .cpus = 0, .memory = 0};
      if (auto it = c.spec->requests.find(pod::kResourceCpu); it != c.spec->requests.end()) {
        s.cpus = cpu::GuaranteedCpus(guaranteed_, it->second.MilliValue());
      }
      absl::StatusOr<std::map<std::string, uint64_t>> memory =
          memory::ContainerMemoryRequest(*c.spec);
      if (!memory.ok()) return Fail(std::string(memory.status().message()));
      for (const auto& [type, bytes] : *memory) {
        if (type == memory::kMemory) {
          s.memory = bytes;
        } else if (bytes > 0 && node_.memory_static) {
          return Fail(
              fmt::format("container \"{}\" asks for {}: huge pages are not split over NUMA nodes",
                          s.spec->name, type));
        }
      }
      total_cpus += s.cpus;
      total_memory += s.memory;
      containers_.push_back(s);
    }
    if (!guaranteed_ || total_cpus == 0) {
      return Fail(fmt::format(
          "{}: only a Guaranteed pod whose containers ask for whole CPUs has exclusive CPUs to "
          "split",
          kNumaNodesAnnotation));
    }
    absl::StatusOr<NumaSplitRequest> request =
        ParseNumaSplitRequest(pod_, total_cpus, total_memory, node_.numa);
    if (!request.ok()) return Fail(std::string(request.status().message()));
    request_ = *std::move(request);
    out_.split.placed_by_pod = !request_.placement.empty();
    for (int c = 0; c < request_.cells(); ++c) {
      out_.split.cells.push_back(NumaCell{
          .numa_node = -1, .cpus = request_.cpus[c], .memory = request_.memory[c], .cpu_set = {}});
    }
    return CheckWholeCores();
  }

  // full-pcpus-only: every piece of every container must be whole cores, which holds when
  // every cell and every container is.
  bool CheckWholeCores() {
    if (!node_.cpu.has_value() || !node_.cpu->options().full_pcpus_only) return true;
    const int per_core = node_.cpu->cpu_group_size();
    for (size_t c = 0; c < request_.cpus.size(); ++c) {
      if (per_core > 0 && request_.cpus[c] % per_core != 0) {
        return Fail(fmt::format(
            "cell {} asks for {} CPUs, not a multiple of the {} CPUs per core full-pcpus-only "
            "allocates",
            c, request_.cpus[c], per_core));
      }
    }
    for (const SplitContainer& s : containers_) {
      if (per_core > 0 && s.cpus % per_core != 0) {
        return Fail(
            fmt::format("container \"{}\" asks for {} CPUs, not a multiple of the {} CPUs per core "
                        "full-pcpus-only allocates",
                        s.spec->name, s.cpus, per_core));
      }
    }
    return true;
  }

  bool Choose() {
    SplitChoiceInput input;
    for (int c = 0; c < request_.cells(); ++c) {
      input.cells.push_back(CellNeed{.cpus = request_.cpus[c], .memory = request_.memory[c]});
    }
    const CpuSet available =
        node_.cpu.has_value() ? node_.cpu->AvailableCpus(state_.cpu) : CpuSet();
    for (int id : node_.numa.ids()) {
      NodeOffer offer{.id = id};
      if (node_.cpu.has_value()) {
        offer.free_cpus =
            available.Intersection(node_.cpu->topology().CpusInNumaNodes({id})).Size();
      }
      if (auto ns = state_.memory.machine_state.find(id); ns != state_.memory.machine_state.end()) {
        if (auto t = ns->second.memory_map.find(memory::kMemory);
            t != ns->second.memory_map.end()) {
          offer.free_memory = t->second.free;
        }
        const bool grouped = ns->second.cells.size() > 1;
        offer.single_node_blocks = ns->second.number_of_assignments > 0 && !grouped;
        if (grouped) offer.group = ns->second.cells;
      }
      input.nodes.push_back(std::move(offer));
    }
    for (NodeOffer& offer : input.nodes) {
      for (int id : offer.group) {
        for (const NodeOffer& member : input.nodes) {
          if (member.id == id) offer.group_free_memory += member.free_memory;
        }
      }
    }
    input.distances = node_.distances;
    input.check_cpus = node_.cpu.has_value();
    input.check_memory = node_.memory_static;
    input.named = request_.placement;
    absl::StatusOr<std::vector<int>> chosen = ChooseSplitNodes(input);
    if (!chosen.ok()) return Fail(std::string(chosen.status().message()));
    for (size_t c = 0; c < chosen->size(); ++c) out_.split.cells[c].numa_node = (*chosen)[c];
    out_.nodes = *chosen;
    std::sort(out_.nodes.begin(), out_.nodes.end());
    out_.notes.push_back(
        out_.split.placed_by_pod
            ? fmt::format("NUMA split over {} NUMA nodes named by {}; the topology manager's "
                          "hint merge is not used for this pod",
                          out_.nodes.size(), kNumaPlacementAnnotation)
            : fmt::format("NUMA split over {} NUMA nodes chosen closest by distance; the "
                          "topology manager's hint merge is not used for this pod",
                          out_.nodes.size()));
    for (const std::string& name : init_) {
      out_.notes.push_back(fmt::format(
          "init container \"{}\" runs in the shared pool with unpinned memory: only the "
          "containers that run for the pod's lifetime are split",
          name));
    }
    return true;
  }

  // The cells' CPUs dealt to the containers in order.
  std::vector<std::vector<Piece>> Deal() const {
    std::vector<std::vector<Piece>> out(containers_.size());
    int cell = 0;
    int left = request_.cpus[0];
    for (size_t k = 0; k < containers_.size(); ++k) {
      int need = containers_[k].cpus;
      while (need > 0) {
        const int take = std::min(need, left);
        out[k].push_back(Piece{.cell = cell, .cpus = take});
        need -= take;
        left -= take;
        if (left == 0 && cell + 1 < request_.cells()) left = request_.cpus[++cell];
      }
    }
    return out;
  }

  bool TakeCpus() {
    if (!node_.cpu.has_value()) return true;
    const cpu::StaticPolicy& policy = *node_.cpu;
    const std::vector<std::vector<Piece>> pieces = Deal();
    for (size_t k = 0; k < containers_.size(); ++k) {
      CpuSet taken;
      for (const Piece& piece : pieces[k]) {
        NumaCell& cell = out_.split.cells[piece.cell];
        const CpuSet on_node =
            policy.AvailableCpus(state_.cpu)
                .Intersection(policy.topology().CpusInNumaNodes({cell.numa_node}));
        absl::StatusOr<CpuSet> cpus =
            cpu::TakeByTopology(policy.topology(), policy.take_options(), on_node, piece.cpus);
        if (!cpus.ok() || !cpus->IsSubsetOf(on_node) || cpus->Size() != piece.cpus) {
          return Fail(fmt::format(
              "NUMA node {}: cannot take {} CPUs of cell {} for container \"{}\" from its free "
              "CPUs {}{}",
              cell.numa_node, piece.cpus, piece.cell, containers_[k].spec->name, on_node.ToString(),
              cpus.ok() ? "" : fmt::format(": {}", cpus.status().message())));
        }
        state_.cpu.default_cpu_set = state_.cpu.default_cpu_set.Difference(*cpus);
        cell.cpu_set = cell.cpu_set.Union(*cpus);
        taken = taken.Union(*cpus);
      }
      if (!taken.IsEmpty()) state_.cpu.assignments[pod_.uid][containers_[k].spec->name] = taken;
    }
    return true;
  }

  bool PinMemory() {
    if (!node_.memory_static) return true;
    for (const SplitContainer& s : containers_) {
      if (s.memory == 0) continue;
      absl::StatusOr<memory::MemoryState> pinned = memory::PinBlock(
          std::move(state_.memory), pod_.uid, s.spec->name, out_.nodes, memory::kMemory, s.memory);
      if (!pinned.ok()) {
        return Fail(fmt::format("container \"{}\": {}", s.spec->name, pinned.status().message()));
      }
      state_.memory = *std::move(pinned);
    }
    return true;
  }

  bool TakeDevices() {
    const hints::TopologyHint hint{node_.numa.Mask(out_.nodes), true};
    for (const pod::OrderedContainer& c : order_) {
      absl::StatusOr<device::DeviceState> devices =
          device::Allocate(node_.devices, std::move(state_.devices), pod_, *c.spec, hint);
      if (!devices.ok()) {
        return Fail(fmt::format("Allocate failed due to {}, which is unexpected (container "
                                "\"{}\", device manager)",
                                devices.status().message(), c.spec->name),
                    kUnexpectedAdmissionError);
      }
      state_.devices = *std::move(devices);
    }
    return true;
  }

  const NodePolicy& node_;
  AllocationState& state_;
  const pod::Pod& pod_;
  const std::vector<pod::OrderedContainer>& order_;
  bool guaranteed_;
  std::vector<SplitContainer> containers_;
  std::vector<std::string> init_;
  NumaSplitRequest request_;
  SplitAdmission out_;
};

}  // namespace

SplitAdmission AdmitNumaSplit(const NodePolicy& node, AllocationState& state, const pod::Pod& pod,
                              const std::vector<pod::OrderedContainer>& order, bool guaranteed) {
  return SplitRun(node, state, pod, order, guaranteed).Run();
}

}  // namespace topologyd::admission
