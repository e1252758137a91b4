#include "lib/shim/cpu_quota.h"

#include <algorithm>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::shim {

int64_t ForwardedCpuQuota(bool unlimited, int64_t kubelet_quota) {
  return unlimited && kubelet_quota > 0 ? -1 : kubelet_quota;
}

absl::StatusOr<CgroupFileWrite> UnlimitedQuotaWrite(cgroup::CgroupVersion version,
                                                    std::string_view cpu_max) {
  if (version == cgroup::CgroupVersion::kV1) return CgroupFileWrite{"cpu.cfs_quota_us", "-1"};
  const std::string_view text = cpu_max.substr(0, cpu_max.find_last_not_of(" \n") + 1);
  const size_t space = text.find(' ');
  const std::string_view quota = text.substr(0, space);
  const std::string_view period =
      space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 19 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((quota != "max" && !digits(quota)) || !digits(period) ||
      period.find_first_not_of('0') == std::string_view::npos) {
    return absl::InvalidArgumentError(
        fmt::format("cpu.max holds \"{}\", not \"<quota|max> <period>\"", EscapeForMessage(text)));
  }
  return CgroupFileWrite{"cpu.max", fmt::format("max {}", period)};
}

}  // namespace topologyd::shim
