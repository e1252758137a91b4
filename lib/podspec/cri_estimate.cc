#include "lib/podspec/cri_estimate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "fmt/format.h"

namespace topologyd::podspec {
namespace {

// Keeps quota * 1000 well inside int64: 10^15 us per period is millions of CPUs.
constexpr int64_t kMaxQuota = 1'000'000'000'000'000;

std::string_view StripSuffix(std::string_view s, std::string_view suffix) {
  return s.ends_with(suffix) ? s.substr(0, s.size() - suffix.size()) : std::string_view();
}

// The QoS of a cgroupfs path's last two components, e.g. "burstable", "pod<uid>".
std::optional<pod::QosClass> QosFromCgroupfs(std::string_view parent, std::string_view leaf,
                                             std::string_view grandparent) {
  if (!leaf.starts_with("pod") || leaf.size() == 3) return std::nullopt;
  if (parent == "kubepods") return pod::QosClass::kGuaranteed;
  if (grandparent != "kubepods") return std::nullopt;
  if (parent == "burstable") return pod::QosClass::kBurstable;
  if (parent == "besteffort") return pod::QosClass::kBestEffort;
  return std::nullopt;
}

// The QoS of a systemd leaf "[<root>-]kubepods[-<qos>]-pod<uid_>.slice": systemd names a
// slice after its ancestry, so the leaf alone tells the QoS.
std::optional<pod::QosClass> QosFromSystemdLeaf(std::string_view leaf) {
  std::string_view name = StripSuffix(leaf, ".slice");
  const size_t dash = name.rfind('-');
  if (name.empty() || dash == std::string_view::npos) return std::nullopt;
  const std::string_view pod_part = name.substr(dash + 1);
  if (!pod_part.starts_with("pod") || pod_part.size() == 3) return std::nullopt;
  const std::string_view ancestry = name.substr(0, dash);
  auto is = [&](std::string_view tail) {
    return ancestry == tail || ancestry.ends_with(fmt::format("-{}", tail));
  };
  if (is("kubepods")) return pod::QosClass::kGuaranteed;
  if (is("kubepods-burstable")) return pod::QosClass::kBurstable;
  if (is("kubepods-besteffort")) return pod::QosClass::kBestEffort;
  return std::nullopt;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Millicores from cpu.shares, ceil(shares * 1000 / 1024): the one value kubelet's
// floor(milli * 1024 / 1000) maps to `shares`, when there is one.
int64_t MilliFromShares(int64_t shares) { return CeilDiv(shares * 1000, kSharesPerCpu); }

}  // namespace

std::optional<pod::QosClass> QosFromCgroupParent(std::string_view cgroup_parent) {
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= cgroup_parent.size();) {
    size_t end = cgroup_parent.find('/', start);
    if (end == std::string_view::npos) end = cgroup_parent.size();
    if (end > start) parts.push_back(cgroup_parent.substr(start, end - start));
    start = end + 1;
  }
  if (parts.empty()) return std::nullopt;
  const std::string_view leaf = parts.back();
  if (leaf.ends_with(".slice")) return QosFromSystemdLeaf(leaf);
  if (parts.size() < 2) return std::nullopt;
  return QosFromCgroupfs(parts[parts.size() - 2], leaf,
                         parts.size() >= 3 ? parts[parts.size() - 3] : std::string_view());
}

std::optional<std::string> HugePageResourceName(std::string_view page_size) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kUnits = {
      {{"KB", "Ki"}, {"MB", "Mi"}, {"GB", "Gi"}, {"TB", "Ti"}, {"PB", "Pi"}, {"B", ""}}};
  for (const auto& [unit, binary] : kUnits) {
    if (!page_size.ends_with(unit)) continue;
    const std::string_view digits = page_size.substr(0, page_size.size() - unit.size());
    uint64_t n = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || n == 0) {
      return std::nullopt;
    }
    return fmt::format("hugepages-{}{}", n, binary);
  }
  return std::nullopt;
}

