// Device hint tests. Each case names the rule of kubelet's Device Manager it checks
// (docs/admission.md, "Devices: Hints"); the "kubelet:" cases transcribe the data of kubelet's
// devicemanager/topology_hints_test.go (getCommonTestCases / getPodScopeTestCases, NUMA nodes
// {0,1}); a randomized test compares against a direct transcription of kubelet's 2^N loop.
#include "lib/device/device_hints.h"

#include <random>

#include "gtest/gtest.h"

#include "tests/unit/device/device_test_util.h"

namespace topologyd::device {
namespace {

using namespace ::topologyd::device::testing;  // NOLINT
using hints::TopologyHint;

std::vector<TopologyHint> ContainerHints(const DeviceInventory& inv, const DeviceState& state,
                                         const pod::Pod& pod, const std::string& resource,
                                         bool* is_nil = nullptr) {
  auto h = GetContainerTopologyHints(inv, state, pod, pod.containers[0].name);
  EXPECT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->has_value());
  const auto& list = (*h)->at(resource);
  if (is_nil != nullptr) *is_nil = !list.has_value();
  if (!list.has_value()) return {};
  return Expand(*list);
}

struct KubeletCase {
  const char* description;
  std::vector<DevicePool> pools;
  Counts limits;
  DeviceState allocated;
  std::map<std::string, std::optional<std::vector<TopologyHint>>> want;
};

TEST(DeviceHintsTest, KubeletCommonCases) {
  DeviceState other_container;  // "forced cross-NUMA": another container holds Dev1, Dev2
  other_container.pods["fakePod"]["fakeOtherContainer"]["testdevice"] = {"Dev1", "Dev2"};
  DeviceState all_allocated;
  all_allocated.pods["fakePod"]["fakeContainer"]["testdevice"] = {"Dev1", "Dev2"};
  DeviceState four_allocated;
  four_allocated.pods["fakePod"]["fakeContainer"]["testdevice"] = {"Dev1", "Dev2", "Dev3", "Dev4"};

  const std::vector<Device> two_per_socket = {Dev("Dev1", {0}), Dev("Dev2", {1}), Dev("Dev3", {0}),
                                              Dev("Dev4", {1})};
  const std::vector<Device> two_per_socket_b = {Dev("Dev1", {0}), Dev("Dev2", {0}),
                                                Dev("Dev3", {1}), Dev("Dev4", {1})};
  KubeletCase cases[] = {
      {"Single Request, no alignment (rule 1: no topology -> nil)",
       {Pool("testdevice", {Dev("Dev1"), Dev("Dev2")})},
       {{"testdevice", 1}},
       {},
       {{"testdevice", std::nullopt}}},
      {"Single Request, only one with alignment (devices without topology never count)",
       {Pool("testdevice", {Dev("Dev1"), Dev("Dev2", {1})})},
       {{"testdevice", 1}},
       {},
       {{"testdevice", std::vector{H({1}, true), H({0, 1}, false)}}}},
      {"Single Request, one device per socket",
       {Pool("testdevice", {Dev("Dev1", {0}), Dev("Dev2", {1})})},
       {{"testdevice", 1}},
       {},
       {{"testdevice", std::vector{H({0}, true), H({1}, true), H({0, 1}, false)}}}},
      {"Request for 2, one device per socket",
       {Pool("testdevice", {Dev("Dev1", {0}), Dev("Dev2", {1})})},
       {{"testdevice", 2}},
       {},
       {{"testdevice", std::vector{H({0, 1}, true)}}}},
      {"Request for 2, 2 devices per socket",
       {Pool("testdevice", two_per_socket)},
       {{"testdevice", 2}},
       {},
       {{"testdevice", std::vector{H({0}, true), H({1}, true), H({0, 1}, false)}}}},
      {"Request for 2, optimal on 1 NUMA node, forced cross-NUMA (preferred uses capacity)",
       {Pool("testdevice", two_per_socket)},
       {{"testdevice", 2}},
       other_container,
       {{"testdevice", std::vector{H({0, 1}, false)}}}},
      {"2 device types, mixed configuration",
       {Pool("testdevice1", two_per_socket), Pool("testdevice2", {Dev("Dev1", {0})})},
       {{"testdevice1", 2}, {"testdevice2", 1}},
       {},
       {{"testdevice1", std::vector{H({0}, true), H({1}, true), H({0, 1}, false)}},
        {"testdevice2", std::vector{H({0}, true), H({0, 1}, false)}}}},
      {"Single device type, more requested than available (rule 3 -> [])",
       {Pool("testdevice", two_per_socket_b)},
       {{"testdevice", 6}},
       {},
       {{"testdevice", std::vector<TopologyHint>{}}}},
      {"Single device type, all already allocated to container (rule 2: regenerate)",
       {Pool("testdevice", {Dev("Dev1", {0}), Dev("Dev2", {0})})},
       {{"testdevice", 2}},
       all_allocated,
       {{"testdevice", std::vector{H({0}, true), H({0, 1}, false)}}}},
      {"Single device type, less already allocated to container than requested (rule 2 -> [])",
       {Pool("testdevice", two_per_socket_b)},
       {{"testdevice", 4}},
       all_allocated,
       {{"testdevice", std::vector<TopologyHint>{}}}},
      {"Single device type, more already allocated to container than requested (rule 2 -> [])",
       {Pool("testdevice", two_per_socket_b)},
       {{"testdevice", 2}},
       four_allocated,
       {{"testdevice", std::vector<TopologyHint>{}}}},
  };
  for (KubeletCase& c : cases) {
    const DeviceInventory inv = Inventory(2, c.pools);
    std::vector<pod::Container> containers = {Ctr("fakeContainer", c.limits)};
    if (!c.allocated.pods.empty() && c.allocated.pods["fakePod"].contains("fakeOtherContainer")) {
      containers.push_back(Ctr("fakeOtherContainer", {{"testdevice", 2}}));
    }
    const pod::Pod pod = Pod("fakePod", containers);
    for (const auto& [resource, want] : c.want) {
      bool is_nil = false;
      const auto got = ContainerHints(inv, c.allocated, pod, resource, &is_nil);
      EXPECT_EQ(is_nil, !want.has_value()) << c.description;
      if (want) {
        EXPECT_EQ(got, *want) << c.description << " / " << resource;
      }
    }
  }
}

TEST(DeviceHintsTest, KubeletPodScopeCases) {
  // getPodScopeTestCases: effective pod limits; unregistered resources are ignored.
  const std::vector<Device> devs = {Dev("Dev1", {0}), Dev("Dev2", {0}), Dev("Dev3", {1}),
                                    Dev("Dev4", {1})};
  const DeviceInventory inv = Inventory(2, {Pool("testdevice1", devs), Pool("testdevice2", devs)});
  const auto both = std::vector{H({0}, true), H({1}, true), H({0, 1}, false)};
  {
    const pod::Pod pod =
        Pod("fakePod", {Ctr("c1", {{"testdevice1", 2}}), Ctr("c2", {{"testdevice2", 2}}),
                        Ctr("c3", {{"notRegistered", 2}})});
    auto h = GetPodTopologyHints(inv, {}, pod);
    ASSERT_TRUE(h.ok());
    ASSERT_EQ((*h)->size(), 2U);
    EXPECT_EQ(Expand(*(*h)->at("testdevice1")), both);
    EXPECT_EQ(Expand(*(*h)->at("testdevice2")), both);
  }
  {
    // init containers {1,1} and {1,2}, apps {1,1} and {1,1}: effective 2 and 2.
    const pod::Pod pod = Pod(
        "fakePod",
        {Ctr("c1", {{"testdevice1", 1}, {"testdevice2", 1}}),
         Ctr("c2", {{"testdevice1", 1}, {"testdevice2", 1}}), Ctr("c3", {{"notRegistered", 1}})},
        {Ctr("i1", {{"testdevice1", 1}, {"testdevice2", 1}}),
         Ctr("i2", {{"testdevice1", 1}, {"testdevice2", 2}})});
    auto h = GetPodTopologyHints(inv, {}, pod);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(Expand(*(*h)->at("testdevice1")), both);
    EXPECT_EQ(Expand(*(*h)->at("testdevice2")), both);
  }
}

TEST(DeviceHintsTest, NoDeviceResourceGivesEmptyMap) {
  // A container without configured device resources: an empty map ("no preference at all").
  const DeviceInventory inv = Inventory(2, {Pool("a.com/x", {Dev("d", {0})})});
  auto h = GetContainerTopologyHints(inv, {}, Pod("p", {Ctr("c", {{"cpu", 1}})}), "c");
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->has_value());
  EXPECT_TRUE((*h)->empty());
  EXPECT_EQ(GetContainerTopologyHints(inv, {}, Pod("p", {BestEffort("c")}), "zz").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(DeviceHintsTest, MultiNodeDeviceCountsForEachNode) {
  // A device on {0,1} satisfies masks {0} and {1}; both single-node hints are
  // preferred.
  const DeviceInventory inv = Inventory(4, {Pool("a.com/x", {Dev("gpu", {0, 1})})});
  const pod::Pod pod = Pod("p", {Ctr("c", {{"a.com/x", 1}})});
  auto h = GetContainerTopologyHints(inv, {}, pod, "c");
  ASSERT_TRUE(h.ok());
  const hints::ResourceHints& rh = *(*h)->at("a.com/x");
  EXPECT_TRUE(rh.upward_closed);
  EXPECT_EQ(rh.hints, (std::vector{H({0}, true), H({1}, true)}));
  EXPECT_EQ(rh.universe, hints::NumaMask(0xF));
}

TEST(DeviceHintsTest, ReusableInitContainerDevicesMustTouchTheMask) {
  // Reuse: the app container reuses the init container's device on node 1; masks
  // without node 1 are skipped, the reusable device counts.
  const DeviceInventory inv =
      Inventory(2, {Pool("a.com/x", {Dev("d0", {0}), Dev("d1", {1}), Dev("d2", {0})})});
  const pod::Pod pod = Pod("p", {Ctr("app", {{"a.com/x", 1}})}, {Ctr("init", {{"a.com/x", 1}})});
  DeviceState state;
  state.pods["p"]["init"]["a.com/x"] = {"d1"};
  EXPECT_EQ(ReusableDevices(state, pod, pod.containers[0], "a.com/x"),
            (std::set<std::string>{"d1"}));
  auto h = GetContainerTopologyHints(inv, state, pod, "app");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(Expand(*(*h)->at("a.com/x")), (std::vector{H({1}, true), H({0, 1}, false)}));

  // Once an app container took it, it is no longer reusable by another one.
  const pod::Pod two_apps = Pod("p", {Ctr("app", {{"a.com/x", 1}}), Ctr("app2", {{"a.com/x", 1}})},
                                {Ctr("init", {{"a.com/x", 1}})});
  state.pods["p"]["app"]["a.com/x"] = {"d1"};
  EXPECT_TRUE(ReusableDevices(state, two_apps, two_apps.containers[1], "a.com/x").empty());
  // A sidecar's devices are never reusable.
  const pod::Pod with_sidecar =
      Pod("p", {Ctr("app", {{"a.com/x", 1}})}, {Ctr("init", {{"a.com/x", 1}}, true)});
  DeviceState s2;
  s2.pods["p"]["init"]["a.com/x"] = {"d1"};
  EXPECT_TRUE(ReusableDevices(s2, with_sidecar, with_sidecar.containers[0], "a.com/x").empty());
}

TEST(DeviceHintsTest, ContainersThatRunTogetherNeverShareAReusableDevice) {
  // Pod: init "i0" (regular), sidecar "side", init "i1" (regular), app "app". i0 held d0 and
  // i1 took it over (they never run together). When "side" is released and the pod admitted
  // again, the replayed reuse would offer it d0 while i1 holds it, but a sidecar runs with
  // every later container: d0 is not reusable by it.
  const pod::Pod pod = Pod("p", {Ctr("app", {{"a.com/x", 1}})},
                           {Ctr("i0", {{"a.com/x", 1}}), Ctr("side", {{"a.com/x", 1}}, true),
                            Ctr("i1", {{"a.com/x", 1}})});
  DeviceState state;
  state.pods["p"]["i0"]["a.com/x"] = {"d0"};
  state.pods["p"]["i1"]["a.com/x"] = {"d0"};
  EXPECT_TRUE(ReusableDevices(state, pod, pod.init_containers[1], "a.com/x").empty());
  // A regular init container after i0 may take d0 over (i1 would, on a first admission).
  state.pods["p"].erase("i1");
  EXPECT_EQ(ReusableDevices(state, pod, pod.init_containers[2], "a.com/x"),
            (std::set<std::string>{"d0"}));
  // An app container whose kept sibling app holds the init container's device does not get it.
  state.pods["p"]["app2"]["a.com/x"] = {"d0"};
  const pod::Pod two_apps = Pod("p", {Ctr("app", {{"a.com/x", 1}}), Ctr("app2", {{"a.com/x", 1}})},
                                {Ctr("i0", {{"a.com/x", 1}})});
  EXPECT_TRUE(ReusableDevices(state, two_apps, two_apps.containers[0], "a.com/x").empty());
}

TEST(DeviceHintsTest, ReusableDevicesCountTowardsTheRequestWhenNothingIsFree) {
  // The request is checked against available plus reusable devices. Every device is
  // in use (d0 by another pod, d1 by this pod's init container), yet the app container can
  // have d1.
  const DeviceInventory inv = Inventory(2, {Pool("a.com/x", {Dev("d0", {0}), Dev("d1", {1})})});
  const pod::Pod pod = Pod("p", {Ctr("app", {{"a.com/x", 1}})}, {Ctr("init", {{"a.com/x", 1}})});
  DeviceState state;
  state.pods["other"]["c"]["a.com/x"] = {"d0"};
  state.pods["p"]["init"]["a.com/x"] = {"d1"};
  auto h = GetContainerTopologyHints(inv, state, pod, "app");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(Expand(*(*h)->at("a.com/x")), (std::vector{H({1}, true), H({0, 1}, false)}));
}

// A direct transcription of kubelet's generateDeviceTopologyHints loop (all 2^N masks), used
// as the reference for the upward-closed form.
std::vector<TopologyHint> KubeletReference(const DevicePool& pool, int numa_count,
                                           const std::vector<std::string>& available,
                                           const std::vector<std::string>& reusable,
                                           int64_t request) {
  int min_size = numa_count;
  std::vector<TopologyHint> out;
  std::vector<uint64_t> masks;
  for (uint64_t m = 1; m < (uint64_t{1} << numa_count); ++m) masks.push_back(m);
  std::sort(masks.begin(), masks.end(), [](uint64_t a, uint64_t b) {
    const int ca = std::popcount(a), cb = std::popcount(b);
    if (ca != cb) return ca < cb;
    return hints::NumaMask(a).Ids() < hints::NumaMask(b).Ids();
  });
  for (uint64_t m : masks) {
    int64_t in_mask = 0;
    for (const Device& d : pool.devices) in_mask += (d.numa_mask.bits() & m) != 0;
    if (in_mask >= request && std::popcount(m) < min_size) min_size = std::popcount(m);
    int64_t matching = 0;
    bool skip = false;
    for (const std::string& id : reusable) {
      const Device* d = pool.Find(id);
      if (d->numa_nodes.empty()) continue;
      if ((d->numa_mask.bits() & m) == 0) {
        skip = true;
        break;
      }
      ++matching;
    }
    if (skip) continue;
    for (const std::string& id : available) matching += (pool.Find(id)->numa_mask.bits() & m) != 0;
    if (matching < request) continue;
    out.push_back({hints::NumaMask(m), false});
  }
  for (TopologyHint& h : out) h.preferred = h.affinity->Count() == min_size;
  return out;
}

TEST(DeviceHintsTest, MatchesKubeletEnumerationOnRandomPools) {
  // As a whole: the expanded upward-closed answer equals kubelet's 2^N list.
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 400; ++iter) {
    const int numa = 1 + static_cast<int>(rng() % 6);
    std::vector<Device> devices;
    const int count = static_cast<int>(rng() % 9);
    for (int i = 0; i < count; ++i) {
      std::vector<int> nodes;
      const int kind = static_cast<int>(rng() % 6);
      if (kind > 0) nodes.push_back(static_cast<int>(rng() % numa));
      if (kind == 5) nodes.push_back(static_cast<int>(rng() % numa));
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      devices.push_back(Dev("d" + std::to_string(i), nodes));
    }
    DevicePool pool = Pool("a.com/x", devices);
    std::sort(pool.devices.begin(), pool.devices.end(),
              [](const Device& a, const Device& b) { return a.id < b.id; });
    std::vector<std::string> available, reusable;
    for (const Device& d : pool.devices) {
      const int r = static_cast<int>(rng() % 4);
      if (r <= 1) available.push_back(d.id);
      if (r == 2) reusable.push_back(d.id);
    }
    const int64_t request = static_cast<int64_t>(rng() % 5);
    auto got = GenerateDeviceHints(pool, numa, available, reusable, request);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Expand(*got), KubeletReference(pool, numa, available, reusable, request))
        << "iteration " << iter;
  }
}

TEST(DeviceHintsTest, StaysSmallOnManyNumaNodes) {
  // 64 NUMA nodes, one GPU on each of 8: a request of 2 yields C(8,2) minimal masks, not 2^64.
  std::vector<Device> devices;
  for (int i = 0; i < 8; ++i) devices.push_back(Dev("g" + std::to_string(i), {i * 8}));
  const DevicePool pool = Pool("a.com/x", devices);
  std::vector<std::string> ids;
  for (const Device& d : pool.devices) ids.push_back(d.id);
  auto got = GenerateDeviceHints(pool, 64, ids, {}, 2);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->upward_closed);
  EXPECT_EQ(got->hints.size(), 28U);
  for (const TopologyHint& h : got->hints) EXPECT_TRUE(h.preferred);
  EXPECT_EQ(got->universe, hints::NumaMask(~uint64_t{0}));
}

}  // namespace
}  // namespace topologyd::device
