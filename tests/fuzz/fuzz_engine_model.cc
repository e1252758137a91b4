// The engine's model-based check (tests/support/engine_model.h) with the fuzzer choosing the
// operations: the first byte picks the node, every later byte one choice of the sequence. A
// broken invariant aborts with the sequence that broke it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/engine_model.h"

using topologyd::testing::ByteChoices;
using topologyd::testing::EngineModel;
using topologyd::testing::ModelNodes;

namespace {

// Long inputs would only repeat what shorter ones reach; the cap keeps each run quick.
constexpr int kMaxSteps = 400;

std::string StateDir() {
  const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                         ? std::filesystem::path("/dev/shm")
                                         : std::filesystem::temp_directory_path();
  std::string pattern = (base / "topologyd-fuzz-model-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) abort();
  return pattern;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& node = ModelNodes()[data[0] % ModelNodes().size()];
  const std::string dir = StateDir();
  {
    auto model = EngineModel::Start(node, dir);
    if (!model.ok()) {
      fprintf(stderr, "the engine does not start: %s\n", model.status().ToString().c_str());
      abort();
    }
    ByteChoices choices(data + 1, size - 1);
    for (int step = 0; step < kMaxSteps && choices.More(); ++step) {
      const absl::Status status = (*model)->Step(choices);
      if (!status.ok()) {
        fprintf(stderr, "%s\n%s\n", status.ToString().c_str(), (*model)->History().c_str());
        abort();
      }
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
