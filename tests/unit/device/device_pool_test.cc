// Device pool configuration: PCI matching (incl. SR-IOV virtual functions), explicit devices,
// validation messages.
#include "lib/device/device_pool.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::device {
namespace {

using ::testing::HasSubstr;

topology::Topology TwoNodeTopology() {
  topology::Topology t;
  t.numa_nodes.resize(2);
  t.numa_nodes[0].id = 0;
  t.numa_nodes[1].id = 4;  // sparse OS ids: position 1
  auto pci = [](std::string busid, uint16_t vendor, uint16_t device, uint16_t cls,
                std::vector<int> numa, std::optional<std::string> physfn = std::nullopt) {
    topology::PciDevice d;
    d.busid = std::move(busid);
    d.vendor_id = vendor;
    d.device_id = device;
    d.class_id = cls;
    d.numa_nodes = std::move(numa);
    d.physfn_busid = std::move(physfn);
    return d;
  };
  t.pci_devices = {
      pci("0000:3b:00.0", 0x10de, 0x1db4, 0x0302, {0}),
      pci("0000:af:00.0", 0x10de, 0x1db4, 0x0302, {4}),
      pci("0000:18:00.0", 0x8086, 0x158b, 0x0200, {0}),
      pci("0000:18:02.0", 0x8086, 0x154c, 0x0200, {0}, "0000:18:00.0"),
      pci("0000:18:02.1", 0x8086, 0x154c, 0x0200, {0}, "0000:18:00.0"),
      pci("0000:00:1f.6", 0x8086, 0x15b8, 0x0200, {}),
  };
  return t;
}

// TwoNodeTopology's NUMA index: OS ids 0 and 4 at positions 0 and 1.
hints::NumaIndex TwoNodeIndex() { return hints::NumaIndex({0, 4}); }

DevicePoolConfig PciPool(std::string name, PciMatch match) {
  DevicePoolConfig c;
  c.resource_name = std::move(name);
  c.pci = match;
  return c;
}

TEST(DevicePoolTest, MatchesPciDevicesWithNumaPositions) {
  const auto topo = TwoNodeTopology();
  PciMatch gpu;
  gpu.vendor = 0x10de;
  gpu.class_id = 0x0302;
  PciMatch vf;
  vf.vendor = 0x8086;
  vf.virtual_functions = true;
  PciMatch nic;
  nic.class_id = 0x0200;
  auto inv = BuildDeviceInventory(
      {PciPool("nvidia.com/gpu", gpu), PciPool("intel.com/sriov", vf), PciPool("x.io/nic", nic)},
      topo, TwoNodeIndex());
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->numa_count, 2);
  const DevicePool* gpus = inv->Find("nvidia.com/gpu");
  ASSERT_NE(gpus, nullptr);
  ASSERT_EQ(gpus->devices.size(), 2U);
  EXPECT_EQ(gpus->devices[1].id, "0000:af:00.0");
  EXPECT_EQ(gpus->devices[1].numa_nodes, std::vector<int>{4});
  EXPECT_EQ(gpus->devices[1].numa_mask, hints::NumaMask(0b10));  // position 1
  EXPECT_TRUE(gpus->TopologyAware());
  // Virtual functions only, physical functions only.
  EXPECT_EQ(inv->Find("intel.com/sriov")->devices.size(), 2U);
  const DevicePool* nics = inv->Find("x.io/nic");
  ASSERT_EQ(nics->devices.size(), 2U);  // the PF and the onboard NIC, not the VFs
  EXPECT_EQ(nics->devices[0].id, "0000:00:1f.6");
  EXPECT_TRUE(nics->devices[0].numa_nodes.empty());
  EXPECT_TRUE(inv->IsDeviceResource("x.io/nic"));
  EXPECT_FALSE(inv->IsDeviceResource("cpu"));
}

TEST(DevicePoolTest, ExplicitDevices) {
  DevicePoolConfig c;
  c.resource_name = "example.com/fpga";
  c.devices = {{"fpga-1", {4}}, {"fpga-0", {0, 4}}, {"fpga-2", {}}};
  auto inv = BuildDeviceInventory({c}, TwoNodeTopology(), TwoNodeIndex());
  ASSERT_TRUE(inv.ok()) << inv.status();
  const DevicePool* p = inv->Find("example.com/fpga");
  ASSERT_EQ(p->devices.size(), 3U);
  EXPECT_EQ(p->devices[0].id, "fpga-0");
  EXPECT_EQ(p->devices[0].numa_mask, hints::NumaMask(0b11));
  EXPECT_EQ(p->Find("fpga-2")->numa_mask, hints::NumaMask());
  DevicePoolConfig none;
  none.resource_name = "example.com/none";
  none.devices = {{"n", {}}};
  auto inv2 = BuildDeviceInventory({none}, TwoNodeTopology(), TwoNodeIndex());
  ASSERT_TRUE(inv2.ok());
  EXPECT_FALSE(inv2->Find("example.com/none")->TopologyAware());
}

