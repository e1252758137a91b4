// XXH64, the 64-bit xxHash (Yann Collet's specification, "xxhash_spec.md"): the hash the pod
// fingerprint of NodeResourceTopology objects is built from. Only the one-shot form; the
// fingerprint hashes whole byte strings.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace topologyd::nrt {

// XXH64 of `data` with `seed`.
uint64_t XxHash64(std::string_view data, uint64_t seed = 0);

}  // namespace topologyd::nrt
