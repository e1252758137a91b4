// The static policy over CpuState values and its options (docs/cpu-policy.md).
#include "lib/cpu/static_policy.h"

#include <random>

#include "gtest/gtest.h"

#include "lib/cpu/policy_options.h"
#include "tests/unit/cpu/kubelet_topologies.h"

namespace topologyd::cpu {
namespace {

using testing::Cpus;
using testing::KubeletTopology;

StaticPolicy MustPolicy(const std::string& topo_name, StaticPolicyOptions options,
                        const std::string& reserved) {
  auto topo = KubeletTopology(topo_name);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto policy = StaticPolicy::Create(*topo, options, Cpus(reserved));
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

ContainerRequest Req(const std::string& name, int n, ContainerKind kind = ContainerKind::kApp) {
  return ContainerRequest{"pod1", name, kind, n};
}

// Only whole CPUs of Guaranteed pods are exclusive.
TEST(StaticPolicyTest, GuaranteedCpus) {
  EXPECT_EQ(GuaranteedCpus(true, 2000), 2);
  EXPECT_EQ(GuaranteedCpus(true, 1500), 0);
  EXPECT_EQ(GuaranteedCpus(true, 977), 0);
  EXPECT_EQ(GuaranteedCpus(false, 2000), 0);
  EXPECT_EQ(GuaranteedCpus(true, 0), 0);
}

// Reserved count -> set through takeByTopology with the policy's options.
TEST(StaticPolicyTest, ReservedFromCount) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  auto dual = KubeletTopology("topoDualSocketHT");
  ASSERT_TRUE(dual.ok());
  auto two = ReservedCpusFromCount(*dual, {}, 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->ToString(), "0,6");
  auto quad = KubeletTopology("topoQuadSocketFourWayHT");
  ASSERT_TRUE(quad.ok());
  auto eight = ReservedCpusFromCount(*quad, {}, 8);
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->ToString(), "0,50,109-110,169-170,229-230");
  auto too_many = ReservedCpusFromCount(*dual, {}, 13);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().message(),
            "[cpumanager] unable to reserve the required amount of CPUs (size of  did not equal "
            "13)");
  EXPECT_EQ(*ReservedCpuCount(1500), 2);
  EXPECT_EQ(ReservedCpuCount(0).status().message(),
            "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
            "greater than zero");
  EXPECT_EQ(ReservedCpuCount(std::nullopt).status().message(),
            "[cpumanager] unable to determine reserved CPU resources for static policy");
}

// A reserved CPU outside the topology is a configuration error.
TEST(StaticPolicyTest, ReservedOutsideTopology) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  auto topo = KubeletTopology("topoSingleSocketHT");
  ASSERT_TRUE(topo.ok());
  auto policy = StaticPolicy::Create(*topo, {}, Cpus("9"));
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().message(),
            "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
            "unknown CPU ID: 9");
}

// Start-up fills a fresh state and validates an existing one.
TEST(StaticPolicyTest, StartValidatesState) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicy policy = MustPolicy("topoSingleSocketHT", {}, "0");
  auto fresh = policy.Start(CpuState{});
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->default_cpu_set.ToString(), "0-7");

  CpuState no_pool;
  no_pool.assignments["p"]["c"] = Cpus("1");
  EXPECT_EQ(policy.Start(no_pool).status().message(), "default cpuset cannot be empty");

  // With strict-cpu-reservation the pool is empty once every unreserved CPU is exclusive:
  // kubelet refuses the state its own allocator wrote; topologyd accepts it when the
  // assignments account for every CPU.
  {
    StaticPolicyOptions options;
    options.strict_cpu_reservation = true;
    StaticPolicy strict = MustPolicy("topoSingleSocketHT", options, "0");
    CpuState all_taken;
    all_taken.assignments["p"]["c"] = Cpus("1-7");
    auto started = strict.Start(all_taken);
    ASSERT_TRUE(started.ok()) << started.status();
    EXPECT_TRUE(started->default_cpu_set.IsEmpty());
    CpuState lost;
    lost.assignments["p"]["c"] = Cpus("1-6");
    EXPECT_EQ(strict.Start(lost).status().message(),
              "current set of available CPUs \"1-7\" doesn't match with CPUs in state \"1-6\"");
  }

  CpuState missing_reserved;
  missing_reserved.default_cpu_set = Cpus("1-7");
  EXPECT_EQ(policy.Start(missing_reserved).status().message(),
            "not all reserved cpus: \"0\" are present in defaultCpuSet: \"1-7\"");

  CpuState overlap;
  overlap.default_cpu_set = Cpus("0-7");
  overlap.assignments["p"]["c"] = Cpus("1");
  EXPECT_EQ(policy.Start(overlap).status().message(),
            "pod: p, container: c cpuset: \"1\" overlaps with default cpuset \"0-7\"");

  CpuState lost;
  lost.default_cpu_set = Cpus("0-5");
  EXPECT_EQ(policy.Start(lost).status().message(),
            "current set of available CPUs \"0-7\" doesn't match with CPUs in state \"0-5\"");

  StaticPolicyOptions strict;
  strict.strict_cpu_reservation = true;
  StaticPolicy strict_policy = MustPolicy("topoSingleSocketHT", strict, "0");
  EXPECT_EQ(strict_policy.Start(CpuState{})->default_cpu_set.ToString(), "1-7");
  CpuState leaked;
  leaked.default_cpu_set = Cpus("0-7");
  EXPECT_EQ(strict_policy.Start(leaked).status().message(),
            "some of strictly reserved cpus: \"0\" are present in defaultCpuSet: \"0-7\"");
}

