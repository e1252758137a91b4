// Tests of the estimate from CRI: kubelet's forward conversion, written here independently of
// the code under test, then inverted, for many values; and the QoS class of the estimate.
#include "lib/podspec/cri_estimate.h"

#include <algorithm>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::podspec {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// kubelet's MilliCPUToShares and MilliCPUToQuota (pkg/kubelet/cm/helpers_linux.go).
int64_t SharesFromMilli(int64_t milli) {
  if (milli == 0) return 2;
  return std::clamp<int64_t>(milli * 1024 / 1000, 2, 262144);
}
int64_t QuotaFromMilli(int64_t milli, int64_t period) {
  if (milli == 0) return 0;
  return std::max<int64_t>(milli * period / 1000, 1000);
}

// 3m to 256 CPUs: every value to 2 CPUs, then a spread, then whole CPUs.
std::vector<int64_t> MilliValues() {
  std::set<int64_t> values;
  for (int64_t m = 3; m <= 2000; ++m) values.insert(m);
  for (int64_t m = 2000; m <= 256000; m = m * 21 / 20 + 1) values.insert(m);
  for (int64_t cpus = 1; cpus <= 256; ++cpus) values.insert(cpus * 1000);
  return {values.begin(), values.end()};
}

pod::QosClass QosOf(const std::vector<pod::Container>& containers) {
  pod::Pod pod;
  pod.containers = containers;
  return pod::ComputeQos(pod);
}

constexpr int64_t kGi = int64_t{1} << 30;

TEST(CriEstimateTest, QosFromCgroupParent) {
  const std::string uid = "0b8f6e32-9c1d-4f5e-a7b2-3c4d5e6f7a8b";
  const std::string uid_ = "0b8f6e32_9c1d_4f5e_a7b2_3c4d5e6f7a8b";
  using pod::QosClass;
  const std::pair<std::string, std::optional<QosClass>> cases[] = {
      {"/kubepods/pod" + uid, QosClass::kGuaranteed},
      {"/kubepods/burstable/pod" + uid, QosClass::kBurstable},
      {"/kubepods/besteffort/pod" + uid, QosClass::kBestEffort},
      {"kubepods/burstable/pod" + uid, QosClass::kBurstable},
      {"/kubepods/burstable/pod" + uid + "/", QosClass::kBurstable},
      {"/custom/root/kubepods/pod" + uid, QosClass::kGuaranteed},
      {"/custom/root/kubepods/besteffort/pod" + uid, QosClass::kBestEffort},
      {"/kubepods.slice/kubepods-pod" + uid_ + ".slice", QosClass::kGuaranteed},
      {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_ + ".slice",
       QosClass::kBurstable},
      {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_ + ".slice",
       QosClass::kBestEffort},
      {"kubepods-burstable-pod" + uid_ + ".slice", QosClass::kBurstable},
      {"/custom.slice/custom-kubepods.slice/custom-kubepods-pod" + uid_ + ".slice",
       QosClass::kGuaranteed},
      {"/custom.slice/custom-kubepods.slice/custom-kubepods-besteffort.slice/"
       "custom-kubepods-besteffort-pod" +
           uid_ + ".slice",
       QosClass::kBestEffort},
      // Not kubelet's pod cgroups: cgroups-per-qos off, other QoS names, no pod part.
      {"/pod" + uid, std::nullopt},
      {"/kubepods", std::nullopt},
      {"/kubepods/burstable", std::nullopt},
      {"/kubepods/pod", std::nullopt},
      {"/kubepods/guaranteed/pod" + uid, std::nullopt},
      {"/other/burstable/pod" + uid, std::nullopt},
      {"/kubepods.slice", std::nullopt},
      {"/kubepods.slice/kubepods-burstable.slice", std::nullopt},
      {"/system.slice/containerd.service", std::nullopt},
      {"/user.slice/user-pod" + uid_ + ".slice", std::nullopt},
      {"", std::nullopt},
      {"/", std::nullopt},
  };
  for (const auto& [path, qos] : cases) {
    EXPECT_EQ(QosFromCgroupParent(path), qos) << path;
  }
}

TEST(CriEstimateTest, HugePageResourceName) {
  const std::pair<std::string, std::optional<std::string>> cases[] = {
      {"2MB", "hugepages-2Mi"},   {"1GB", "hugepages-1Gi"},  {"64KB", "hugepages-64Ki"},
      {"16GB", "hugepages-16Gi"}, {"512B", "hugepages-512"}, {"1TB", "hugepages-1Ti"},
      {"MB", std::nullopt},       {"0MB", std::nullopt},     {"2Mi", std::nullopt},
      {"-2MB", std::nullopt},     {"2 MB", std::nullopt},    {"", std::nullopt},
  };
  for (const auto& [size, name] : cases) EXPECT_EQ(HugePageResourceName(size), name) << size;
}

