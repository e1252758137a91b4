// Randomized invariants of admission over every machine of the recorded-machine corpus: random pod
// streams with admits and releases interleaved, under varied policies and scopes.
//
//   - no exclusive CPU is held by two pods, none is reserved or in the shared pool, and the
//     pool plus the exclusive CPUs is every CPU the pool started with;
//   - no device is held by two pods;
//   - per NUMA node and memory type, reserved + free == allocatable, and the blocks add up to
//     what is reserved;
//   - a rejected admission returns the input state unchanged;
//   - single-numa-node: every aligned resource of an admitted container (exclusive CPUs,
//     memory, devices with locality) is on the one NUMA node of its hint;
//   - persisting the pods as lib/state records and restoring gives the same provider states;
//   - releasing every pod gives back the empty state.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>

#include "gtest/gtest.h"

#include "lib/admission/admission.h"
#include "lib/admission/state_records.h"
#include "lib/ledger/ledger.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/durable_state.h"
#include "tests/support/require_component.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::admission {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

constexpr size_t kMaxMemoryStaticNodes = 8;

config::Config CorpusConfig(const topology::Topology& machine, std::string policy,
                            std::string scope) {
  config::Config c;
  c.cpu_manager_policy = "static";
  c.cpu_reserved_count = 1;
  c.topology_manager_policy = std::move(policy);
  c.topology_manager_scope = std::move(scope);
  // The memory provider lists every NUMA mask explicitly (2^N up to 65,536 masks per memory
  // type), so on machines above kMaxMemoryStaticNodes one admission takes seconds in a Debug
  // build; there the streams run without it (the benchmark measures those machines with it).
  c.memory_manager_policy = machine.numa_nodes.size() <= kMaxMemoryStaticNodes ? "Static" : "None";
  for (const topology::NumaNode& n : machine.numa_nodes) {
    if (n.memory_bytes >= kGi) {
      c.reserved_memory = {{.numa_node = n.id, .limits = {{"memory", "256Mi"}}}};
      break;
    }
  }
  config::DevicePoolConfig gpus{.resource_name = "example.com/gpu", .pci = {}, .devices = {}};
  config::DevicePoolConfig nics{.resource_name = "example.com/nic", .pci = {}, .devices = {}};
  for (const topology::PciDevice& d : machine.pci_devices) {
    config::ExplicitDeviceConfig e{.id = d.busid, .numa_nodes = d.numa_nodes};
    if (d.kind == topology::DeviceKind::kGpu) gpus.devices.push_back(e);
    if (d.kind == topology::DeviceKind::kNetwork) nics.devices.push_back(e);
  }
  if (!gpus.devices.empty()) c.devices.push_back(gpus);
  if (!nics.devices.empty()) c.devices.push_back(nics);
  return c;
}

using ::topologyd::testing::Durable;

class Stream {
 public:
  Stream(const NodePolicy& node, uint32_t seed) : node_(node), rng_(seed) {
    // kubelet's CPU-manager test maps may reuse core ids across sockets (README caveat 3), so
    // a "core" spans NUMA nodes and whole-core allocation cannot stay on one node.
    if (node.num_nodes() > 16) max_cpus_ = 2;
    if (node.cpu.has_value()) {
      for (const auto& [id, cpus] : node.cpu->topology().Cores()) {
        std::set<int> nodes;
        for (int cpu : cpus) nodes.insert(node.cpu->topology().Find(cpu)->numa_id);
        if (nodes.size() > 1) cores_within_numa_ = false;
      }
    }
    for (const auto& [resource, pool] : node.devices.pools) resources_.push_back(resource);
    for (const auto& [id, ns] : node.empty_state.memory.machine_state) {
      for (const auto& [type, table] : ns.memory_map) {
        if (type.starts_with("hugepages-2Mi") && table.free >= 8 * kMi) hugepages_2m_ = true;
      }
    }
  }

