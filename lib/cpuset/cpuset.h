// CpuSet: an immutable-by-convention set of logical CPU ids (Linux "processor" numbers,
// hwloc PU OS indexes) with the Linux list syntax ("0-3,8,10-11") used by sysfs, cgroupfs
// and kubelet's checkpoints.
//
// The representation is a dense bitmap, so set algebra is word-parallel and iteration is
// always in ascending id order, which the CPU allocator relies on for kubelet's tie-breaks.
// Values are cheap to copy for machines of a few thousand CPUs. Not thread-safe to mutate;
// const access from many threads is fine.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace topologyd {

class CpuSet {
 public:
  // The largest CPU id accepted by Parse(); guards against "0-4000000000" allocating gigabytes.
  static constexpr int kMaxCpuId = (1 << 20) - 1;

  CpuSet() = default;
  CpuSet(std::initializer_list<int> ids);
  explicit CpuSet(const std::vector<int>& ids);

  // [first, last], inclusive, like "first-last" (negative ids are left out). Empty when
  // last < first.
  static CpuSet Range(int first, int last);

  // Parses Linux list syntax: comma-separated ids or inclusive ranges `a-b`, no spaces
  // inside tokens; surrounding whitespace and a trailing newline (as read from sysfs) are
  // accepted; "" is the empty set. Time is linear in the text (up to sorting its elements)
  // plus the size of the result, however the ranges overlap. INVALID_ARGUMENT names the
  // offending token; the message shows the list and the token quoted, escaped and cut to 64
  // bytes (lib/common/quote.h).
  static absl::StatusOr<CpuSet> Parse(std::string_view text);

  // Sorted, consecutive runs as `a-b`, singletons as `a`, comma-joined; "" when empty.
  std::string ToString() const;

  bool Contains(int id) const;
  int Size() const;
  bool IsEmpty() const { return Size() == 0; }
  bool IsSubsetOf(const CpuSet& other) const;
  bool Intersects(const CpuSet& other) const;
  // Intersection(other).Size() without building the intersection.
  int IntersectionSize(const CpuSet& other) const;

  CpuSet Union(const CpuSet& other) const;
  CpuSet Intersection(const CpuSet& other) const;
  CpuSet Difference(const CpuSet& other) const;

  // Mutators, for builders; values handed around should be treated as immutable.
  void Add(int id);
  // Adds [first, last] a word at a time (negative ids are left out).
  void AddRange(int first, int last);
  void Remove(int id);
  void AddAll(const CpuSet& other);

  // Ascending ids.
  std::vector<int> ToVector() const;
  // Smallest id; -1 when empty.
  int Min() const;
  // Largest id; -1 when empty.
  int Max() const;

  // Iteration in ascending order: `for (int cpu : set)`.
  class Iterator {
   public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    Iterator(const CpuSet* set, int id) : set_(set), id_(id) {}
    int operator*() const { return id_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return id_ == other.id_; }

   private:
    const CpuSet* set_;
    int id_;
  };
  Iterator begin() const { return Iterator(this, NextFrom(0)); }
  Iterator end() const { return Iterator(this, -1); }

  friend bool operator==(const CpuSet& a, const CpuSet& b);
  // A strict weak order (by ascending id sequence) so CpuSets can key ordered containers.
  friend bool operator<(const CpuSet& a, const CpuSet& b);

 private:
  // The union of the inclusive ranges [first, last] (each 0 <= first <= last <= kMaxCpuId).
  static CpuSet FromRanges(std::vector<std::pair<int, int>> ranges);
  // Smallest id >= from that is in the set, or -1.
  int NextFrom(int from) const;
  void Trim();

  std::vector<uint64_t> words_;  // bit i of words_[w] is CPU 64*w+i; no trailing zero words.
};

std::ostream& operator<<(std::ostream& os, const CpuSet& set);

}  // namespace topologyd
