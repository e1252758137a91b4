#include "lib/cpuset/cpuset.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <ostream>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd {
namespace {

constexpr int kWordBits = 64;

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Parses a non-negative decimal id with no sign, spaces or leading '+'.
bool ParseId(std::string_view s, int* out) {
  if (s.empty() || s.size() > 7) return false;
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value < 0) return false;
  *out = value;
  return true;
}

// One element of a list, `a` or `a-b`, as the inclusive range [first, last]. `text` (the whole
// list) and `token` are untrusted and unbounded: messages show them quoted and cut.
absl::Status ParseElement(std::string_view text, std::string_view token, int* first, int* last) {
  const size_t dash = token.find('-');
  bool ok;
  if (dash == std::string_view::npos) {
    ok = ParseId(token, first);
    *last = *first;
  } else {
    ok = ParseId(token.substr(0, dash), first) && ParseId(token.substr(dash + 1), last);
  }
  if (!ok) {
    return absl::InvalidArgumentError(fmt::format("invalid CPU list {}: bad element {}",
                                                  QuoteForMessage(text), QuoteForMessage(token)));
  }
  if (*first > CpuSet::kMaxCpuId || *last > CpuSet::kMaxCpuId) {
    return absl::InvalidArgumentError(fmt::format("invalid CPU list {}: CPU id in {} exceeds {}",
                                                  QuoteForMessage(text), QuoteForMessage(token),
                                                  CpuSet::kMaxCpuId));
  }
  if (*last < *first) {
    return absl::InvalidArgumentError(fmt::format("invalid CPU list {}: range {} is descending",
                                                  QuoteForMessage(text), QuoteForMessage(token)));
  }
  return absl::OkStatus();
}

// Bits lo..hi (0 <= lo <= hi < 64) of a word.
uint64_t BitsFromTo(int lo, int hi) {
  return (~uint64_t{0} >> (kWordBits - 1 - hi)) & (~uint64_t{0} << lo);
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> ids) {
  for (int id : ids) Add(id);
}

CpuSet::CpuSet(const std::vector<int>& ids) {
  for (int id : ids) Add(id);
}

CpuSet CpuSet::Range(int first, int last) {
  CpuSet set;
  set.AddRange(first, last);
  return set;
}

absl::StatusOr<CpuSet> CpuSet::Parse(std::string_view text) {
  text = TrimSpace(text);
  if (text.empty()) return CpuSet();
  std::vector<std::pair<int, int>> ranges;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view token = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    int first = 0;
    int last = 0;
    if (absl::Status s = ParseElement(text, token, &first, &last); !s.ok()) return s;
    ranges.emplace_back(first, last);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return FromRanges(std::move(ranges));
}

CpuSet CpuSet::FromRanges(std::vector<std::pair<int, int>> ranges) {
  // Merged first, so each word is filled once however often the ranges overlap: the cost is
  // O(k log k) for k ranges plus the words of the result.
  std::sort(ranges.begin(), ranges.end());
  CpuSet set;
  size_t i = 0;
  while (i < ranges.size()) {
    const int first = ranges[i].first;
    int last = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= last + 1; ++i) {
      last = std::max(last, ranges[i].second);
    }
    set.AddRange(first, last);
  }
  return set;
}

std::string CpuSet::ToString() const {
  std::string out;
  int run_start = -1;
  int prev = -2;
  auto flush = [&]() {
    if (run_start < 0) return;
    if (!out.empty()) out += ',';
    out += std::to_string(run_start);
    if (prev != run_start) {
      out += '-';
      out += std::to_string(prev);
    }
  };
  for (int id : *this) {
    if (id != prev + 1) {
      flush();
      run_start = id;
    }
    prev = id;
  }
  flush();
  return out;
}

bool CpuSet::Contains(int id) const {
  if (id < 0) return false;
  size_t w = static_cast<size_t>(id / kWordBits);
  return w < words_.size() && ((words_[w] >> (id % kWordBits)) & 1U);
}