  void Run(int steps) {
    AllocationState state = node_.empty_state;
    for (int step = 0; step < steps; ++step) {
      if (pods_.empty() || rng_() % 10 < 7) {
        const pod::Pod pod = RandomPod();
        absl::StatusOr<AdmissionResult> r = Admit(node_, state, pod);
        ASSERT_TRUE(r.ok()) << r.status();
        if (r->admitted) {
          CheckAlignment(*r);
          state = r->new_state;
          records_.pods[pod.uid] = ledger::ToPodRecord(pod, *r);
          pods_.emplace(pod.uid, pod);
          ++admitted_;
        } else {
          ASSERT_TRUE(r->new_state == state)
              << "rejected admission changed the state: " << r->reason << ": " << r->message;
          ASSERT_FALSE(r->reason.empty());
          ++rejected_;
        }
      } else {
        auto it = pods_.begin();
        std::advance(it, static_cast<long>(rng_() % pods_.size()));
        state = Release(node_, state, it->first);
        records_.pods.erase(it->first);
        pods_.erase(it);
      }
      CheckState(state);
      if (::testing::Test::HasFatalFailure()) return;
    }
    absl::StatusOr<AllocationState> restored = RestoreAllocationState(node_, records_);
    ASSERT_TRUE(restored.ok()) << restored.status();
    const AllocationState durable = Durable(state);
    EXPECT_EQ(restored->cpu, durable.cpu);
    EXPECT_EQ(restored->devices, durable.devices);
    EXPECT_EQ(restored->memory.assignments, durable.memory.assignments);
    for (const auto& [uid, pod] : pods_) state = Release(node_, state, uid);
    EXPECT_TRUE(state == node_.empty_state) << "release did not give everything back";
  }

  int admitted() const { return admitted_; }
  int rejected() const { return rejected_; }

 private:
  std::string Cpu(bool guaranteed) {
    if (!guaranteed || rng_() % 5 == 0) return "1500m";
    return std::to_string(1 + rng_() % max_cpus_);
  }

  pod::Container RandomContainer(const std::string& name, bool guaranteed, bool sidecar) {
    std::map<std::string, std::string> r;
    r["cpu"] = Cpu(guaranteed);
    if (guaranteed) r["memory"] = std::to_string(64 * (1 + rng_() % 8)) + "Mi";
    if (guaranteed && hugepages_2m_ && rng_() % 3 == 0) r["hugepages-2Mi"] = "4Mi";
    for (const std::string& resource : resources_) {
      if (rng_() % 3 == 0) r[resource] = std::to_string(1 + rng_() % 2);
    }
    return Ctr(name, r, sidecar);
  }

  pod::Pod RandomPod() {
    const bool guaranteed = rng_() % 4 != 0;
    std::vector<pod::Container> init;
    if (rng_() % 3 == 0) init.push_back(RandomContainer("init", guaranteed, false));
    if (rng_() % 5 == 0) init.push_back(RandomContainer("sidecar", guaranteed, true));
    std::vector<pod::Container> apps = {RandomContainer("a0", guaranteed, false)};
    if (rng_() % 2 == 0) apps.push_back(RandomContainer("a1", guaranteed, false));
    return Pod("pod" + std::to_string(next_uid_++), apps, init);
  }

