// SR-IOV parents read from a fake sysfs tree laid out as the kernel does.
#include "lib/topology/sriov_sysfs.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace topologyd::topology {
namespace {

namespace fs = std::filesystem;

class SriovSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(devices_); }

  // A device directory; with `physfn`, the link the kernel gives a virtual function.
  void Device(const std::string& busid, const std::string& physfn = "") {
    fs::create_directories(devices_ + "/" + busid);
    if (!physfn.empty()) fs::create_symlink(physfn, devices_ + "/" + busid + "/physfn");
  }

  topologyd::testing::TempDir tmp_{"topologyd-sysfs"};
  const std::string root_ = tmp_.path();
  const std::string devices_ = root_ + "/sys/bus/pci/devices";
};

TEST_F(SriovSysfsTest, VirtualFunctionNamesItsPhysicalFunction) {
  Device("0000:3b:00.0");
  Device("0000:3b:02.1", "../0000:3b:00.0");
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:3b:02.1"), "0000:3b:00.0");
  EXPECT_EQ(SriovPhysicalFunction(root_ + "/", "0000:3b:02.1"), "0000:3b:00.0");
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:3b:00.0"), std::nullopt) << "a PF is no VF";
}

TEST_F(SriovSysfsTest, AbsoluteLinkTargetsWork) {
  Device("0000:af:00.3", "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/");
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:af:00.3"), "0000:af:00.0");
}

TEST_F(SriovSysfsTest, MissingOrOddEntriesAreNoParent) {
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:01:00.0"), std::nullopt);  // no sysfs entry
  Device("0000:02:00.1", "../not-a-device");
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:02:00.1"), std::nullopt);
  Device("0000:03:00.1", "../0000:3B:00.0");  // the kernel writes lower-case hex
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:03:00.1"), std::nullopt);
  fs::create_directories(devices_ + "/0000:04:00.1/physfn");  // a directory, not a link
  EXPECT_EQ(SriovPhysicalFunction(root_, "0000:04:00.1"), std::nullopt);
  EXPECT_EQ(SriovPhysicalFunction("/nonexistent-root", "0000:3b:02.1"), std::nullopt);
}

TEST_F(SriovSysfsTest, OnlyBusIdsAreLookedUp) {
  // A bus id that is not one must not become a path: "../../.." would leave the tree.
  fs::create_directories(root_ + "/sys/bus");
  fs::create_symlink("../0000:3b:00.0", root_ + "/sys/bus/physfn");
  EXPECT_EQ(SriovPhysicalFunction(root_, "../.."), std::nullopt);
  EXPECT_EQ(SriovPhysicalFunction(root_, ""), std::nullopt);
}

}  // namespace
}  // namespace topologyd::topology