// An app container takes over a finished init container's CPUs.
TEST(StaticPolicyTest, InitContainerCpusAreReused) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicy policy = MustPolicy("topoSingleSocketHT", {}, "");
  CpuState state = *policy.Start(CpuState{});
  auto init = policy.Allocate(state, Req("init", 4, ContainerKind::kInit), std::nullopt);
  ASSERT_TRUE(init.ok()) << init.status();
  EXPECT_EQ(init->cpus.ToString(), "0-1,4-5");
  auto app = policy.Allocate(init->state, Req("app", 2), std::nullopt);
  ASSERT_TRUE(app.ok()) << app.status();
  EXPECT_EQ(app->cpus.ToString(), "0,4");
  EXPECT_EQ(app->state.default_cpu_set.ToString(), "2-3,6-7");

  // Removing the app keeps the CPUs the init container still holds out of the pool.
  CpuState after_app = policy.RemoveContainer(app->state, "pod1", "app");
  EXPECT_EQ(after_app.default_cpu_set.ToString(), "2-3,6-7");
  CpuState after_init = policy.RemoveContainer(after_app, "pod1", "init");
  EXPECT_EQ(after_init.default_cpu_set.ToString(), "0-7");
  EXPECT_TRUE(after_init.assignments.empty());
  // Unknown containers: no-op.
  EXPECT_EQ(policy.RemoveContainer(after_init, "pod1", "nope"), after_init);
}

// A sidecar's CPUs are never reused.
TEST(StaticPolicyTest, SidecarCpusAreNotReused) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicy policy = MustPolicy("topoSingleSocketHT", {}, "");
  CpuState state = *policy.Start(CpuState{});
  auto sidecar =
      policy.Allocate(state, Req("sidecar", 4, ContainerKind::kRestartableInit), std::nullopt);
  ASSERT_TRUE(sidecar.ok());
  EXPECT_EQ(sidecar->cpus.ToString(), "0-1,4-5");
  auto app = policy.Allocate(sidecar->state, Req("app", 2), std::nullopt);
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->cpus.ToString(), "2,6");
  EXPECT_EQ(app->state.default_cpu_set.ToString(), "3,7");
}

// Shared-pool containers change nothing; an existing assignment is kept.
TEST(StaticPolicyTest, SharedAndRepeatedAllocations) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicy policy = MustPolicy("topoDualSocketHT", {}, "0,6");
  CpuState state = *policy.Start(CpuState{});
  auto shared = policy.Allocate(state, Req("shared", 0), std::nullopt);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->state, state);
  EXPECT_TRUE(shared->cpus.IsEmpty());
  auto first = policy.Allocate(state, Req("c", 2), std::nullopt);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->cpus.Intersects(Cpus("0,6")));  // reserved never handed out
  auto again = policy.Allocate(first->state, Req("c", 2), std::nullopt);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->cpus, first->cpus);
  EXPECT_EQ(again->state.default_cpu_set, first->state.default_cpu_set);
  auto too_many = policy.Allocate(first->state, Req("big", 9), std::nullopt);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().message(),
            "not enough cpus available to satisfy request: requested=9, available=8");
  EXPECT_EQ(RejectionSummary(too_many.status()),
            "the container asks 9 CPUs, 8 are free for exclusive use");
  EXPECT_EQ(RejectionReason(too_many.status()), "UnexpectedAdmissionError");
}

