#include "lib/nrt/pod_fingerprint.h"

#include <xxhash.h>

#include <algorithm>

#include "fmt/format.h"

namespace topologyd::nrt {
namespace {

uint64_t XxHash64(std::string_view data, uint64_t seed = 0) {
  return XXH64(data.data(), data.size(), seed);
}

}  // namespace

void PodFingerprint::Add(std::string_view namespace_name, std::string_view name) {
  hashes_.push_back(XxHash64(name, XxHash64(namespace_name)));
}

std::string PodFingerprint::Sign() const {
  std::vector<uint64_t> sorted = hashes_;
  std::sort(sorted.begin(), sorted.end());
  std::string bytes;
  bytes.reserve(sorted.size() * 8);
  for (uint64_t h : sorted) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  }
  return fmt::format("pfp0v001{:016x}", XxHash64(bytes));
}

}  // namespace topologyd::nrt