TEST(DevicePoolTest, ValidationErrors) {
  const auto topo = TwoNodeTopology();
  PciMatch any_nvidia;
  any_nvidia.vendor = 0x10de;
  DevicePoolConfig explicit_bad_numa;
  explicit_bad_numa.resource_name = "a.com/x";
  explicit_bad_numa.devices = {{"x", {1}}};
  DevicePoolConfig explicit_dup;
  explicit_dup.resource_name = "a.com/y";
  explicit_dup.devices = {{"y", {}}, {"y", {}}};
  DevicePoolConfig empty;
  empty.resource_name = "a.com/z";
  DevicePoolConfig bus_clash;
  bus_clash.resource_name = "a.com/w";
  bus_clash.devices = {{"0000:3b:00.0", {0}}};
  struct Case {
    std::vector<DevicePoolConfig> pools;
    const char* message;
  } cases[] = {
      {{PciPool("gpu", any_nvidia)}, "not an extended resource name"},
      {{PciPool("kubernetes.io/gpu", any_nvidia)}, "not an extended resource name"},
      {{PciPool("a.com/g", any_nvidia), PciPool("a.com/g", any_nvidia)}, "configured twice"},
      {{PciPool("a.com/g", PciMatch{})}, "set at least one of vendor, device, class"},
      {{explicit_bad_numa}, "devices[0] (resourceName \"a.com/x\"): device \"x\": NUMA node 1"},
      {{explicit_dup}, "device \"y\" listed twice"},
      {{empty}, "needs `pci` or `devices`"},
      {{PciPool("a.com/g", any_nvidia), bus_clash},
       "devices[1] (resourceName \"a.com/w\"): device \"0000:3b:00.0\" is already in devices[0]"},
  };
  for (const Case& c : cases) {
    const absl::Status s = ValidateDevicePools(c.pools, topo);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

TEST(DevicePoolTest, ResourceNamesAreKubeletExtendedResourceNames) {
  const auto topo = TwoNodeTopology();
  PciMatch any_nvidia;
  any_nvidia.vendor = 0x10de;
  for (const char* bad : {"../x", "./x", "a.com/../x", "a.com/x/y", "/x", "a.com/", "A.com/x",
                          "a_b.com/x", "-a.com/x", "a..com/x", "a.com/-x", "a.com/x.", "a.com/x y",
                          "nvidia.kubernetes.io/gpu", "requests.a.com/x"}) {
    const absl::Status s = ValidateDevicePools({PciPool(bad, any_nvidia)}, topo);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("not an extended resource name")) << bad;
  }
  // The name part is at most 63 characters; the domain leaves room for "requests." (kubelet
  // checks the quota name requests.<domain>/<name>).
  const std::string label(63, 'a');
  const std::string domain_244 = label + "." + label + "." + label + "." + std::string(52, 'b');
  ASSERT_EQ(domain_244.size(), 244U);
  EXPECT_TRUE(ValidateDevicePools({PciPool(domain_244 + "/x", any_nvidia)}, topo).ok());
  EXPECT_FALSE(ValidateDevicePools({PciPool(domain_244 + "b/x", any_nvidia)}, topo).ok());
  EXPECT_TRUE(ValidateDevicePools({PciPool("a.com/" + label, any_nvidia)}, topo).ok());
  EXPECT_FALSE(ValidateDevicePools({PciPool("a.com/" + label + "a", any_nvidia)}, topo).ok());
  for (const char* good : {"nvidia.com/gpu", "intel.com/sriov_netdevice", "a/b", "x-1.io/GPU.v2",
                           "example.com/fpga_0-A"}) {
    EXPECT_TRUE(ValidateDevicePools({PciPool(good, any_nvidia)}, topo).ok()) << good;
  }
}

TEST(DevicePoolTest, PoolIsEitherPciOrExplicit) {
  PciMatch any_nvidia;
  any_nvidia.vendor = 0x10de;
  DevicePoolConfig both = PciPool("a.com/g", any_nvidia);
  both.devices = {{"extra", {0}}};
  const absl::Status s = ValidateDevicePools({both}, TwoNodeTopology());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "devices[0] (resourceName \"a.com/g\"): set either `pci` or `devices`, not both");
}

}  // namespace
}  // namespace topologyd::device
