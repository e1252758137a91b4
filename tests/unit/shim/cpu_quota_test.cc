#include "lib/shim/cpu_quota.h"

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

using cgroup::CgroupVersion;

TEST(ShimCpuQuotaTest, AnUnlimitedContainerGetsMinusOneWhereKubeletSentAQuota) {
  EXPECT_EQ(ForwardedCpuQuota(true, 200000), -1);
  // kubelet's own quota where topologyd says nothing (shared pool, the gate off, an older
  // daemon).
  EXPECT_EQ(ForwardedCpuQuota(false, 200000), 200000);
  // kubelet enforces no quota (cpuCFSQuota off, or no CPU limit): nothing to lift.
  EXPECT_EQ(ForwardedCpuQuota(true, 0), 0);
  EXPECT_EQ(ForwardedCpuQuota(true, -1), -1);
}

TEST(ShimCpuQuotaTest, V1WritesMinusOneIntoCfsQuotaUs) {
  EXPECT_EQ(*UnlimitedQuotaWrite(CgroupVersion::kV1), (CgroupFileWrite{"cpu.cfs_quota_us", "-1"}));
}

TEST(ShimCpuQuotaTest, V2WritesMaxAndKeepsThePeriod) {
  EXPECT_EQ(*UnlimitedQuotaWrite(CgroupVersion::kV2, "200000 100000\n"),
            (CgroupFileWrite{"cpu.max", "max 100000"}));
  EXPECT_EQ(*UnlimitedQuotaWrite(CgroupVersion::kV2, "max 50000"),
            (CgroupFileWrite{"cpu.max", "max 50000"}));
  for (std::string_view bad : {"", "\n", "max", "200000", "max 0", "x 100000", "max -1",
                               "max 100000 1", "max 99999999999999999999"}) {
    EXPECT_EQ(UnlimitedQuotaWrite(CgroupVersion::kV2, bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace topologyd::shim