Estimate EstimateContainer(std::string name, const CriResources& r, pod::QosClass qos) {
  Estimate out;
  out.container.name = std::move(name);
  pod::ResourceList& requests = out.container.requests;
  pod::ResourceList& limits = out.container.limits;
  auto unknown = [&](std::string text) { out.unknown.push_back(std::move(text)); };

  // Hugepages are exact for every class and do not count for the QoS class.
  for (const HugepageLimit& h : r.hugepage_limits) {
    if (h.limit == 0) continue;
    std::optional<std::string> resource = HugePageResourceName(h.page_size);
    const auto bytes =
        static_cast<int64_t>(std::min<uint64_t>(h.limit, pod::Quantity::kMaxWhole - 1));
    if (!resource) {
      unknown(fmt::format("hugepages of page size \"{}\" not understood", h.page_size));
      continue;
    }
    requests[*resource] = limits[*resource] = pod::Quantity::FromInt(bytes);
  }

  // The CPU request the shares carry: 0 when they carry none (2 is also 0m, 1m and 2m).
  int64_t shares_milli = 0;
  if (r.cpu_shares > kMinShares) {
    shares_milli = MilliFromShares(std::min(r.cpu_shares, kMaxShares));
    if (r.cpu_shares >= kMaxShares)
      unknown("cpu request at least 256 CPUs (cpu.shares at maximum)");
  }
  // The CPU limit the quota carries, 0 for none.
  int64_t quota_milli = 0;
  if (r.cpu_quota > 0 && r.cpu_period > 0) {
    quota_milli = CeilDiv(std::min(r.cpu_quota, kMaxQuota) * 1000, r.cpu_period);
  }

  switch (qos) {
    case pod::QosClass::kGuaranteed: {
      int64_t cpu = quota_milli;
      bool one_or_two = false;  // shares 2: 1m or 2m
      if (r.cpu_quota == kMinQuotaPeriod) {
        // At the kernel's minimum quota every smaller limit looks the same; the shares do not.
        if (shares_milli > 0 && shares_milli <= quota_milli) {
          cpu = shares_milli;
        } else if (r.cpu_shares == kMinShares) {
          cpu = std::min(kMinShares, quota_milli);
          one_or_two = cpu == kMinShares;
        } else if (quota_milli > 1) {
          unknown(fmt::format("cpu limit at most {}m (cpu quota at its minimum)", quota_milli));
        }
      }
      if (cpu == 0) {
        cpu = shares_milli;
        if (cpu == 0 && r.cpu_shares == kMinShares) {
          cpu = kMinShares;  // the larger, the one the shares round back to
          one_or_two = true;
        }
      }
      if (one_or_two) unknown("cpu 1m or 2m (cpu.shares 2)");
      if (cpu > 0) {
        requests["cpu"] = limits["cpu"] = pod::Quantity::FromMilli(cpu);
      } else {
        unknown("cpu unknown: neither cpu.shares nor a quota is set");
      }
      if (r.memory_limit_in_bytes > 0) {
        requests["memory"] = limits["memory"] =
            pod::Quantity::FromInt(std::min(r.memory_limit_in_bytes, pod::Quantity::kMaxWhole - 1));
      } else {
        unknown("memory unknown: no memory limit");
      }
      break;
    }
    case pod::QosClass::kBurstable:
      if (shares_milli > 0) {
        requests["cpu"] = pod::Quantity::FromMilli(shares_milli);
      } else {
        // Without a cpu or memory request the container would read as BestEffort.
        requests["cpu"] = pod::Quantity::FromMilli(1);
        unknown("cpu request none, 1m or 2m; 1m taken so that the pod reads as Burstable");
      }
      unknown(fmt::format("memory request unknown: only oom_score_adj ({}) reflects it",
                          r.oom_score_adj));
      if (quota_milli > 0 || r.memory_limit_in_bytes > 0) {
        unknown("cpu and memory limits left out, so that the pod stays Burstable");
      }
      break;
    case pod::QosClass::kBestEffort:
      break;
  }
  unknown("extended resources unknown: device-plugin resources are not in CRI");
  unknown("init or app container unknown: CRI does not say");
  return out;
}

}  // namespace topologyd::podspec