// Hybrid part (24 CPUs / 16 cores: kubelet counts 1 CPU per core although cores 8-15 have
// two threads, c and c+8). With thread 16 held elsewhere, kubelet's allocator takes core 8
// whole, 16 included; topologyd keeps 8 and takes the rest from what is free.
TEST(StaticPolicyTest, HybridCoresNeverHandOutAHeldThread) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  const std::string hybrid = "topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore";
  StaticPolicy policy = MustPolicy(hybrid, {}, "0");
  CpuState state = *policy.Start(CpuState{});
  state.assignments["other"]["held"] = Cpus("1-7,16");
  state.default_cpu_set = Cpus("0,8-15,17-23");
  auto two = policy.Allocate(state, Req("c", 2), std::nullopt);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->cpus.Size(), 2);
  EXPECT_TRUE(two->cpus.Contains(8)) << "the free part of kubelet's choice is kept";
  EXPECT_FALSE(two->cpus.Contains(16)) << two->cpus.ToString();

  // Any held set, any size that fits: never a held CPU, always the size asked for.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    CpuState s = *policy.Start(CpuState{});
    CpuSet held;
    for (int cpu = 1; cpu < 24; ++cpu) {
      if (rng() % 3 == 0) held = held.Union(CpuSet({cpu}));
    }
    s.assignments["other"]["held"] = held;
    s.default_cpu_set = s.default_cpu_set.Difference(held);
    const int free = s.default_cpu_set.Size() - 1;  // CPU 0 is reserved
    if (free < 1) continue;
    const int n = 1 + static_cast<int>(rng() % static_cast<unsigned>(free));
    auto r = policy.Allocate(s, Req("c", n), std::nullopt);
    ASSERT_TRUE(r.ok()) << "held " << held.ToString() << ", " << n << ": " << r.status();
    EXPECT_EQ(r->cpus.Size(), n) << "held " << held.ToString();
    EXPECT_FALSE(r->cpus.Intersects(held))
        << "held " << held.ToString() << " got " << r->cpus.ToString();
    EXPECT_FALSE(r->cpus.Contains(0)) << "reserved CPU handed out";
  }
}

// full-pcpus-only: SMTAlignmentError, checked before "already allocated".
TEST(StaticPolicyTest, FullPcpusOnly) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicyOptions options;
  options.full_pcpus_only = true;
  StaticPolicy policy = MustPolicy("topoSingleSocketHT", options, "0");
  CpuState state = *policy.Start(CpuState{});
  auto odd = policy.Allocate(state, Req("c", 3), std::nullopt);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(),
            "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
  EXPECT_EQ(RejectionReason(odd.status()), "SMTAlignmentError");
  auto big = policy.Allocate(state, Req("c", 8), std::nullopt);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 6, "
            "requested CPUs = 8, CPUs per core = 2");
  auto ok = policy.Allocate(state, Req("c", 4), std::nullopt);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->cpus.ToString(), "1-2,5-6");
  // Quirk 7: the SMT check runs before the "already allocated" shortcut.
  CpuState drained = ok->state;
  drained.default_cpu_set = Cpus("0,3,4,7");
  auto repeat = policy.Allocate(drained, Req("c", 4), std::nullopt);
  ASSERT_FALSE(repeat.ok());
  EXPECT_EQ(RejectionReason(repeat.status()), "SMTAlignmentError");
}

// The affinity is filled first, then the rest from anywhere.
TEST(StaticPolicyTest, AffinityFirstThenTheRest) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicy policy = MustPolicy("topoDualSocketHT", {}, "");
  CpuState state = *policy.Start(CpuState{});
  auto got = policy.Allocate(state, Req("c", 8), hints::NumaMask::Of({1}));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->cpus.ToString(), "0-1,3,5-7,9,11");

  StaticPolicyOptions by_socket;
  by_socket.align_by_socket = true;
  StaticPolicy socket_policy = MustPolicy("topoDualSocketMultiNumaPerSocketHT", by_socket, "");
  CpuState sparse;
  sparse.default_cpu_set = Cpus("2,11,21,22");
  auto aligned = socket_policy.Allocate(sparse, Req("c", 2), hints::NumaMask::Of({0, 2}));
  ASSERT_TRUE(aligned.ok());
  EXPECT_EQ(aligned->cpus.ToString(), "2,11");
  StaticPolicy plain = MustPolicy("topoDualSocketMultiNumaPerSocketHT", {}, "");
  auto unaligned = plain.Allocate(sparse, Req("c", 2), hints::NumaMask::Of({0, 2}));
  ASSERT_TRUE(unaligned.ok());
  EXPECT_EQ(unaligned->cpus.ToString(), "2,21");
}