  void CheckAlignment(const AdmissionResult& r) {
    if (r.explanation.policy != hints::Policy::kSingleNumaNode) return;
    const topology::Topology& machine = *node_.topology;
    for (const state::ContainerRecord& c : r.containers) {
      if (c.numa_affinity.empty()) {
        // Nil hint: either a one-node machine, or no resource of the container had a
        // preference (so nothing aligned was allocated).
        if (node_.num_nodes() > 1) {
          EXPECT_FALSE(c.exclusive) << c.name;
          EXPECT_TRUE(state::MemoryNodes(c).empty()) << c.name;
        }
        continue;
      }
      ASSERT_EQ(c.numa_affinity.size(), 1U) << c.name;
      const int n = c.numa_affinity[0];
      if (c.exclusive && cores_within_numa_) {
        EXPECT_TRUE(c.cpus.IsSubsetOf(machine.FindNuma(n)->cpus))
            << c.name << " cpus " << c.cpus.ToString() << " not on node " << n;
      }
      for (int m : state::MemoryNodes(c)) EXPECT_EQ(m, n) << c.name << " memory";
      for (const auto& [resource, ids] : c.devices) {
        const device::DevicePool* pool = node_.devices.Find(resource);
        for (const std::string& id : ids) {
          const device::Device* d = pool->Find(id);
          if (d->numa_nodes.empty()) continue;
          EXPECT_TRUE(std::find(d->numa_nodes.begin(), d->numa_nodes.end(), n) !=
                      d->numa_nodes.end())
              << c.name << " device " << id << " not on node " << n;
        }
      }
    }
  }

  static std::string Dump(const AllocationState& state) {
    std::string out = "pool " + state.cpu.default_cpu_set.ToString();
    for (const auto& [uid, containers] : state.cpu.assignments) {
      for (const auto& [name, cpus] : containers)
        out += " " + uid + "/" + name + "=" + cpus.ToString();
    }
    for (const auto& [uid, cpus] : state.cpu.cpus_to_reuse)
      out += " reuse " + uid + "=" + cpus.ToString();
    return out;
  }

  void CheckState(const AllocationState& state) {
    // CPUs.
    std::map<int, std::string> cpu_owner;
    CpuSet exclusive;
    for (const auto& [uid, containers] : state.cpu.assignments) {
      for (const auto& [name, cpus] : containers) {
        for (int cpu : cpus) {
          auto [it, inserted] = cpu_owner.emplace(cpu, uid);
          ASSERT_TRUE(inserted || it->second == uid)
              << "CPU " << cpu << " given twice: " << it->second << " and " << uid << "/" << name
              << " " << cpus.ToString() << " " << Dump(state);
        }
        exclusive = exclusive.Union(cpus);
      }
    }
    if (node_.cpu.has_value()) {
      ASSERT_FALSE(exclusive.Intersects(node_.cpu->reserved())) << "reserved CPU given";
    }
    ASSERT_FALSE(exclusive.Intersects(state.cpu.default_cpu_set));
    ASSERT_EQ(exclusive.Union(state.cpu.default_cpu_set), node_.empty_state.cpu.default_cpu_set);
    // Devices.
    for (const std::string& resource : resources_) {
      std::map<std::string, std::string> owner;
      for (const auto& [uid, containers] : state.devices.pods) {
        for (const auto& [name, per_resource] : containers) {
          auto it = per_resource.find(resource);
          if (it == per_resource.end()) continue;
          for (const std::string& id : it->second) {
            auto [o, inserted] = owner.emplace(id, uid);
            ASSERT_TRUE(inserted || o->second == uid) << resource << " " << id << " given twice";
          }
        }
      }
    }
    // Memory.
    std::map<std::string, uint64_t> reserved;
    for (const auto& [id, ns] : state.memory.machine_state) {
      for (const auto& [type, t] : ns.memory_map) {
        ASSERT_EQ(t.reserved + t.free, t.allocatable) << "node " << id << " " << type;
        reserved[type] += t.reserved;
      }
    }
    std::map<std::string, uint64_t> blocks;
    for (const auto& [uid, containers] : state.memory.assignments) {
      for (const auto& [name, list] : containers) {
        for (const memory::Block& b : list) blocks[b.type] += b.size;
      }
    }
    for (const auto& [type, bytes] : reserved) {
      if (bytes == 0 && !blocks.contains(type)) continue;
      ASSERT_EQ(bytes, blocks[type]) << type << " reserved differs from the blocks";
    }
  }

