// The engine against its model: seeded random sequences of admit, re-admit, release of a pod or
// of one container, restart and reload on several machines and policies, with every invariant
// of tests/support/engine_model.h checked after each step.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"

#include "tests/support/engine_model.h"

namespace topologyd::testing {
namespace {

// A state directory on tmpfs where there is one: every step writes the checkpoint durably.
std::string StateDir(const std::string& name) {
  const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                         ? std::filesystem::path("/dev/shm")
                                         : std::filesystem::temp_directory_path();
  std::string pattern = (base / ("topologyd-model-" + name + "-XXXXXX")).string();
  return mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
}

int Env(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

class EngineModelTest : public ::testing::TestWithParam<ModelNode> {};

TEST_P(EngineModelTest, InvariantsHoldAfterEveryStep) {
  // TOPOLOGYD_MODEL_SEEDS / _STEPS: longer runs by hand.
  const int seeds = Env("TOPOLOGYD_MODEL_SEEDS", 30);
  const int steps = Env("TOPOLOGYD_MODEL_STEPS", 300);
  int admitted = 0;
  int refused = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const std::string dir = StateDir(GetParam().name);
    ASSERT_FALSE(dir.empty()) << "cannot make a state directory: " << std::strerror(errno);
    auto model = EngineModel::Start(GetParam(), dir);
    ASSERT_TRUE(model.ok()) << model.status();
    SeededChoices choices(static_cast<uint32_t>(seed), steps);
    for (; choices.More(); choices.Took()) {
      const absl::Status step = (*model)->Step(choices);
      ASSERT_TRUE(step.ok()) << "seed " << seed << ": " << step.message() << "\n"
                             << (*model)->History();
    }
    admitted += (*model)->admitted();
    refused += (*model)->refused();
    model->reset();
    std::filesystem::remove_all(dir);
  }
  // The sequences must exercise admission, not only refusals.
  EXPECT_GT(admitted, seeds * 5);
  std::cout << GetParam().name << ": " << admitted << " admitted, " << refused << " refused\n";
}

INSTANTIATE_TEST_SUITE_P(Nodes, EngineModelTest, ::testing::ValuesIn(ModelNodes()),
                         [](const ::testing::TestParamInfo<ModelNode>& param) {
                           std::string name = param.param.name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace topologyd::testing
