#include "tests/integration/kube_api/pod_wave.h"

#include <array>
#include <cstdio>
#include <random>

namespace topologyd::testing::kube {

std::vector<WavePod> SeededWave(uint64_t seed, int count) {
  // From what fits the narrowest NUMA nodes of the workers (8 CPUs) to what only the widest
  // take (more than 20); sizes that leave a NUMA node's rest too small for the next pod.
  static constexpr std::array kCpus = {4, 5, 6, 7, 9, 10, 11, 12, 13, 16};
  static constexpr std::array kMemoryGib = {1, 2, 4, 6, 8};
  std::mt19937_64 random(seed);
  std::vector<WavePod> wave;
  for (int i = 0; i < count; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "wave-%03d", i);
    const int cpus = kCpus[random() % kCpus.size()];
    const int memory = kMemoryGib[random() % kMemoryGib.size()];
    wave.push_back({name, cpus, memory});
  }
  return wave;
}

nlohmann::json PodManifest(const WavePod& pod) {
  const nlohmann::json quantities = {{"cpu", std::to_string(pod.cpus)},
                                     {"memory", std::to_string(pod.memory_gib) + "Gi"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", pod.name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"terminationGracePeriodSeconds", 0},
            {"containers",
             {{{"name", "app"},
               {"image", "topologyd.test/busybox:1"},
               {"resources", {{"requests", quantities}, {"limits", quantities}}}}}}}}};
}

}  // namespace topologyd::testing::kube