  const NodePolicy& node_;
  std::mt19937 rng_;
  std::vector<std::string> resources_;
  bool hugepages_2m_ = false;
  bool cores_within_numa_ = true;
  // On machines above 16 NUMA nodes containers ask for at most 2 CPUs: a pod-scope total that
  // spans k nodes has C(N, k) minimal CPU masks (C(64, 3) = 41,664 on the Altix), which takes
  // the merge seconds in a Debug build. Speed is the benchmark's concern (docs/performance.md).
  int max_cpus_ = 4;
  std::map<std::string, pod::Pod> pods_;
  state::State records_;
  int next_uid_ = 0;
  int admitted_ = 0;
  int rejected_ = 0;
};

// The hwloc XML files of `dir` (not recursive).
std::vector<std::filesystem::path> XmlFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".xml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Streams under single-numa-node (the alignment property) and one other policy, alternating
// scopes, on every machine of `dir`. Returns the number of machines.
int RunCorpus(const std::filesystem::path& dir, int steps) {
  const std::vector<std::string> policies = {"best-effort", "restricted"};
  int machines = 0;
  int admitted = 0;
  int rejected = 0;
  uint32_t seed = 1;
  for (const std::filesystem::path& file : XmlFiles(dir)) {
    absl::StatusOr<topology::Topology> machine =
        topology::LoadTopology(topology::TopologySource::Xml(file.string()));
    EXPECT_TRUE(machine.ok()) << machine.status();
    if (!machine.ok()) continue;
    ++machines;
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"single-numa-node", machines % 2 == 0 ? "pod" : "container"},
        {policies[machines % 2], machines % 2 == 0 ? "container" : "pod"}};
    for (const auto& [policy, scope] : runs) {
      SCOPED_TRACE(file.filename().string() + " " + policy + " " + scope);
      absl::StatusOr<NodePolicy> node =
          BuildNodePolicy(CorpusConfig(*machine, policy, scope), *machine);
      EXPECT_TRUE(node.ok()) << node.status();
      if (!node.ok()) continue;
      Stream stream(*node, seed++);
      stream.Run(steps);
      // TOPOLOGYD_ADMISSION_KEEP_GOING=1: report every failing machine, not only the first.
      if (::testing::Test::HasFailure() &&
          std::getenv("TOPOLOGYD_ADMISSION_KEEP_GOING") == nullptr) {
        return machines;
      }
      admitted += stream.admitted();
      rejected += stream.rejected();
    }
  }
  EXPECT_GT(admitted, 0);
  std::cout << dir << ": " << machines << " machines, " << admitted << " pods admitted, "
            << rejected << " rejected\n";
  return machines;
}

int Steps() {
  const char* env = std::getenv("TOPOLOGYD_ADMISSION_STEPS");
  return env != nullptr ? std::atoi(env) : 24;
}

// The real machines (29 captures and one QEMU guest).
TEST(AdmissionPropertyTest, SharedTopologies) {
  if (!std::filesystem::is_directory(TOPOLOGYD_SHARED_TOPOLOGIES)) {
    CORPUS_SKIP_OR_FAIL() << "shared topologies not found at " << TOPOLOGYD_SHARED_TOPOLOGIES;
  }
  EXPECT_GE(RunCorpus(TOPOLOGYD_SHARED_TOPOLOGIES, Steps()), 30);
}

// kubelet's CPU-manager test maps written as hwloc XML.
TEST(AdmissionPropertyTest, KubeletTestTopologies) {
  const std::filesystem::path dir =
      std::filesystem::path(TOPOLOGYD_SHARED_TOPOLOGIES) / "kubelet-test";
  if (!std::filesystem::is_directory(dir)) {
    CORPUS_SKIP_OR_FAIL() << "kubelet test topologies not found at " << dir;
  }
  EXPECT_GE(RunCorpus(dir, Steps()), 1);
}

}  // namespace
}  // namespace topologyd::admission
