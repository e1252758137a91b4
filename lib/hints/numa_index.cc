#include "lib/hints/numa_index.h"

#include <algorithm>
#include <utility>

namespace topologyd::hints {

NumaIndex::NumaIndex(std::vector<int> ids) : ids_(std::move(ids)) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

int NumaIndex::Id(int position) const {
  return position >= 0 && position < size() ? ids_[static_cast<size_t>(position)] : -1;
}

int NumaIndex::Position(int id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  return it != ids_.end() && *it == id ? static_cast<int>(it - ids_.begin()) : -1;
}

std::vector<int> NumaIndex::Ids(NumaMask mask) const {
  std::vector<int> out;
  for (int position : mask.Ids()) {
    if (position < size()) out.push_back(ids_[static_cast<size_t>(position)]);
  }
  return out;
}

NumaMask NumaIndex::Mask(const std::vector<int>& ids) const {
  uint64_t bits = 0;
  for (int id : ids) {
    const int position = Position(id);
    if (position >= 0 && position < NumaMask::kMaxNodes) bits |= uint64_t{1} << position;
  }
  return NumaMask(bits);
}

}  // namespace topologyd::hints