int CpuSet::Size() const {
  int n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

int CpuSet::IntersectionSize(const CpuSet& other) const {
  const size_t common = std::min(words_.size(), other.words_.size());
  int n = 0;
  for (size_t i = 0; i < common; ++i) n += std::popcount(words_[i] & other.words_[i]);
  return n;
}

bool CpuSet::IsSubsetOf(const CpuSet& other) const {
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t o = i < other.words_.size() ? other.words_[i] : 0;
    if (words_[i] & ~o) return false;
  }
  return true;
}

bool CpuSet::Intersects(const CpuSet& other) const {
  size_t n = std::min(words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) {
    if (words_[i] & other.words_[i]) return true;
  }
  return false;
}

CpuSet CpuSet::Union(const CpuSet& other) const {
  CpuSet out = *this;
  out.AddAll(other);
  return out;
}

CpuSet CpuSet::Intersection(const CpuSet& other) const {
  CpuSet out;
  size_t n = std::min(words_.size(), other.words_.size());
  out.words_.resize(n);
  for (size_t i = 0; i < n; ++i) out.words_[i] = words_[i] & other.words_[i];
  out.Trim();
  return out;
}

CpuSet CpuSet::Difference(const CpuSet& other) const {
  CpuSet out = *this;
  size_t n = std::min(out.words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) out.words_[i] &= ~other.words_[i];
  out.Trim();
  return out;
}

void CpuSet::Add(int id) {
  if (id < 0) return;
  size_t w = static_cast<size_t>(id / kWordBits);
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (id % kWordBits);
}

void CpuSet::AddRange(int first, int last) {
  first = std::max(first, 0);
  if (last < first) return;
  const size_t first_word = static_cast<size_t>(first / kWordBits);
  const size_t last_word = static_cast<size_t>(last / kWordBits);
  if (last_word >= words_.size()) words_.resize(last_word + 1, 0);
  if (first_word == last_word) {
    words_[first_word] |= BitsFromTo(first % kWordBits, last % kWordBits);
    return;
  }
  words_[first_word] |= BitsFromTo(first % kWordBits, kWordBits - 1);
  for (size_t w = first_word + 1; w < last_word; ++w) words_[w] = ~uint64_t{0};
  words_[last_word] |= BitsFromTo(0, last % kWordBits);
}

void CpuSet::Remove(int id) {
  if (!Contains(id)) return;
  words_[static_cast<size_t>(id / kWordBits)] &= ~(uint64_t{1} << (id % kWordBits));
  Trim();
}

void CpuSet::AddAll(const CpuSet& other) {
  if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
  for (size_t i = 0; i < other.words_.size(); ++i) words_[i] |= other.words_[i];
}

std::vector<int> CpuSet::ToVector() const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(Size()));
  for (int id : *this) out.push_back(id);
  return out;
}

int CpuSet::Min() const { return NextFrom(0); }

int CpuSet::Max() const {
  if (words_.empty()) return -1;
  size_t w = words_.size() - 1;
  return static_cast<int>(w) * kWordBits + (kWordBits - 1 - std::countl_zero(words_[w]));
}

int CpuSet::NextFrom(int from) const {
  if (from < 0) from = 0;
  size_t w = static_cast<size_t>(from / kWordBits);
  if (w >= words_.size()) return -1;
  uint64_t bits = words_[w] & (~uint64_t{0} << (from % kWordBits));
  while (true) {
    if (bits != 0) return static_cast<int>(w) * kWordBits + std::countr_zero(bits);
    if (++w >= words_.size()) return -1;
    bits = words_[w];
  }
}

void CpuSet::Trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

CpuSet::Iterator& CpuSet::Iterator::operator++() {
  id_ = set_->NextFrom(id_ + 1);
  return *this;
}

bool operator==(const CpuSet& a, const CpuSet& b) { return a.words_ == b.words_; }

bool operator<(const CpuSet& a, const CpuSet& b) {
  auto ia = a.begin();
  auto ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if (*ia != *ib) return *ia < *ib;
  }
  return ia == a.end() && ib != b.end();
}

std::ostream& operator<<(std::ostream& os, const CpuSet& set) { return os << set.ToString(); }

}  // namespace topologyd
