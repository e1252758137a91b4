// Positions and OS ids of a machine's NUMA nodes. Hint masks are over positions (0..N-1: the
// nodes in ascending OS id); people, the kernel and the API see OS ids, which may be sparse.
// Built once per machine; the one translation between the two.
//
// Thread-safety: immutable after construction.
#pragma once

#include <vector>

#include "lib/hints/numa_mask.h"

namespace topologyd::hints {

class NumaIndex {
 public:
  NumaIndex() = default;
  // `ids`: every NUMA node's OS id (any order, duplicates dropped).
  explicit NumaIndex(std::vector<int> ids);

  int size() const { return static_cast<int>(ids_.size()); }
  // OS ids in position order.
  const std::vector<int>& ids() const { return ids_; }
  // The OS id at `position`, or -1 outside [0, size()).
  int Id(int position) const;
  // The position of OS id `id`, or -1 for a node the machine lacks.
  int Position(int id) const;
  // The OS ids of `mask`'s positions (positions the machine lacks are dropped).
  std::vector<int> Ids(NumaMask mask) const;
  // The mask of `ids` (ids the machine lacks, and positions past the mask's 64, are dropped).
  NumaMask Mask(const std::vector<int>& ids) const;

  friend bool operator==(const NumaIndex&, const NumaIndex&) = default;

 private:
  std::vector<int> ids_;  // ascending
};

}  // namespace topologyd::hints
