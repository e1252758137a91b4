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

// Within a pod admitted by topologyd (its QoS class is recorded) only containers that never run
// at the same time may share: a regular init container and anything after it.
TEST(StateTest, ValidateRejectsSharingBetweenContainersThatRunTogether) {
  auto pod = [](std::vector<ContainerRecord> containers) {
    State s;
    s.pods["p"] = PodRecord{.uid = "p", .qos = "Guaranteed", .containers = std::move(containers)};
    return s;
  };
  const ContainerRecord init{
      .name = "init", .init = true, .cpus = CpuSet{4, 5, 6}, .exclusive = true};
  ContainerRecord side{.name = "side", .init = true, .cpus = CpuSet{6}, .exclusive = true};
  side.restartable = true;
  const ContainerRecord app{.name = "app", .cpus = CpuSet{6, 7}, .exclusive = true};
  const ContainerRecord app2{.name = "app2", .cpus = CpuSet{5}, .exclusive = true};

  // A finished init container's CPUs taken over by an app container and a sidecar.
  EXPECT_TRUE(Validate(pod({init, app})).ok());
  EXPECT_TRUE(Validate(pod({init, side})).ok());
  // A sidecar and an app container run together.
  absl::Status status = Validate(pod({init, side, app}));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "CPUs 6 are held exclusively by both container \"side\" of pod p and container "
            "\"app\" of pod p, which run at the same time");
  // So do two app containers, whatever order they are recorded in.
  ContainerRecord app3 = app2;
  app3.name = "app3";
  status = Validate(pod({app2, init, app3}));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("which run at the same time"), std::string::npos) << status;
  // A sidecar runs beside a later init container.
  ContainerRecord later_init = init;
  later_init.name = "later-init";
  status = Validate(pod({side, later_init}));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  // Devices follow the same rule.
  ContainerRecord a{.name = "a", .devices = {{"gpu", {"g0"}}}};
  ContainerRecord b{.name = "b", .devices = {{"gpu", {"g0"}}}};
  status = Validate(pod({a, b}));
  EXPECT_EQ(status.message(),
            "device gpu \"g0\" is held by both container \"a\" of pod p and container \"b\" "
            "of pod p, which run at the same time");
  ContainerRecord i{.name = "i", .init = true, .devices = {{"gpu", {"g0"}}}};
  EXPECT_TRUE(Validate(pod({i, a})).ok());
  // A pod imported from kubelet does not say which containers were init containers.
  State imported = pod({app, app3, side});
  imported.pods["p"].qos.clear();
  app3.cpus = CpuSet{6};
  imported.pods["p"].containers[1] = app3;
  EXPECT_TRUE(Validate(imported).ok());
}

}  // namespace
}  // namespace topologyd::state
