// Randomized invariants of the device provider (hints and allocation) on constructed and, when the
// shared hwloc topologies are present, real machines: along random admit/release streams no
// device is ever held by two pods, every container holds exactly what it asked for, hints stay
// minimal, and releasing every pod returns every device.
#include <filesystem>
#include <random>

#include "gtest/gtest.h"

#include "lib/device/device_allocator.h"
#include "lib/device/device_hints.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/require_component.h"
#include "tests/unit/device/device_test_util.h"

namespace topologyd::device {
namespace {

using namespace ::topologyd::device::testing;  // NOLINT

void CheckHints(const hints::ProviderHints& h) {
  ASSERT_TRUE(h.has_value());
  for (const auto& [resource, list] : *h) {
    if (!list || !list->upward_closed) continue;
    for (size_t i = 0; i < list->hints.size(); ++i) {
      const uint64_t a = list->hints[i].affinity->bits();
      ASSERT_NE(a, 0U);
      ASSERT_EQ(a & ~list->universe.bits(), 0U);
      for (size_t j = 0; j < list->hints.size(); ++j) {
        const uint64_t b = list->hints[j].affinity->bits();
        if (i != j) {
          ASSERT_NE(a & b, a) << "hint " << i << " contains hint " << j;
        }
      }
    }
  }
}

void CheckState(const DeviceInventory& inv, const DeviceState& state,
                const std::map<std::string, pod::Pod>& pods) {
  for (const auto& [resource, pool] : inv.pools) {
    std::map<std::string, std::string> owner;
    for (const auto& [uid, containers] : state.pods) {
      for (const auto& [name, resources] : containers) {
        auto it = resources.find(resource);
        if (it == resources.end()) continue;
        const pod::Container* c = pod::FindContainer(pods.at(uid), name);
        ASSERT_NE(c, nullptr);
        ASSERT_EQ(static_cast<int64_t>(it->second.size()), c->limits.at(resource).Value());
        for (const std::string& id : it->second) {
          ASSERT_NE(pool.Find(id), nullptr) << id;
          auto [o, inserted] = owner.emplace(id, uid);
          ASSERT_TRUE(inserted || o->second == uid) << id << " held by two pods";
        }
      }
    }
  }
}

void RunStream(const DeviceInventory& inv, uint32_t seed, int steps) {
  std::mt19937 rng(seed);
  std::vector<std::string> resources;
  for (const auto& [name, pool] : inv.pools) resources.push_back(name);
  DeviceState state;
  std::map<std::string, pod::Pod> pods;
  int next_uid = 0;
  for (int step = 0; step < steps; ++step) {
    if (pods.empty() || rng() % 10 < 6) {
      auto ctr = [&](std::string name, bool sidecar) {
        Counts limits;
        for (const std::string& r : resources) {
          if (rng() % 2 == 0) limits.push_back({r, static_cast<int>(rng() % 4)});
        }
        return Ctr(std::move(name), limits, sidecar);
      };
      std::vector<pod::Container> init;
      if (rng() % 3 == 0) init.push_back(ctr("init", rng() % 2 == 0));
      std::vector<pod::Container> apps = {ctr("a0", false)};
      if (rng() % 2 == 0) apps.push_back(ctr("a1", false));
      const pod::Pod pod = Pod("pod" + std::to_string(next_uid++), apps, init);
      DeviceState trial = state;
      bool ok = true;
      std::vector<std::string> order;
      for (const auto& c : pod.init_containers) order.push_back(c.name);
      for (const auto& c : pod.containers) order.push_back(c.name);
      for (const std::string& name : order) {
        auto h = GetContainerTopologyHints(inv, trial, pod, name);
        ASSERT_TRUE(h.ok()) << h.status();
        CheckHints(*h);
        hints::TopologyHint affinity;
        const int choice = static_cast<int>(rng() % 3);
        if (choice == 1 && !(*h)->empty()) {
          const auto& list = (*h)->begin()->second;
          if (list && !list->hints.empty()) affinity = list->hints[rng() % list->hints.size()];
        } else if (choice == 2 && inv.numa_count > 0) {
          affinity.affinity = hints::NumaMask(uint64_t{1} << (rng() % inv.numa_count));
        }
        auto next = Allocate(inv, trial, pod, name, affinity);
        if (!next.ok()) {
          ASSERT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition) << next.status();
          ok = false;
          break;
        }
        trial = *next;
      }
      if (ok) {
        state = trial;
        pods.emplace(pod.uid, pod);
      }
    } else {
      auto it = pods.begin();
      std::advance(it, static_cast<long>(rng() % pods.size()));
      state = ReleasePod(state, it->first);
      pods.erase(it);
    }
    CheckState(inv, state, pods);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (const auto& [uid, pod] : pods) state = ReleasePod(state, uid);
  EXPECT_TRUE(state.pods.empty());
}

TEST(DevicePropertyTest, ConstructedMachine) {
  const DeviceInventory inv = Inventory(
      4, {Pool("a.com/gpu",
               {Dev("g0", {0}), Dev("g1", {0}), Dev("g2", {1}), Dev("g3", {2, 3}), Dev("g4", {3})}),
          Pool("b.com/nic", {Dev("n0", {0}), Dev("n1", {1}), Dev("n2"), Dev("n3", {2})}),
          Pool("c.com/none", {Dev("x0"), Dev("x1")})});
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    RunStream(inv, seed, 200);
    if (HasFatalFailure()) return;
  }
}

TEST(DevicePropertyTest, SharedTopologies) {
  const std::filesystem::path dir = TOPOLOGYD_SHARED_TOPOLOGIES;
  if (!std::filesystem::is_directory(dir)) {
    CORPUS_SKIP_OR_FAIL() << "shared topologies not found at " << dir;
  }
  int tested = 0;
  size_t devices = 0;
  for (const char* file :
       {"intel-2s-sriov-many-vfs.xml", "amd-epyc7742-2s-nps4-4xa100-ib.xml",
        "intel-spr8480-2s-snc4-4xh100.xml", "nvidia-dgx2h-16xv100-nvswitch-trimmed-cpus.xml"}) {
    const std::filesystem::path path = dir / file;
    if (!std::filesystem::exists(path)) continue;
    auto topo = topology::LoadTopology(topology::TopologySource::Xml(path.string()));
    ASSERT_TRUE(topo.ok()) << file << ": " << topo.status();
    PciMatch gpu;
    gpu.class_id = 0x0302;
    PciMatch vga;
    vga.class_id = 0x0300;
    PciMatch vf;
    vf.virtual_functions = true;
    vf.class_id = 0x0200;
    PciMatch nic;
    nic.class_id = 0x0200;
    std::vector<DevicePoolConfig> configs;
    for (auto [name, match] :
         {std::pair{"x.com/gpu", gpu}, {"x.com/vga", vga}, {"x.com/vf", vf}, {"x.com/nic", nic}}) {
      DevicePoolConfig c;
      c.resource_name = name;
      c.pci = match;
      configs.push_back(c);
    }
    auto inv = BuildDeviceInventory(configs, *topo, NumaIndexOf(*topo));
    ASSERT_TRUE(inv.ok()) << file << ": " << inv.status();
    for (const auto& [name, pool] : inv->pools) devices += pool.devices.size();
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      SCOPED_TRACE(file);
      RunStream(*inv, seed, 150);
      if (HasFatalFailure()) return;
    }
    ++tested;
  }
  if (tested == 0) CORPUS_SKIP_OR_FAIL() << "none of the chosen topologies is in " << dir;
  EXPECT_GT(devices, 0U) << "the chosen machines should expose GPUs or NICs";
}

}  // namespace
}  // namespace topologyd::device
