#include "tools/topoctl/support_cpuset_check.h"

#include "absl/status/statusor.h"
#include "fmt/format.h"

#include "lib/cpuset/cpuset.h"

namespace topoctl {
namespace {

using topologyd::CpuSet;

// "none" for an empty list: a runtime or cgroup that sets nothing does not confine.
std::string Shown(const std::string& list) { return list.empty() ? "none" : list; }

}  // namespace

std::string CompareCpuset(const std::string& want_cpus, const std::vector<int>& want_mems,
                          const CpusetReading& got, const std::string& source) {
  if (!got.unknown.empty()) return "unknown: " + got.unknown;
  absl::StatusOr<CpuSet> want = CpuSet::Parse(want_cpus);
  if (!want.ok()) {
    return fmt::format("unknown: topologyd's CPU list \"{}\" does not parse", want_cpus);
  }
  absl::StatusOr<CpuSet> cpus = CpuSet::Parse(got.cpus);
  if (!cpus.ok()) {
    return fmt::format("unknown: the {} CPU list \"{}\" does not parse", source, got.cpus);
  }
  std::vector<std::string> differences;
  if (*cpus != *want) differences.push_back(Shown(got.cpus));
  if (!want_mems.empty()) {
    absl::StatusOr<CpuSet> mems = CpuSet::Parse(got.mems);
    if (!mems.ok()) {
      return fmt::format("unknown: the {} memory-node list \"{}\" does not parse", source,
                         got.mems);
    }
    if (*mems != CpuSet(want_mems)) differences.push_back("mems " + Shown(got.mems));
  }
  if (differences.empty()) return "agrees";
  std::string text = "differs: " + source + " " + differences[0];
  for (size_t i = 1; i < differences.size(); ++i) text += ", " + differences[i];
  return text;
}

}  // namespace topoctl
