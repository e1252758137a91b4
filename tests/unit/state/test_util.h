// Helpers shared by the state tests: fixture paths, file reading, sealing edited checkpoints,
// random states.
#pragma once

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/state/checkpoint_checksum.h"
#include "lib/state/checkpoint_codec.h"
#include "lib/state/state.h"

namespace topologyd::state::testing {

inline std::string FixturePath(const std::string& name) {
  return std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/state/" + name;
}

inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << FixturePath(name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `doc` (a checkpoint whose data or version was edited) with the checksum the codec computes
// for it, so that a decode gets past the checksum to what was edited.
inline std::string Sealed(nlohmann::json doc) {
  CheckpointChecksum checksum;
  checksum.AddData(doc["data"].dump());
  doc["checksum"] =
      checksum.Finish(doc["generation"].get<uint64_t>(), doc["version"].get<uint64_t>());
  return doc.dump(2);
}

// EncodeState(s), failing the test when it fails.
inline std::string Encoded(const State& s) {
  absl::StatusOr<std::string> bytes = EncodeState(s);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

// A state with a few pods whose exclusive CPUs are disjoint across pods (as Validate wants).
// With `escapes`, pod names carry characters JSON must escape.
inline State RandomState(std::mt19937& rng, bool escapes = true) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  State s;
  s.generation = rng();
  int next_cpu = 0;
  const int pods = pick(5);
  for (int p = 0; p < pods; ++p) {
    PodRecord pod;
    pod.uid = "uid-" + std::to_string(rng());
    pod.namespace_name = pick(2) ? "ns" : "";
    pod.name = escapes ? "pod-\"" + std::to_string(p) + "\"\\ü"  // quotes, backslash, UTF-8
                       : "pod-" + std::to_string(p) + "ü";
    pod.qos = pick(2) ? "Guaranteed" : "";
    const int containers = pick(4);
    for (int c = 0; c < containers; ++c) {
      ContainerRecord r;
      r.name = "c" + std::to_string(c);
      r.init = pick(2);
      r.restartable = r.init && pick(2);
      r.exclusive = pick(2);
      const int n = pick(6);
      for (int i = 0; i < n; ++i) r.cpus.Add(next_cpu + pick(3) + 2 * i);
      next_cpu += 3 + 2 * n;
      for (int i = 0, k = pick(3); i < k; ++i) r.numa_affinity.push_back(pick(8));
      for (int i = 0, k = pick(3); i < k; ++i) {
        r.memory[pick(4)][pick(2) ? "memory" : "hugepages-2Mi"] = rng() * 4096ull;
      }
      for (int i = 0, k = pick(3); i < k; ++i) {
        r.devices["vendor.com/dev" + std::to_string(i)].push_back("dev-" + std::to_string(rng()));
      }
      r.container_id = pick(2) ? "containerd://" + std::to_string(rng()) : "";
      r.cgroup = pick(2) ? "/kubepods.slice/x" + std::to_string(c) : "";
      pod.containers.push_back(std::move(r));
    }
    s.pods[pod.uid] = std::move(pod);
  }
  return s;
}

}  // namespace topologyd::state::testing
