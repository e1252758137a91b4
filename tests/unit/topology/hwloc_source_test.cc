// The hwloc adapter on synthetic descriptions, a hand-written XML fixture and broken inputs.
#include "lib/topology/hwloc_source.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/topology/hwloc_reader.h"
#include "lib/topology/synthetic_precheck.h"
#include "tests/support/temp_dir.h"

namespace topologyd::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using topologyd::testing::TempDir;

// Hand-written (hwloc's own XML reader takes no comments, so it is described here): 2 packages
// x 2 cores x 2 PUs with only PUs 0-3 allowed; NUMA node 0 and HBM node 17 share package 0's
// cpuset, node 18 is on package 1; Core os_indexes 5, 6 repeat in each package; the Machine
// carries the kubelet test-map marker; a GPU under package 0 and a SATA controller at the root.
const std::string kFixture = std::string(TOPOLOGYD_SOURCE_DIR) +
                             "/tests/unit/topology/testdata/two_packages_hbm_disallowed.xml";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Topology LoadOk(const TopologySource& source) {
  absl::StatusOr<Topology> topology = LoadTopology(source);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? *topology : Topology{};
}

TEST(LoadTopologyTest, SyntheticMachine) {
  Topology topology = LoadOk(TopologySource::Synthetic("pack:2 numa:2 core:4 pu:2"));
  EXPECT_EQ(topology.packages.size(), 2u);
  EXPECT_EQ(topology.numa_nodes.size(), 4u);
  EXPECT_EQ(topology.cores.size(), 16u);
  EXPECT_EQ(topology.cpus.size(), 32u);
  for (const NumaNode& node : topology.numa_nodes) EXPECT_EQ(node.cpus.Size(), 8) << node.id;
  for (const Core& core : topology.cores) {
    EXPECT_EQ(core.cpus.Size(), 2);
    EXPECT_EQ(core.id, core.cpus.Min());
  }
  EXPECT_EQ(topology.FindCpu(17)->package_id, 1);
  EXPECT_EQ(topology.FindCpu(17)->numa_id, 2);
  EXPECT_FALSE(topology.kubelet_test_map);
  EXPECT_THAT(topology.pci_devices, IsEmpty());
}

class SmtTest : public ::testing::TestWithParam<int> {};

