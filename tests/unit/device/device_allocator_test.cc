// Device allocation tests (docs/admission.md, "Devices: Allocation"). The alignment cases
// transcribe kubelet's devicemanager TestTopologyAlignedAllocation (without the plugin
// GetPreferredAllocation hook, which topologyd does not have).
#include "lib/device/device_allocator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/unit/device/device_test_util.h"

namespace topologyd::device {
namespace {

using namespace ::topologyd::device::testing;  // NOLINT
using ::testing::HasSubstr;

std::map<int, int> Alignment(const DevicePool& pool, const std::vector<std::string>& ids) {
  std::map<int, int> out;
  for (const std::string& id : ids) {
    const Device* d = pool.Find(id);
    if (d != nullptr && !d->numa_nodes.empty()) out[d->numa_nodes[0]]++;
  }
  return out;
}

TEST(DeviceAllocatorTest, KubeletTopologyAlignedAllocation) {
  struct Case {
    const char* description;
    int request;
    std::vector<Device> devices;
    std::vector<int> hint;
    std::map<int, int> want;
  };
  std::vector<Device> eight;
  for (int i = 1; i <= 8; ++i) eight.push_back(Dev("Dev" + std::to_string(i), {(i - 1) % 4}));
  std::vector<Device> six;
  for (int i = 1; i <= 6; ++i) six.push_back(Dev("Dev" + std::to_string(i), {(i - 1) % 2}));
  std::vector<Device> four(six.begin(), six.begin() + 4);
  const Case cases[] = {
      {"Single Request, no alignment", 1, {Dev("Dev1"), Dev("Dev2")}, {0, 1}, {}},
      {"Request for 1, partial alignment", 1, {Dev("Dev1"), Dev("Dev2", {1})}, {1}, {{1, 1}}},
      {"Single Request, socket 0", 1, {Dev("Dev1", {0}), Dev("Dev2", {1})}, {0}, {{0, 1}}},
      {"Single Request, socket 1", 1, {Dev("Dev1", {0}), Dev("Dev2", {1})}, {1}, {{1, 1}}},
      {"Request for 2, socket 0", 2, four, {0}, {{0, 2}}},
      {"Request for 2, socket 1", 2, four, {1}, {{1, 2}}},
      {"Request for 4, unsatisfiable, prefer socket 0", 4, six, {0}, {{0, 3}, {1, 1}}},
      {"Request for 4, unsatisfiable, prefer socket 1", 4, six, {1}, {{0, 1}, {1, 3}}},
      {"Request for 4, multisocket", 4, eight, {1, 3}, {{1, 2}, {3, 2}}},
  };
  for (const Case& c : cases) {
    const DeviceInventory inv = Inventory(4, {Pool("resource", c.devices)});
    const pod::Pod pod = Pod("podUID", {Ctr("containerName", {{"resource", c.request}})});
    auto next = Allocate(inv, {}, pod, "containerName", H(c.hint, true));
    ASSERT_TRUE(next.ok()) << c.description << ": " << next.status();
    const auto ids = ContainerDeviceIds(*next, "podUID", "containerName", "resource");
    EXPECT_EQ(ids.size(), static_cast<size_t>(c.request)) << c.description;
    EXPECT_EQ(Alignment(*inv.Find("resource"), ids), c.want) << c.description;
  }
}

TEST(DeviceAllocatorTest, NilAffinityTakesPoolOrder) {
  const DeviceInventory inv =
      Inventory(2, {Pool("a.com/x", {Dev("b", {1}), Dev("a", {1}), Dev("c", {0})})});
  const pod::Pod pod = Pod("p", {Ctr("c", {{"a.com/x", 2}})});
  auto next = Allocate(inv, {}, pod, "c", hints::TopologyHint{});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(ContainerDeviceIds(*next, "p", "c", "a.com/x"), (std::vector<std::string>{"a", "b"}));
}

TEST(DeviceAllocatorTest, KubeletErrors) {
  const pod::Pod pod = Pod("p", {Ctr("c", {{"a.com/x", 3}})});
  {
    // Step 2: a registered resource without healthy devices.
    const DeviceInventory inv = Inventory(2, {Pool("a.com/x", {})});
    auto r = Allocate(inv, {}, pod, "c", H({0}, true));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(std::string(r.status().message()),
              "no healthy devices present; cannot allocate unhealthy devices a.com/x");
  }
  const DeviceInventory inv = Inventory(2, {Pool("a.com/x", {Dev("d0", {0}), Dev("d1", {1})})});
  {
    // Step 4: too few free devices.
    auto r = Allocate(inv, {}, pod, "c", H({0}, true));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(std::string(r.status().message()),
              "requested number of devices unavailable for a.com/x. Requested: 3, Available: 2");
  }
  {
    // Step 1: held devices must match the request.
    DeviceState s;
    s.pods["p"]["c"]["a.com/x"] = {"d0"};
    auto r = Allocate(inv, s, pod, "c", H({0}, true));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("pod \"p\" container \"c\" changed request for resource \"a.com/x\" "
                          "from 1 to 3"));
  }
  {
    // Steps 1/2: already allocated -> unchanged; held device gone from the pool -> error.
    const pod::Pod one = Pod("p", {Ctr("c", {{"a.com/x", 1}})});
    DeviceState s;
    s.pods["p"]["c"]["a.com/x"] = {"d1"};
    auto r = Allocate(inv, s, one, "c", H({0}, true));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, s);
    s.pods["p"]["c"]["a.com/x"] = {"gone"};
    EXPECT_THAT(std::string(Allocate(inv, s, one, "c", H({0}, true)).status().message()),
                HasSubstr("previously allocated devices are no longer healthy"));
  }
}

TEST(DeviceAllocatorTest, AppContainerReusesInitContainerDevices) {
  // Step 3: reusable devices are taken first, even outside the affinity.
  const DeviceInventory inv =
      Inventory(2, {Pool("a.com/x", {Dev("d0", {0}), Dev("d1", {1}), Dev("d2", {1})})});
  const pod::Pod pod = Pod("p", {Ctr("app", {{"a.com/x", 2}})}, {Ctr("init", {{"a.com/x", 1}})});
  auto s1 = Allocate(inv, {}, pod, "init", H({0}, true));
  ASSERT_TRUE(s1.ok());
  EXPECT_EQ(ContainerDeviceIds(*s1, "p", "init", "a.com/x"), std::vector<std::string>{"d0"});
  auto s2 = Allocate(inv, *s1, pod, "app", H({1}, true));
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(ContainerDeviceIds(*s2, "p", "app", "a.com/x"), (std::vector<std::string>{"d0", "d1"}));
  // Releasing the init container keeps d0 in use: the app container holds it.
  const DeviceState s3 = ReleaseContainer(*s2, "p", "init");
  EXPECT_EQ(DevicesInUse(s3, "a.com/x"), (std::set<std::string>{"d0", "d1"}));
  EXPECT_TRUE(ReleasePod(*s2, "p").pods.empty());
}

TEST(DeviceAllocatorTest, AllOrNothingAcrossResources) {
  const DeviceInventory inv =
      Inventory(1, {Pool("a.com/x", {Dev("x0", {0})}), Pool("b.com/y", {Dev("y0", {0})})});
  const pod::Pod pod = Pod("p", {Ctr("c", {{"a.com/x", 1}, {"b.com/y", 2}})});
  auto r = Allocate(inv, {}, pod, "c", H({0}, true));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace topologyd::device