// Option parsing, gates, values and the incompatible pairs.
TEST(PolicyOptionsTest, ParseAndValidate) {
  auto ok =
      ParseStaticPolicyOptions({{"full-pcpus-only", "true"}, {"strict-cpu-reservation", "1"}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->full_pcpus_only);
  EXPECT_TRUE(ok->strict_cpu_reservation);
  EXPECT_EQ(ParseStaticPolicyOptions({{"scale-delay-time", "1s"}}).status().message(),
            "unknown CPU Manager Policy option: \"scale-delay-time\"");
  EXPECT_EQ(ParseStaticPolicyOptions({{"align-by-socket", "true"}}).status().message(),
            "CPU Manager Policy Alpha-level Options not enabled, but option \"align-by-socket\" "
            "provided");
  EXPECT_EQ(ParseStaticPolicyOptions({{"distribute-cpus-across-numa", "true"}},
                                     PolicyOptionGates{false, false})
                .status()
                .message(),
            "CPU Manager Policy Beta-level Options not enabled, but option "
            "\"distribute-cpus-across-numa\" provided");
  EXPECT_EQ(ParseStaticPolicyOptions({{"full-pcpus-only", "yes"}}).status().message(),
            "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"yes\": "
            "invalid syntax");
  const PolicyOptionGates all{true, true};
  EXPECT_EQ(ParseStaticPolicyOptions(
                {{"full-pcpus-only", "true"}, {"distribute-cpus-across-cores", "true"}}, all)
                .status()
                .message(),
            "static policy options full-pcpus-only and distribute-cpus-across-cores can not be "
            "used at the same time");
  EXPECT_EQ(
      ParseStaticPolicyOptions(
          {{"distribute-cpus-across-numa", "true"}, {"distribute-cpus-across-cores", "true"}}, all)
          .status()
          .message(),
      "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores "
      "can not be used at the same time");
  EXPECT_EQ(ParseStaticPolicyOptions({{"prefer-align-cpus-by-uncorecache", "true"},
                                      {"distribute-cpus-across-numa", "true"}})
                .status()
                .message(),
            "static policy options prefer-align-cpus-by-uncorecache and "
            "distribute-cpus-across-numa can not be used at the same time");
  // A false option is off and conflicts with nothing.
  EXPECT_TRUE(ParseStaticPolicyOptions(
                  {{"full-pcpus-only", "false"}, {"distribute-cpus-across-cores", "true"}}, all)
                  .ok());
  EXPECT_TRUE(ParseStaticPolicyOptions({{"full-pcpus-only", "true"},
                                        {"distribute-cpus-across-numa", "true"},
                                        {"strict-cpu-reservation", "true"}})
                  .ok());
  EXPECT_EQ(ValidateNonePolicyOptions({{"a", "b"}}).message(),
            "None policy: received unsupported options=map[a:b]");
}

// Align-by-socket machine checks.
TEST(PolicyOptionsTest, AlignBySocketMachineChecks) {
  TOPOLOGYD_REQUIRE_KUBELET_TOPOLOGIES();
  StaticPolicyOptions options;
  options.align_by_socket = true;
  auto multi = KubeletTopology("topoDualSocketMultiNumaPerSocketHT");
  ASSERT_TRUE(multi.ok());
  EXPECT_TRUE(ValidateStaticPolicyOptionsForMachine(options, *multi, "best-effort").ok());
  EXPECT_EQ(ValidateStaticPolicyOptionsForMachine(options, *multi, "single-numa-node").message(),
            "Topolgy manager single-numa-node policy is incompatible with CPUManager "
            "align-by-socket policy option");
  auto fake = KubeletTopology("fakeTopoMultiSocketDualSocketPerNumaHT");
  ASSERT_TRUE(fake.ok());
  EXPECT_EQ(ValidateStaticPolicyOptionsForMachine(options, *fake, "none").message(),
            "Align by socket is not compatible with hardware where number of sockets are more "
            "than number of NUMA");
}

}  // namespace
}  // namespace topologyd::cpu
