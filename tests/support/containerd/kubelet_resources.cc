#include "tests/support/containerd/kubelet_resources.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;

int64_t MilliOf(const pod::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.MilliValue();
}

int64_t ValueOf(const pod::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.Value();
}

// kubelet's calculateLinuxResources: no cpu request but a limit means shares from the limit.
cri::LinuxContainerResources CpuAndMemory(const pod::ResourceList& requests,
                                          const pod::ResourceList& limits) {
  cri::LinuxContainerResources r;
  const bool has_cpu_request = requests.contains(pod::kResourceCpu);
  const int64_t cpu_limit = MilliOf(limits, pod::kResourceCpu);
  r.set_cpu_shares(MilliCpuToShares(
      !has_cpu_request && cpu_limit != 0 ? cpu_limit : MilliOf(requests, pod::kResourceCpu)));
  r.set_memory_limit_in_bytes(ValueOf(limits, pod::kResourceMemory));
  r.set_cpu_period(kCpuPeriod);
  r.set_cpu_quota(MilliCpuToQuota(cpu_limit, kCpuPeriod));
  return r;
}

}  // namespace

NodeFacts ReadNodeFacts() {
  NodeFacts node;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value) {
    std::getline(meminfo, unit);
    if (key == "MemTotal:") node.memory_capacity_bytes = value * 1024;
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/kernel/mm/hugepages", ec)) {
    std::string name = entry.path().filename();  // hugepages-2048kB
    uint64_t kib = 0;
    if (absl::StartsWith(name, "hugepages-") && absl::EndsWith(name, "kB") &&
        absl::SimpleAtoi(name.substr(10, name.size() - 12), &kib)) {
      node.huge_page_sizes_kib.push_back(kib);
    }
  }
  std::sort(node.huge_page_sizes_kib.begin(), node.huge_page_sizes_kib.end());
  return node;
}

int64_t MilliCpuToShares(int64_t milli) {
  constexpr int64_t kMinShares = 2;
  constexpr int64_t kMaxShares = 262144;
  if (milli == 0) return kMinShares;
  return std::clamp(milli * 1024 / 1000, kMinShares, kMaxShares);
}

int64_t MilliCpuToQuota(int64_t milli, int64_t period) {
  if (milli == 0) return 0;
  return std::max<int64_t>(milli * period / 1000, 1000);
}

int64_t OomScoreAdj(pod::QosClass qos, int64_t memory_request, int64_t memory_capacity) {
  switch (qos) {
    case pod::QosClass::kGuaranteed:
      return kGuaranteedOomScoreAdj;
    case pod::QosClass::kBestEffort:
      return kBestEffortOomScoreAdj;
    case pod::QosClass::kBurstable:
      break;
  }
  int64_t score = memory_capacity > 0 ? 1000 - (1000 * memory_request) / memory_capacity : 1000;
  // Above Guaranteed's and below BestEffort's, as kubelet keeps them apart.
  return std::clamp<int64_t>(score, 1000 + kGuaranteedOomScoreAdj, kBestEffortOomScoreAdj - 1);
}

std::string HugePageSizeName(uint64_t size_kib) {
  if (size_kib % (1024 * 1024) == 0) return absl::StrCat(size_kib / (1024 * 1024), "GB");
  if (size_kib % 1024 == 0) return absl::StrCat(size_kib / 1024, "MB");
  return absl::StrCat(size_kib, "KB");
}

cri::LinuxContainerResources ContainerResources(const pod::Pod& pod,
                                                const pod::Container& container,
                                                const NodeFacts& node) {
  cri::LinuxContainerResources r = CpuAndMemory(container.requests, container.limits);
  r.set_oom_score_adj(OomScoreAdj(pod::ComputeQos(pod),
                                  ValueOf(container.requests, pod::kResourceMemory),
                                  node.memory_capacity_bytes));
  for (uint64_t kib : node.huge_page_sizes_kib) {
    auto* limit = r.add_hugepage_limits();
    limit->set_page_size(HugePageSizeName(kib));
    for (const auto& [name, quantity] : container.limits) {
      if (!pod::IsHugePageResourceName(name)) continue;
      auto size = pod::Quantity::Parse(std::string_view(name).substr(pod::kHugePagesPrefix.size()));
      if (size.ok() && static_cast<uint64_t>(size->Value()) == kib * 1024) {
        limit->set_limit(static_cast<uint64_t>(quantity.Value()));
      }
    }
  }
  // cgroup v1: kubelet sets the memory+swap limit to the memory limit (no swap).
  r.set_memory_swap_limit_in_bytes(r.memory_limit_in_bytes());
  return r;
}

cri::LinuxContainerResources SandboxResources(const pod::Pod& pod) {
  return CpuAndMemory(pod::EffectivePodRequests(pod), pod::EffectivePodLimits(pod));
}

std::optional<int64_t> PodCpuQuota(const pod::Pod& pod) {
  const pod::QosClass qos = pod::ComputeQos(pod);
  if (qos == pod::QosClass::kBestEffort) return std::nullopt;
  auto limited = [](const pod::Container& c) { return MilliOf(c.limits, pod::kResourceCpu) > 0; };
  const bool declared =
      std::all_of(pod.init_containers.begin(), pod.init_containers.end(), limited) &&
      std::all_of(pod.containers.begin(), pod.containers.end(), limited);
  if (qos == pod::QosClass::kBurstable && !declared) return std::nullopt;
  return MilliCpuToQuota(MilliOf(pod::EffectivePodLimits(pod), pod::kResourceCpu), kCpuPeriod);
}

std::string PodCgroupParent(const std::string& root, pod::QosClass qos, const std::string& uid) {
  std::string parent = absl::StrCat(root, "/kubepods");
  if (qos == pod::QosClass::kBurstable) parent += "/burstable";
  if (qos == pod::QosClass::kBestEffort) parent += "/besteffort";
  return absl::StrCat(parent, "/pod", uid);
}

}  // namespace topologyd::testing::containerd
