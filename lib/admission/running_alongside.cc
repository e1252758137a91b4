#include "lib/admission/running_alongside.h"

#include <utility>

namespace topologyd::admission {

RunningAlongside::RunningAlongside(const std::vector<pod::OrderedContainer>& order,
                                   std::vector<CpuSet> held) {
  roles_.reserve(order.size());
  for (const pod::OrderedContainer& c : order) roles_.push_back(c.role);
  bool any_held = false;
  for (const CpuSet& cpus : held) any_held = any_held || !cpus.IsEmpty();
  if (!any_held) return;
  held_after_.resize(order.size());
  CpuSet later;
  for (size_t i = order.size(); i-- > 0;) {
    held_after_[i] = later;
    if (i < held.size()) later.AddAll(held[i]);
  }
}

CpuSet RunningAlongside::For(size_t i) const {
  // Containers after `i` run with it unless it is a regular init container, which exits first.
  if (held_after_.empty() || !pod::RunsAlongsideLater(roles_[i])) return earlier_running_;
  return earlier_running_.Union(held_after_[i]);
}

void RunningAlongside::Allocated(size_t i, const CpuSet& cpus) {
  if (pod::RunsAlongsideLater(roles_[i])) earlier_running_.AddAll(cpus);
}

}  // namespace topologyd::admission