TEST_P(SmtTest, EveryCoreHasSmtCpus) {
  const int smt = GetParam();
  Topology topology =
      LoadOk(TopologySource::Synthetic("pack:2 l3:2 core:3 pu:" + std::to_string(smt)));
  EXPECT_EQ(topology.cores.size(), 12u);
  EXPECT_EQ(topology.cpus.size(), static_cast<size_t>(12 * smt));
  EXPECT_EQ(topology.l3_groups.size(), 4u);
  for (const Core& core : topology.cores) EXPECT_EQ(core.cpus.Size(), smt);
  for (const Cpu& cpu : topology.cpus) {
    EXPECT_EQ(cpu.core_id, cpu.id - cpu.id % smt);
    EXPECT_EQ(cpu.package_id, cpu.id / (6 * smt));
    EXPECT_EQ(cpu.numa_id, 0);  // hwloc adds one NUMA node when the description has none
    EXPECT_NE(cpu.l3_id, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, SmtTest, ::testing::Values(1, 2, 4, 8));

TEST(LoadTopologyTest, SyntheticWithoutCoresOrPackages) {
  Topology topology = LoadOk(TopologySource::Synthetic("numa:2 pu:3"));
  EXPECT_EQ(topology.packages.size(), 1u);
  EXPECT_EQ(topology.cores.size(), 6u);
  EXPECT_EQ(topology.numa_nodes.size(), 2u);
  EXPECT_EQ(topology.FindCpu(4)->numa_id, 1);
}

TEST(LoadTopologyTest, XmlFixtureKeepsDisallowedCpusAndMemoryOnlyNodes) {
  Topology topology = LoadOk(TopologySource::Xml(kFixture));
  // Only PUs 0-3 are allowed in the file; the daemon still sees the whole machine.
  EXPECT_EQ(topology.AllCpus(), CpuSet::Range(0, 7));
  ASSERT_EQ(topology.numa_nodes.size(), 3u);
  EXPECT_EQ(topology.numa_nodes[0].cpus, CpuSet::Range(0, 3));
  EXPECT_EQ(topology.numa_nodes[1].id, 17);
  EXPECT_TRUE(topology.numa_nodes[1].cpus.IsEmpty());
  EXPECT_EQ(topology.numa_nodes[1].subtype, "HBM");
  EXPECT_EQ(topology.numa_nodes[1].memory_bytes, uint64_t{536870912});
  EXPECT_EQ(topology.numa_nodes[2].cpus, CpuSet::Range(4, 7));
  EXPECT_THAT(topology.numa_nodes[0].hugepages, ElementsAre(HugePages{2048, 16}));
  EXPECT_THAT(topology.numa_nodes[1].distances, ElementsAre(13, 10, 23));
  ASSERT_EQ(topology.pci_devices.size(), 2u);
  EXPECT_EQ(topology.pci_devices[0].busid, "0000:3b:00.0");
  EXPECT_EQ(topology.pci_devices[0].vendor_id, 0x10de);
  EXPECT_EQ(topology.pci_devices[0].device_id, 0x1db4);
  EXPECT_EQ(topology.pci_devices[0].class_id, 0x0302);
  EXPECT_EQ(topology.pci_devices[0].kind, DeviceKind::kGpu);
  EXPECT_THAT(topology.pci_devices[0].numa_nodes, ElementsAre(0));
  EXPECT_EQ(topology.pci_devices[1].busid, "0001:00:1f.2");
  EXPECT_EQ(topology.pci_devices[1].kind, DeviceKind::kStorage);
  EXPECT_THAT(topology.pci_devices[1].numa_nodes, IsEmpty());
}

TEST(LoadTopologyTest, KubeletMarkerSelectsCoreOsIndexes) {
  Topology kubelet = LoadOk(TopologySource::Xml(kFixture));
  EXPECT_TRUE(kubelet.kubelet_test_map);
  EXPECT_EQ(kubelet.FindCpu(1)->core_id, 5);
  EXPECT_EQ(kubelet.FindCpu(6)->core_id, 6);
  EXPECT_EQ(kubelet.FindCpu(6)->l3_id, 0);  // no L3 objects: kubelet's zero value

  TempDir dir;
  std::string xml = ReadFile(kFixture);
  const std::string marker = "kubelet-cpumanager-test-topology";
  ASSERT_NE(xml.find(marker), std::string::npos);
  xml.replace(xml.find(marker), marker.size(), "Linux");
  Topology real = LoadOk(TopologySource::Xml(dir.Write("real.xml", xml)));
  EXPECT_FALSE(real.kubelet_test_map);
  EXPECT_EQ(real.FindCpu(1)->core_id, 0);
  EXPECT_EQ(real.FindCpu(6)->core_id, 6);
  EXPECT_EQ(real.FindCpu(5)->core_id, 4);
  EXPECT_EQ(real.FindCpu(6)->l3_id, -1);
}

TEST(LoadTopologyTest, MissingFileIsNotFound) {
  absl::Status status = LoadTopology(TopologySource::Xml("/nonexistent/dir/machine.xml")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("/nonexistent/dir/machine.xml"));
}

TEST(LoadTopologyTest, BrokenXmlIsInvalidArgumentNamingTheFile) {
  TempDir dir;
  std::string garbage = dir.Write("garbage.xml", "this is not <xml");
  absl::Status status = LoadTopology(TopologySource::Xml(garbage)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(garbage));

  std::string empty = dir.Write("empty.xml", "");
  EXPECT_EQ(LoadTopology(TopologySource::Xml(empty)).status().code(),
            absl::StatusCode::kInvalidArgument);

  // Well-formed XML that is not an hwloc topology.
  std::string other = dir.Write("other.xml", "<?xml version=\"1.0\"?><html><body/></html>\n");
  EXPECT_EQ(LoadTopology(TopologySource::Xml(other)).status().code(),
            absl::StatusCode::kInvalidArgument);

  status = LoadTopology(TopologySource::Xml(dir.path())).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("not a regular file"));
}

// The fixture without package 1's complete_cpuset: hwloc 2.9 segfaults inside
// hwloc_topology_load() on it.
std::string XmlThatCrashesHwloc() {
  std::string xml = ReadFile(kFixture);
  const std::string attribute = " complete_cpuset=\"0x000000f0\"";
  const size_t at = xml.find(attribute, xml.find("type=\"Package\" os_index=\"1\""));
  if (at != std::string::npos) xml.erase(at, attribute.size());
  return xml;
}

// Sets an environment variable for one test (the tests of a binary run on one thread).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(LoadTopologyTest, XmlThatCrashesHwlocIsInvalidArgument) {
  // The load must fail with a status instead of taking this process down.
  const std::string xml = XmlThatCrashesHwloc();
  ASSERT_NE(xml, ReadFile(kFixture));
  TempDir dir;
  std::string path = dir.Write("no_complete_cpuset.xml", xml);

  absl::Status status = LoadTopology(TopologySource::Xml(path)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("hwloc crashed (signal"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(path));
  // The process is still usable: the fixture itself loads.
  EXPECT_TRUE(LoadTopology(TopologySource::Xml(kFixture)).ok());
}

TEST(LoadTopologyTest, BadSyntheticDescriptionIsInvalidArgument) {
  for (const char* description : {"pack:2 bogus:3", "pack:x", "", "pu:0"}) {
    absl::Status status = LoadTopology(TopologySource::Synthetic(description)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << description;
  }
  absl::Status status = LoadTopology(TopologySource::Synthetic("pack:2 bogus:3")).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("pack:2 bogus:3"));
}

// hwloc loads any index; each CpuSet copied from such a topology was a bitmap up to the index
// (pu:2(indexes=0,2000000000): ~256 MB per object). LoadTopology() refuses them before hwloc
// (synthetic_precheck.h); LoadHwloc() still checks what hwloc built.
TEST(LoadTopologyTest, CpuIndexesAboveTheCpuSetLimitAreRefused) {
  for (const std::string description :
       {"pack:1 pu:2(indexes=0,1048576)", "pack:2 core:1 pu:1(indexes=5,3000000)"}) {
    absl::Status status = LoadTopology(TopologySource::Synthetic(description)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << description << ": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("the largest supported is 1048575"));
    EXPECT_THAT(std::string(status.message()), HasSubstr(description));
  }
  Topology largest = LoadOk(TopologySource::Synthetic("pack:1 pu:2(indexes=0,1048575)"));
  EXPECT_EQ(largest.AllCpus(), CpuSet({0, CpuSet::kMaxCpuId}));

  absl::Status status = LoadHwloc(TopologySource::Synthetic("pu:2(indexes=0,1048576)")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("has CPU index 1048576"));
}

// hwloc would spend seconds to hours and up to gigabytes on these; the pre-check's error comes back
// instead.
TEST(LoadTopologyTest, HostileSyntheticDescriptionIsRefusedBeforeHwloc) {
  for (const std::string& description :
       std::vector<std::string>{"pack:1000 core:1000 pu:1000", "pack:4294967295 pu:4294967295",
                                "pu:8192", "pack:1 core:8192 pu:1", "pu:2(indexes=0,4000000000)",
                                "pu:2 " + std::string(kMaxSyntheticBytes, ' ')}) {
    const TopologySource source = TopologySource::Synthetic(description);
    absl::Status status = LoadTopology(source).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status, PrecheckSyntheticDescription(description, DescribeSource(source)));
  }
}

TEST(LoadTopologyTest, LiveMachineLoads) {
  // Whatever this host is, it has CPUs, each in one core and package.
  Topology topology = LoadOk(TopologySource::Live());
  EXPECT_FALSE(topology.cpus.empty());
  EXPECT_FALSE(topology.packages.empty());
  EXPECT_FALSE(topology.numa_nodes.empty());
  EXPECT_GE(topology.AllCpus().Size(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_FALSE(topology.kubelet_test_map);
}

// hwloc's environment replaces the live discovery (HWLOC_XMLFILE, HWLOC_SYNTHETIC); what it
// names gets the checks of the configured kinds.
TEST(LoadTopologyTest, LiveMachineFromHwlocEnvironmentIsCheckedLikeAConfiguredSource) {
  TempDir dir;
  const std::string crashing = dir.Write("no_complete_cpuset.xml", XmlThatCrashesHwloc());
  {
    ScopedEnv xml("HWLOC_XMLFILE", crashing);
    absl::Status status = LoadTopology(TopologySource::Live()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("hwloc crashed (signal"));
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("the live machine (HWLOC_XMLFILE " + crashing + ")"));
  }
  {
    ScopedEnv xml("HWLOC_XMLFILE", kFixture);
    EXPECT_EQ(LoadOk(TopologySource::Live()), LoadOk(TopologySource::Xml(kFixture)));
  }
  {
    ScopedEnv synthetic("HWLOC_SYNTHETIC", "pu:8193");
    absl::Status status = LoadTopology(TopologySource::Live()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status, PrecheckSyntheticDescription(
                          "pu:8193", "the live machine (HWLOC_SYNTHETIC \"pu:8193\")"));
  }
  {
    ScopedEnv synthetic("HWLOC_SYNTHETIC", "pack:3 pu:2");
    EXPECT_EQ(LoadOk(TopologySource::Live()).AllCpus(), CpuSet::Range(0, 5));
  }
}

TEST(LoadHwlocTest, DescribeThenBuildEqualsLoadTopology) {
  TopologySource source = TopologySource::Synthetic("pack:2 numa:2 core:2 pu:2");
  absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(source);
  ASSERT_TRUE(hwloc.ok()) << hwloc.status();
  MachineDescription machine = DescribeMachine(hwloc->get());
  EXPECT_EQ(machine.pus, CpuSet::Range(0, 15));
  EXPECT_EQ(machine.numa_nodes.size(), 4u);
  absl::StatusOr<Topology> built = BuildTopology(machine);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(*built, LoadOk(source));
}

// An XML file is loaded in a forked child that sends its description back: what arrives is
// what this process would have read itself, and so are the errors, code and message.
TEST(ReadMachineTest, XmlFromTheChildEqualsTheInProcessRead) {
  TempDir dir;
  std::string xml = ReadFile(kFixture);
  const std::string marker = "kubelet-cpumanager-test-topology";
  xml.replace(xml.find(marker), marker.size(), "Linux");
  for (const std::string& path : {kFixture, dir.Write("real.xml", xml)}) {
    const TopologySource source = TopologySource::Xml(path);
    absl::StatusOr<MachineDescription> read = ReadMachine(source);
    ASSERT_TRUE(read.ok()) << read.status();
    absl::StatusOr<HwlocTopologyPtr> hwloc = LoadHwloc(source);
    ASSERT_TRUE(hwloc.ok()) << hwloc.status();
    EXPECT_EQ(*read, DescribeMachine(hwloc->get())) << path;
  }
}

TEST(ReadMachineTest, ErrorsFromTheChildAreTheInProcessErrors) {
  TempDir dir;
  for (const std::string& path :
       {std::string("/nonexistent/dir/machine.xml"), dir.path(),
        dir.Write("garbage.xml", "this is not <xml"), dir.Write("empty.xml", ""),
        dir.Write("other.xml", "<?xml version=\"1.0\"?><html><body/></html>\n")}) {
    const TopologySource source = TopologySource::Xml(path);
    absl::Status in_child = ReadMachine(source).status();
    EXPECT_FALSE(in_child.ok()) << path;
    EXPECT_EQ(in_child, LoadHwloc(source).status()) << path;
  }
}

// A FIFO nobody writes to blocks hwloc's open() for good: a stand-in for a file on a server
// that does not answer. (A configured XML source must be a regular file; HWLOC_XMLFILE is not
// checked before hwloc opens it.)
TEST(ReadMachineTest, AChildStillLoadingAtTheTimeLimitIsStoppedAndReaped) {
  TempDir dir;
  const std::string fifo = dir.File("machine.xml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  ScopedEnv xml("HWLOC_XMLFILE", fifo);

  absl::Status status =
      ReadMachine(TopologySource::Live(), std::chrono::milliseconds(200)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("hwloc did not finish reading the live machine (HWLOC_XMLFILE " + fifo +
                        ") within 200 ms"));
  // The killed child was waited for: this process has no child left.
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(ReadMachineTest, AChildThatFinishesInTimeIsNotStopped) {
  ScopedEnv xml("HWLOC_XMLFILE", kFixture);
  absl::StatusOr<MachineDescription> read =
      ReadMachine(TopologySource::Live(), std::chrono::milliseconds(10'000));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, ReadMachine(TopologySource::Xml(kFixture)).value());
}

TEST(DescribeSourceTest, NamesTheSource) {
  EXPECT_EQ(DescribeSource(TopologySource::Live()), "the live machine");
  EXPECT_EQ(DescribeSource(TopologySource::Xml("/a.xml")), "hwloc XML file /a.xml");
  EXPECT_EQ(DescribeSource(TopologySource::Synthetic("pu:2")), "hwloc synthetic topology \"pu:2\"");
  EXPECT_EQ(DescribeSource(TopologySource::Xml("/a\nb.xml")), "hwloc XML file /a\\x0ab.xml");
  EXPECT_EQ(DescribeSource(TopologySource::Synthetic(std::string(300, 'x'))),
            "hwloc synthetic topology \"" + std::string(256, 'x') + "\"...(300 bytes)");
}

}  // namespace
}  // namespace topologyd::topology
