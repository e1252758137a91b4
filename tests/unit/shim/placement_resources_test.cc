// What the shim writes into the forwarded CRI resources: topologyd's cpuset, and the CFS quota
// kubelet's static policy gives a container or sandbox with exclusive CPUs.
#include "shim/placement_resources.h"

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

// kubelet's resources for a container limited to 2 CPUs, CFS quota enforced.
cri::LinuxContainerResources KubeletResources() {
  cri::LinuxContainerResources r;
  r.set_cpu_period(100000);
  r.set_cpu_quota(200000);
  r.set_cpu_shares(2048);
  r.set_memory_limit_in_bytes(1 << 30);
  return r;
}

TEST(PlacementResourcesTest, AnExclusiveContainerGetsItsCpusAndNoQuota) {
  cri::LinuxContainerResources r = KubeletResources();
  ApplyPlacement({.cpus = "2-3", .mems = "0", .exclusive = true, .cpu_quota_unlimited = true}, &r);
  EXPECT_EQ(r.cpuset_cpus(), "2-3");
  EXPECT_EQ(r.cpuset_mems(), "0");
  EXPECT_EQ(r.cpu_quota(), -1);
  // The period and everything else as kubelet sent them.
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.cpu_shares(), 2048);
  EXPECT_EQ(r.memory_limit_in_bytes(), 1 << 30);
}

TEST(PlacementResourcesTest, OtherwiseKubeletsQuotaStays) {
  // The shared pool, or an exclusive container while the gate is off in topologyd.
  for (bool exclusive : {false, true}) {
    cri::LinuxContainerResources r = KubeletResources();
    r.set_cpuset_mems("0-1");
    ApplyPlacement({.cpus = "0-1", .exclusive = exclusive}, &r);
    EXPECT_EQ(r.cpuset_cpus(), "0-1");
    EXPECT_EQ(r.cpuset_mems(), "0-1");  // topologyd does not pin memory
    EXPECT_EQ(r.cpu_quota(), 200000);
  }
  // kubelet enforces no quota (cpuCFSQuota off): none is made up.
  cri::LinuxContainerResources r = KubeletResources();
  r.clear_cpu_quota();
  ApplyPlacement({.cpus = "2", .exclusive = true, .cpu_quota_unlimited = true}, &r);
  EXPECT_EQ(r.cpu_quota(), 0);
}

TEST(PlacementResourcesTest, TheSandboxOfAPodWithAnExclusiveContainerHasNoQuota) {
  cri::PodSandboxConfig config;
  config.mutable_linux()->set_cgroup_parent("/kubepods/podu1");
  *config.mutable_linux()->mutable_resources() = KubeletResources();
  cri::PodSandboxConfig kept = config;
  ApplyPodQuota(false, &kept);
  EXPECT_EQ(kept.linux().resources().cpu_quota(), 200000);
  ApplyPodQuota(true, &config);
  EXPECT_EQ(config.linux().resources().cpu_quota(), -1);
  EXPECT_EQ(config.linux().resources().cpu_period(), 100000);
  EXPECT_EQ(config.linux().cgroup_parent(), "/kubepods/podu1");
  // No resources: nothing added.
  cri::PodSandboxConfig bare;
  ApplyPodQuota(true, &bare);
  EXPECT_FALSE(bare.linux().has_resources());
}

}  // namespace
}  // namespace topologyd::shim