// Guaranteed: kubelet writes shares from the request and quota from the limit (equal); the
// estimate gives back the exact value from 3m, at several CFS periods and with quota off.
TEST(CriEstimateTest, GuaranteedCpuRoundTrip) {
  for (int64_t period : {100000, 50000, 33333, 1000000, 1000}) {
    for (int64_t milli : MilliValues()) {
      CriResources r{.cpu_period = period,
                     .cpu_quota = QuotaFromMilli(milli, period),
                     .cpu_shares = SharesFromMilli(milli),
                     .memory_limit_in_bytes = kGi,
                     .oom_score_adj = -997};
      Estimate e = EstimateContainer("app", r, pod::QosClass::kGuaranteed);
      ASSERT_EQ(e.container.limits.at("cpu"), pod::Quantity::FromMilli(milli))
          << milli << "m at period " << period;
      ASSERT_EQ(e.container.requests.at("cpu"), pod::Quantity::FromMilli(milli));
      ASSERT_EQ(QosOf({e.container}), pod::QosClass::kGuaranteed);
    }
  }
  // Quota off (--cpu-cfs-quota=false) or -1 (exclusive CPUs without quota): from the shares.
  for (int64_t quota : {0, -1}) {
    for (int64_t milli : MilliValues()) {
      CriResources r{.cpu_period = 100000,
                     .cpu_quota = quota,
                     .cpu_shares = SharesFromMilli(milli),
                     .memory_limit_in_bytes = kGi};
      Estimate e = EstimateContainer("app", r, pod::QosClass::kGuaranteed);
      ASSERT_EQ(e.container.limits.at("cpu"), pod::Quantity::FromMilli(milli)) << milli;
      ASSERT_EQ(QosOf({e.container}), pod::QosClass::kGuaranteed);
    }
  }
}

TEST(CriEstimateTest, GuaranteedEdges) {
  // Above 256 CPUs the shares saturate but the quota is exact.
  CriResources big{.cpu_period = 100000,
                   .cpu_quota = QuotaFromMilli(300000, 100000),
                   .cpu_shares = SharesFromMilli(300000),
                   .memory_limit_in_bytes = 4 * kGi};
  Estimate e = EstimateContainer("app", big, pod::QosClass::kGuaranteed);
  EXPECT_EQ(e.container.limits.at("cpu"), pod::Quantity::FromInt(300));
  EXPECT_THAT(e.unknown, Contains(HasSubstr("at least 256 CPUs")));
  // Without a quota they say "256 or more".
  big.cpu_quota = 0;
  e = EstimateContainer("app", big, pod::QosClass::kGuaranteed);
  EXPECT_EQ(e.container.limits.at("cpu"), pod::Quantity::FromInt(256));
  // 1m and 2m both give shares 2 and the minimum quota: 2m, said.
  for (int64_t milli : {1, 2}) {
    CriResources r{.cpu_period = 100000,
                   .cpu_quota = QuotaFromMilli(milli, 100000),
                   .cpu_shares = SharesFromMilli(milli),
                   .memory_limit_in_bytes = kGi};
    e = EstimateContainer("app", r, pod::QosClass::kGuaranteed);
    EXPECT_EQ(e.container.limits.at("cpu"), pod::Quantity::FromMilli(2));
    EXPECT_THAT(e.unknown, Contains(HasSubstr("cpu 1m or 2m")));
    EXPECT_EQ(QosOf({e.container}), pod::QosClass::kGuaranteed);
  }
  // Memory and hugepages: requests = limits, exact bytes.
  CriResources r{.cpu_period = 100000,
                 .cpu_quota = 200000,
                 .cpu_shares = 2048,
                 .memory_limit_in_bytes = 3 * kGi + 4096,
                 .hugepage_limits = {{"2MB", 0}, {"1GB", uint64_t{4} << 30}, {"2MB", 8 << 20}}};
  e = EstimateContainer("app", r, pod::QosClass::kGuaranteed);
  const pod::ResourceList expected = {
      {"cpu", pod::Quantity::FromInt(2)},
      {"memory", pod::Quantity::FromInt(3 * kGi + 4096)},
      {"hugepages-1Gi", *pod::Quantity::Parse("4Gi")},
      {"hugepages-2Mi", *pod::Quantity::Parse("8Mi")},
  };
  EXPECT_EQ(e.container.requests, expected);
  EXPECT_EQ(e.container.limits, expected);
  EXPECT_EQ(e.container.name, "app");
  EXPECT_FALSE(e.container.restart_always);
  // No memory limit cannot be Guaranteed: said.
  r.memory_limit_in_bytes = 0;
  e = EstimateContainer("app", r, pod::QosClass::kGuaranteed);
  EXPECT_THAT(e.unknown, Contains(HasSubstr("no memory limit")));
}

