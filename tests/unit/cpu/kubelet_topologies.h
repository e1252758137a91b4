// kubelet's CPU-manager test topologies (policy_test.go literals), loaded from the hwloc XML
// copies in <shared topologies>/kubelet-test/ and given the Go literals' counters.
#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "lib/cpu/cpu_topology.h"
#include "lib/cpuset/cpuset.h"
#include "tests/support/require_component.h"

namespace topologyd::cpu::testing {

// The shared topology corpus folder (TOPOLOGYD_SHARED_TOPOLOGIES).
std::string SharedTopologiesDir();
// True when the corpus folder with kubelet's test topologies is present.
bool HaveKubeletTopologies();

// `name` as in policy_test.go, e.g. "topoDualSocketHT". The map comes from the XML through
// the real loader and FromTopology(); the five counters are then set to the Go literal's
// (README "Caveats"), which FromTopology() cannot know.
absl::StatusOr<CpuTopology> KubeletTopology(const std::string& name);

// Parses a cpu list or aborts the test binary (test data is static).
CpuSet Cpus(const std::string& list);

}  // namespace topologyd::cpu::testing

// Skips the current test when the corpus is absent.
#define TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES()                                       \
  do {                                                                               \
    if (!::topologyd::cpu::testing::HaveKubeletTopologies()) {                       \
      CORPUS_SKIP_OR_FAIL()                                                          \
          << "kubelet test topologies not found under "                              \
          << ::topologyd::cpu::testing::SharedTopologiesDir()                        \
          << "/kubelet-test (set TOPOLOGYD_SHARED_TOPOLOGIES to the shared corpus)"; \
    }                                                                                \
  } while (false)
