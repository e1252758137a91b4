// Helpers shared by the corpus tests: where the recorded hwloc XMLs live and which are there.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/require_component.h"

namespace topologyd::topology::testing {

// TOPOLOGYD_CORPUS_DIR in the environment overrides the configured folder: the test of the
// missing-corpus rule itself points it at nothing.
inline std::filesystem::path SharedTopologies() {
  const char* dir = std::getenv("TOPOLOGYD_CORPUS_DIR");
  return dir != nullptr && *dir != '\0' ? std::filesystem::path(dir)
                                        : std::filesystem::path(TOPOLOGYD_SHARED_TOPOLOGIES);
}
inline std::filesystem::path KubeletTopologies() { return SharedTopologies() / "kubelet-test"; }

// The *.xml files directly inside `dir`, sorted by name; empty when `dir` is absent.
inline std::vector<std::filesystem::path> XmlFilesIn(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".xml")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace topologyd::topology::testing

// Skips the current test unless the shared topology folder exists; fails it instead when the
// corpus is required (TOPOLOGYD_REQUIRE_CORPUS=1).
#define TOPOLOGYD_REQUIRE_CORPUS()                                                            \
  do {                                                                                        \
    if (!std::filesystem::is_directory(::topologyd::topology::testing::SharedTopologies())) { \
      CORPUS_SKIP_OR_FAIL()                                                                   \
          << "shared hwloc topologies not found at "                                          \
          << ::topologyd::topology::testing::SharedTopologies()                               \
          << " (configure with -DTOPOLOGYD_SHARED_TOPOLOGIES=DIR to run this test)";          \
    }                                                                                         \
  } while (false)
