// NumaMask: a set of NUMA nodes as a 64-bit bitmap, and the orderings kubelet's Topology
// Manager uses on such masks.
//
// Bit i stands for the i-th NUMA node of the machine in ascending OS-id order (its
// "position"). On machines with dense ids 0..N-1 position == id, exactly as in kubelet.
// With sparse ids (0,1,4,5 or 252-255) the mapping is monotone, so kubelet's integer
// tie-break and narrowness order give the same answer, and ids above 63 still fit.
// Translation between positions and OS ids happens at the edges (config, JSON, RPC).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace topologyd::hints {

class NumaMask {
 public:
  static constexpr int kMaxNodes = 64;

  constexpr NumaMask() = default;
  constexpr explicit NumaMask(uint64_t bits) : bits_(bits) {}
  // Ids outside [0, 64) are a precondition violation; callers validate input first.
  // The first `n` positions, i.e. every node of an n-node machine (kubelet's default affinity).
  // `n` is clamped to [0, 64].
  static constexpr NumaMask FirstN(int n) {
    return NumaMask(n >= kMaxNodes ? ~uint64_t{0} : n <= 0 ? 0 : (uint64_t{1} << n) - 1);
  }
  static NumaMask Of(const std::vector<int>& ids) {
    uint64_t bits = 0;
    for (int id : ids) bits |= uint64_t{1} << id;
    return NumaMask(bits);
  }

  constexpr uint64_t bits() const { return bits_; }
  constexpr int Count() const { return std::popcount(bits_); }
  constexpr bool IsEmpty() const { return bits_ == 0; }
  constexpr bool Contains(int id) const { return id >= 0 && id < 64 && ((bits_ >> id) & 1U); }
  constexpr NumaMask And(NumaMask other) const { return NumaMask(bits_ & other.bits_); }
  constexpr NumaMask Or(NumaMask other) const { return NumaMask(bits_ | other.bits_); }
  // True when every node of this mask is also in `other`.
  constexpr bool IsSubsetOf(NumaMask other) const { return (bits_ & ~other.bits_) == 0; }
  std::vector<int> Ids() const {
    std::vector<int> ids;
    for (uint64_t b = bits_; b != 0; b &= b - 1) ids.push_back(std::countr_zero(b));
    return ids;
  }

  // kubelet's IsNarrowerThan: fewer nodes, or as many nodes and a smaller integer value.
  constexpr bool IsNarrowerThan(NumaMask other) const {
    int a = Count();
    int b = other.Count();
    return a == b ? bits_ < other.bits_ : a < b;
  }

  friend constexpr bool operator==(NumaMask, NumaMask) = default;

 private:
  uint64_t bits_ = 0;
};

}  // namespace topologyd::hints
