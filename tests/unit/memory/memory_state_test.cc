// Memory state tests: the default machine state and reservedMemory and validateState
// (docs/admission.md, "Memory and hugepages"). Cases marked "kubelet:" transcribe
// memorymanager/policy_static_test.go (TestStaticPolicyNew / TestStaticPolicyStart).
#include "lib/memory/memory_state.h"

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/memory/memory_policy.h"
#include "tests/unit/memory/memory_test_util.h"

namespace topologyd::memory {
namespace {

using namespace ::topologyd::memory::testing;  // NOLINT
using ::testing::HasSubstr;

TEST(MemoryStateTest, HugePageResourceNames) {
  EXPECT_EQ(HugePageResourceName(2048), "hugepages-2Mi");
  EXPECT_EQ(HugePageResourceName(1048576), "hugepages-1Gi");
  EXPECT_EQ(HugePageResourceName(64), "hugepages-64Ki");
  EXPECT_EQ(HugePageResourceName(16384), "hugepages-16Mi");
  EXPECT_EQ(HugePageResourceName(524288), "hugepages-512Mi");
  EXPECT_EQ(HugePageResourceName(16 * 1048576), "hugepages-16Gi");
}

TEST(MemoryStateTest, KubeletDefaultMachineState) {
  // kubelet: "should fill the state with default values, when the state is empty".
  auto state = NewMemoryState(Topo(1, 3 * kGb, 1), {{0, {{"memory", 512 * kMb}}}});
  ASSERT_TRUE(state.ok()) << state.status();
  const NumaNodeState& n = state->machine_state.at(0);
  EXPECT_EQ(n.memory_map.at("memory"), Table(3 * kGb, 512 * kMb, 1536 * kMb, 0, 1536 * kMb));
  EXPECT_EQ(n.memory_map.at("hugepages-1Gi"), Table(kGb, 0, kGb, 0, kGb));
  EXPECT_EQ(n.cells, std::vector<int>{0});
  EXPECT_EQ(n.number_of_assignments, 0);
}

TEST(MemoryStateTest, ReservedHugepagesReduceAllocatable) {
  auto state =
      NewMemoryState(Topo(2, 8 * kGb, 4), {{0, {{"memory", kGb}, {"hugepages-1Gi", 2 * kGb}}}});
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->machine_state.at(0).memory_map.at("hugepages-1Gi"),
            Table(4 * kGb, 2 * kGb, 2 * kGb, 0, 2 * kGb));
  // memory allocatable = total - reserved - all hugepage pools
  EXPECT_EQ(state->machine_state.at(0).memory_map.at("memory").allocatable, 3 * kGb);
  EXPECT_EQ(state->machine_state.at(1).memory_map.at("memory").allocatable, 4 * kGb);
}

TEST(MemoryStateTest, ReservedMemoryValidation) {
  const auto topo = Topo(2, 4 * kGb, 1);
  struct Case {
    std::vector<ReservedMemory> reserved;
    const char* message;
  } cases[] = {
      // kubelet: "should fail, when machine does not have reserved memory for the system workloads"
      {{}, "[memorymanager] you should specify the system reserved memory"},
      {{{0, {{"hugepages-1Gi", kGb}}}}, "you should specify the system reserved memory"},
      {{{7, {{"memory", kGb}}}}, "reservedMemory[0] (numaNode 7): no such NUMA node"},
      {{{0, {{"memory", kGb}}}, {0, {{"memory", kGb}}}}, "NUMA node listed twice"},
      {{{0, {{"memory", kGb}, {"cpu", 1}}}}, "resource \"cpu\""},
      {{{0, {{"memory", kGb}, {"hugepages-2Mi", 2 * kMb}}}}, "resource \"hugepages-2Mi\""},
      {{{0, {{"memory", 0}}}}, "zero limit"},
      {{{0, {{"memory", kGb}, {"hugepages-1Gi", 2 * kGb}}}}, "bytes reserved but the node has"},
  };
  for (const Case& c : cases) {
    const absl::Status s = ValidateReservedMemory(c.reserved, topo);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
  // kubelet: "should succeed, when at least one NUMA node has reserved memory".
  EXPECT_TRUE(ValidateReservedMemory({{0, {}}, {1, {{"memory", 512 * kMb}}}}, topo).ok());
}

// Per type, the sum over the nodes equals Node Allocatable's reservation.
TEST(MemoryStateTest, ReservedTotalsMustEqualNodeAllocatable) {
  const std::vector<ReservedMemory> reserved = {{0, {{"memory", kGb}, {"hugepages-1Gi", kGb}}},
                                                {1, {{"memory", kGb}}}};
  // Resources other than memory types are not compared.
  EXPECT_TRUE(
      ValidateReservedTotals(reserved, {{"memory", 2 * kGb}, {"hugepages-1Gi", kGb}, {"cpu", 2}})
          .ok());
  const absl::Status less =
      ValidateReservedTotals(reserved, {{"memory", kGb}, {"hugepages-1Gi", kGb}});
  EXPECT_EQ(less.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(less.message(), fmt::format("the total amount \"{}\" of type \"memory\" is not "
                                        "equal to the value \"{}\" determined by Node "
                                        "Allocatable feature",
                                        2 * kGb, kGb));
  // A type named on one side only is zero on the other.
  EXPECT_THAT(std::string(ValidateReservedTotals(reserved, {{"memory", 2 * kGb}}).message()),
              HasSubstr("of type \"hugepages-1Gi\""));
  EXPECT_THAT(std::string(ValidateReservedTotals(reserved, {{"memory", 2 * kGb},
                                                            {"hugepages-1Gi", kGb},
                                                            {"hugepages-2Mi", 2 * kMb}})
                              .message()),
              HasSubstr("the total amount \"0\" of type \"hugepages-2Mi\""));
}

TEST(MemoryStateTest, KubeletValidateState) {
  const auto topo = Topo(1, 2 * kGb, 1);
  const std::vector<ReservedMemory> reserved = {{0, {{"memory", 512 * kMb}}}};
  // A hugepage pool that takes all memory would leave nothing: refused at creation.
  EXPECT_FALSE(NewMemoryState(Topo(1, kGb, 1), reserved).ok());

  MemoryState fresh = *NewMemoryState(topo, reserved);
  EXPECT_TRUE(ValidateMemoryState(fresh, topo, reserved).ok());

  MemoryState empty;
  empty.assignments["pod"]["container1"] = {Block{{0}, "memory", 512 * kMb}};
  // kubelet: "should fail, if machine state is empty, but it has memory assignments"
  EXPECT_EQ(std::string(ValidateMemoryState(empty, topo, reserved).message()),
            "[memorymanager] machine state can not be empty when it has memory assignments");

  const std::string differs =
      "[memorymanager] the expected machine state is different from the real one";
  {
    // kubelet: "should fail when machine state does not have all NUMA nodes"
    MemoryState s = fresh;
    EXPECT_EQ(std::string(ValidateMemoryState(s, Topo(2, 2 * kGb, 1), reserved).message()),
              differs);
  }
  {
    // kubelet: "should fail when machine state does not have memory resource"
    MemoryState s = fresh;
    s.machine_state.at(0).memory_map.erase("memory");
    EXPECT_EQ(std::string(ValidateMemoryState(s, topo, reserved).message()), differs);
  }
  {
    // kubelet: "should fail when machine state has wrong size of total memory"
    MemoryState s = fresh;
    s.machine_state.at(0).memory_map.at("memory").total = 1536 * kMb;
    EXPECT_EQ(std::string(ValidateMemoryState(s, topo, reserved).message()), differs);
  }
  {
    // kubelet: "should fail when machine state has wrong size of system reserved memory"
    MemoryState s = fresh;
    s.machine_state.at(0).memory_map.at("memory").system_reserved = 1024;
    EXPECT_EQ(std::string(ValidateMemoryState(s, topo, reserved).message()), differs);
  }
  {
    // kubelet: "should fail when machine state reserved memory is different from the memory of
    // all containers memory assignments"
    MemoryState s = fresh;
    s.assignments["pod"]["container1"] = {Block{{0}, "memory", 512 * kMb}};
    s.machine_state.at(0).number_of_assignments = 1;
    EXPECT_EQ(std::string(ValidateMemoryState(s, topo, reserved).message()), differs);
  }
  {
    // kubelet: "should fail when machine state has wrong size of hugepages"
    EXPECT_EQ(
        std::string(ValidateMemoryState(fresh, Topo(1, 2 * kGb + kGb, 2), reserved).message()),
        differs);
  }
  {
    // A replayed assignment on a node that does not exist.
    MemoryState s = fresh;
    s.assignments["pod"]["c"] = {Block{{3}, "memory", kMb}};
    EXPECT_THAT(std::string(ValidateMemoryState(s, topo, reserved).message()),
                HasSubstr("the memory assignment uses the NUMA that does not exist"));
  }
  {
    // A type the machine lacks: refused when the block holds bytes of it...
    MemoryState s = fresh;
    s.assignments["pod"]["c"] = {Block{{0}, "hugepages-2Mi", 2 * kMb}};
    s.machine_state.at(0).number_of_assignments = 1;
    EXPECT_THAT(std::string(ValidateMemoryState(s, topo, reserved).message()),
                HasSubstr("the memory assignment uses memory resource that does not exist"));
    // ...accepted for a zero request, which admission allows and which takes nothing (kubelet
    // would refuse to restart on its own state here).
    s.assignments["pod"]["c"] = {Block{{0}, "hugepages-2Mi", 0}};
    EXPECT_TRUE(ValidateMemoryState(s, topo, reserved).ok());
  }
}

}  // namespace
}  // namespace topologyd::memory
