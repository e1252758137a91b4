#include "lib/cgroup/planner.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "lib/cgroup/naming.h"

namespace topologyd::cgroup {
namespace {

struct Step {
  int depth;
  CpusetWrite write;
};

std::optional<CpuSet> Known(CgroupVersion version, const std::optional<CpuSet>& value) {
  // In v2 an empty cpuset.cpus/mems is "use the parent's"; it says nothing about the set in
  // force, so it must not be mistaken for a subset of everything.
  if (version == CgroupVersion::kV2 && value && value->IsEmpty()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<CpusetWrite> PlanWrites(CgroupVersion version, const CurrentCpusets& current,
                                    const std::vector<CpusetTarget>& desired) {
  std::vector<const CpusetTarget*> targets;
  std::set<std::string_view> seen;
  for (const CpusetTarget& t : desired) {
    if (seen.insert(t.cgroup).second) targets.push_back(&t);
  }

  std::vector<Step> widen;
  std::vector<Step> narrow;
  for (const CpusetTarget* t : targets) {
    const bool has_managed_descendant = std::any_of(
        targets.begin(), targets.end(),
        [&](const CpusetTarget* other) { return IsCgroupAncestor(t->cgroup, other->cgroup); });
    const auto it = current.find(t->cgroup);
    const int depth = CgroupDepth(t->cgroup);
    for (CpusetFile file : {CpusetFile::kCpus, CpusetFile::kMems}) {
      const std::optional<CpuSet>& wanted = file == CpusetFile::kCpus ? t->cpus : t->mems;
      if (!wanted) continue;
      std::optional<CpuSet> old;
      if (it != current.end()) {
        old = Known(version, file == CpusetFile::kCpus ? it->second.cpus : it->second.mems);
      }
      const CpuSet& value = *wanted;
      if (old && *old == value) continue;
      if (!old || old->IsSubsetOf(value)) {
        widen.push_back({depth, {t->cgroup, file, value, WritePhase::kWiden}});
      } else if (value.IsSubsetOf(*old)) {
        narrow.push_back({depth, {t->cgroup, file, value, WritePhase::kNarrow}});
      } else if (version == CgroupVersion::kV1 && has_managed_descendant) {
        // A managed child may move into CPUs this parent does not have yet, while another
        // child still holds CPUs the parent is about to lose: hold both until phase 2.
        widen.push_back({depth, {t->cgroup, file, old->Union(value), WritePhase::kWiden}});
        narrow.push_back({depth, {t->cgroup, file, value, WritePhase::kNarrow}});
      } else {
        widen.push_back({depth, {t->cgroup, file, value, WritePhase::kWiden}});
      }
    }
  }

  // Widening: shallow first; mems before cpus so tasks never get CPUs whose memory is not
  // allowed yet. Narrowing: deep first; cpus before mems (the mirror image).
  std::sort(widen.begin(), widen.end(), [](const Step& a, const Step& b) {
    return std::tuple(a.depth, std::string_view(a.write.cgroup),
                      a.write.file != CpusetFile::kMems) <
           std::tuple(b.depth, std::string_view(b.write.cgroup), b.write.file != CpusetFile::kMems);
  });
  std::sort(narrow.begin(), narrow.end(), [](const Step& a, const Step& b) {
    return std::tuple(-a.depth, std::string_view(a.write.cgroup),
                      a.write.file != CpusetFile::kCpus) <
           std::tuple(-b.depth, std::string_view(b.write.cgroup),
                      b.write.file != CpusetFile::kCpus);
  });

  std::vector<CpusetWrite> plan;
  plan.reserve(widen.size() + narrow.size());
  for (Step& s : widen) plan.push_back(std::move(s.write));
  for (Step& s : narrow) plan.push_back(std::move(s.write));
  return plan;
}

}  // namespace topologyd::cgroup
