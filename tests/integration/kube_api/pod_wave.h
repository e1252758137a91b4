// A seeded wave of Guaranteed pods for the cluster test: whole CPUs and memory in sizes that
// fit some NUMA nodes of the recorded machines and not others, so where a pod lands decides
// whether single-numa-node admits it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace topologyd::testing::kube {

struct WavePod {
  std::string name;
  int cpus = 0;
  int memory_gib = 0;
};

// `count` pods "wave-000", "wave-001", ... drawn by a fixed-seed generator: the same wave on
// every machine and compiler (std::mt19937_64's sequence is standard, and the draws use no
// library distribution).
std::vector<WavePod> SeededWave(uint64_t seed, int count);

// The v1 Pod of `pod` in namespace "default": one container "app" with requests = limits.
nlohmann::json PodManifest(const WavePod& pod);

}  // namespace topologyd::testing::kube
