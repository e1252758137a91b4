#include "lib/state/state.h"

#include "gtest/gtest.h"

namespace topologyd::state {
namespace {

State TwoPods() {
  State s;
  s.pods["a"] = PodRecord{.uid = "a",
                          .containers = {ContainerRecord{.name = "x",
                                                         .cpus = CpuSet{2, 3},
                                                         .exclusive = true,
                                                         .memory = {{0, {{"memory", 100}}}},
                                                         .devices = {{"gpu", {"g0"}}}}}};
  s.pods["b"] =
      PodRecord{.uid = "b",
                .containers = {
                    ContainerRecord{.name = "y",
                                    .cpus = CpuSet{4},
                                    .exclusive = true,
                                    .memory = {{0, {{"memory", 50}}}, {1, {{"hugepages-2Mi", 7}}}}},
                    ContainerRecord{.name = "shared", .cpus = CpuSet{0, 1}}}};
  return s;
}

TEST(StateTest, ExclusiveCpusIgnoresSharedContainers) {
  EXPECT_EQ(ExclusiveCpus(TwoPods()), (CpuSet{2, 3, 4}));
  EXPECT_TRUE(ExclusiveCpus(State{}).IsEmpty());
}

TEST(StateTest, MemoryInUseSumsPerNodeAndResource) {
  auto total = MemoryInUse(TwoPods());
  EXPECT_EQ(total[0]["memory"], 150u);
  EXPECT_EQ(total[1]["hugepages-2Mi"], 7u);
}

TEST(StateTest, FindContainer) {
  State s = TwoPods();
  ASSERT_NE(FindContainer(s, "b", "y"), nullptr);
  EXPECT_EQ(FindContainer(s, "b", "y")->cpus, CpuSet{4});
  EXPECT_EQ(FindContainer(s, "b", "z"), nullptr);
  EXPECT_EQ(FindContainer(s, "c", "y"), nullptr);
}

TEST(StateTest, EqualityComparesEveryField) {
  State a = TwoPods();
  State b = TwoPods();
  EXPECT_EQ(a, b);
  b.pods["a"].containers[0].devices["gpu"].push_back("g1");
  EXPECT_NE(a, b);
  b = a;
  b.generation = 1;
  EXPECT_NE(a, b);
}

TEST(StateTest, ValidateAcceptsDisjointAndSamePodSharing) {
  State s = TwoPods();
  EXPECT_TRUE(Validate(s).ok());
  // An init container's CPUs and devices are reused by later containers of its pod.
  s.pods["a"].containers.push_back(ContainerRecord{.name = "init",
                                                   .init = true,
                                                   .cpus = CpuSet{2},
                                                   .exclusive = true,
                                                   .devices = {{"gpu", {"g0"}}}});
  EXPECT_TRUE(Validate(s).ok());
}

TEST(StateTest, ValidateRejectsConflicts) {
  State s = TwoPods();
  s.pods["b"].containers[0].cpus.Add(3);
  absl::Status status = Validate(s);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("CPUs 3"), std::string::npos) << status;

  s = TwoPods();
  s.pods["b"].containers[0].devices["gpu"] = {"g0"};
  EXPECT_EQ(Validate(s).code(), absl::StatusCode::kFailedPrecondition);

  s = TwoPods();
  s.pods["b"].containers[1].name = "y";
  EXPECT_EQ(Validate(s).code(), absl::StatusCode::kInvalidArgument);

  s = TwoPods();
  s.pods["b"].uid = "c";
  EXPECT_EQ(Validate(s).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace topologyd::state