// Burstable: the cpu request round-trips through the shares; limits are left out so that the
// pod never reads as Guaranteed, even when kubelet wrote limits.
TEST(CriEstimateTest, BurstableRoundTripAndQos) {
  for (int64_t milli : MilliValues()) {
    CriResources r{.cpu_period = 100000,
                   .cpu_quota = QuotaFromMilli(milli, 100000),
                   .cpu_shares = SharesFromMilli(milli),
                   .memory_limit_in_bytes = kGi,
                   .oom_score_adj = 500};
    Estimate e = EstimateContainer("app", r, pod::QosClass::kBurstable);
    ASSERT_EQ(e.container.requests.at("cpu"), pod::Quantity::FromMilli(milli)) << milli;
    ASSERT_TRUE(e.container.limits.empty());
    ASSERT_EQ(QosOf({e.container}), pod::QosClass::kBurstable);
    ASSERT_EQ(QosOf({e.container, e.container}), pod::QosClass::kBurstable);
  }
  // A container with a memory request only: shares 2; 1m taken so the pod stays Burstable.
  CriResources memory_only{.cpu_period = 100000, .cpu_shares = 2, .oom_score_adj = 937};
  Estimate e = EstimateContainer("app", memory_only, pod::QosClass::kBurstable);
  EXPECT_EQ(e.container.requests.at("cpu"), pod::Quantity::FromMilli(1));
  EXPECT_EQ(QosOf({e.container}), pod::QosClass::kBurstable);
  EXPECT_THAT(e.unknown, Contains(HasSubstr("memory request unknown")));
  EXPECT_THAT(e.unknown, Contains(HasSubstr("oom_score_adj (937)")));
  // Hugepages are kept, as request and limit.
  memory_only.hugepage_limits = {{"2MB", 4 << 20}};
  e = EstimateContainer("app", memory_only, pod::QosClass::kBurstable);
  EXPECT_EQ(e.container.limits.at("hugepages-2Mi"), pod::Quantity::FromInt(4 << 20));
  EXPECT_EQ(e.container.requests.at("hugepages-2Mi"), pod::Quantity::FromInt(4 << 20));
}

TEST(CriEstimateTest, BestEffort) {
  CriResources r{.cpu_period = 100000, .cpu_shares = 2, .oom_score_adj = 1000};
  Estimate e = EstimateContainer("app", r, pod::QosClass::kBestEffort);
  EXPECT_TRUE(e.container.requests.empty());
  EXPECT_TRUE(e.container.limits.empty());
  EXPECT_EQ(QosOf({e.container}), pod::QosClass::kBestEffort);
  r.hugepage_limits = {{"1GB", uint64_t{1} << 30}};
  e = EstimateContainer("app", r, pod::QosClass::kBestEffort);
  EXPECT_EQ(e.container.requests.size(), 1U);
  EXPECT_EQ(QosOf({e.container}), pod::QosClass::kBestEffort);
}

TEST(CriEstimateTest, AlwaysSaysWhatCriDoesNotCarry) {
  for (pod::QosClass qos :
       {pod::QosClass::kGuaranteed, pod::QosClass::kBurstable, pod::QosClass::kBestEffort}) {
    Estimate e = EstimateContainer("app", CriResources{.cpu_shares = 1024}, qos);
    EXPECT_THAT(e.unknown, Contains(HasSubstr("extended resources unknown")));
    EXPECT_THAT(e.unknown, Contains(HasSubstr("init or app container unknown")));
    for (const std::string& line : e.unknown) EXPECT_LE(line.size(), 100U) << line;
  }
  CriResources odd{.hugepage_limits = {{"2XB", 1}}};
  Estimate e = EstimateContainer("app", odd, pod::QosClass::kBestEffort);
  EXPECT_THAT(e.unknown, Contains(HasSubstr("page size \"2XB\"")));
}

}  // namespace
}  // namespace topologyd::podspec
