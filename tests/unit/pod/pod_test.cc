// Tests of the Pod model (docs/admission.md, "The pod model"): kubelet's QoS classes
// (ComputePodQOS), requests defaulting, and the effective pod request with init containers
// and sidecars.
#include "lib/pod/pod.h"

#include "gtest/gtest.h"

namespace topologyd::pod {
namespace {

Quantity Q(const char* text) { return *Quantity::Parse(text); }

Container C(std::string name, ResourceList requests, ResourceList limits,
            bool restart_always = false) {
  Container c;
  c.name = std::move(name);
  c.restart_always = restart_always;
  c.requests = std::move(requests);
  c.limits = std::move(limits);
  return c;
}

// A pod with `containers` and, optionally, `init` init containers.
Pod P(std::vector<Container> containers, std::vector<Container> init = {}) {
  Pod pod;
  pod.containers = std::move(containers);
  pod.init_containers = std::move(init);
  return pod;
}

TEST(QosTest, ClassesAsKubeletComputesThem) {
  const ResourceList guaranteed = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  struct Case {
    const char* rule;
    Pod pod;
    QosClass want;
  } cases[] = {
      {"no resources -> BestEffort", P({C("a", {}, {})}), QosClass::kBestEffort},
      {"only extended resources -> BestEffort (only cpu/memory count)",
       P({C("a", {{"nvidia.com/gpu", Q("1")}}, {{"nvidia.com/gpu", Q("1")}})}),
       QosClass::kBestEffort},
      {"zero quantities are ignored -> BestEffort",
       P({C("a", {{"cpu", Q("0")}}, {{"cpu", Q("0")}})}), QosClass::kBestEffort},
      {"requests == limits for cpu and memory -> Guaranteed",
       P({C("a", {{"cpu", Q("2")}, {"memory", Q("1Gi")}},
            {{"cpu", Q("2000m")}, {"memory", Q("1073741824")}})}),
       QosClass::kGuaranteed},
      {"fractional cpu is still Guaranteed (QoS does not care about integrality)",
       P({C("a", {{"cpu", Q("1500m")}, {"memory", Q("1Gi")}},
            {{"cpu", Q("1.5")}, {"memory", Q("1Gi")}})}),
       QosClass::kGuaranteed},
      {"request below limit -> Burstable",
       P({C("a", guaranteed, {{"cpu", Q("2")}, {"memory", Q("1Gi")}})}), QosClass::kBurstable},
      {"memory limit missing -> Burstable", P({C("a", {{"cpu", Q("1")}}, {{"cpu", Q("1")}})}),
       QosClass::kBurstable},
      {"one of two containers without limits -> Burstable",
       P({C("a", guaranteed, guaranteed), C("b", {{"cpu", Q("1")}}, {})}), QosClass::kBurstable},
      {"init container without limits makes the pod Burstable",
       P({C("a", guaranteed, guaranteed)}, {C("i", {{"cpu", Q("1")}}, {})}), QosClass::kBurstable},
      {"Guaranteed init and app containers -> Guaranteed",
       P({C("a", guaranteed, guaranteed)}, {C("i", guaranteed, guaranteed)}),
       QosClass::kGuaranteed},
      {"extended resources do not affect a Guaranteed pod",
       P({C("a", {{"cpu", Q("1")}, {"memory", Q("1Gi")}, {"nvidia.com/gpu", Q("1")}},
            {{"cpu", Q("1")}, {"memory", Q("1Gi")}, {"nvidia.com/gpu", Q("1")}})}),
       QosClass::kGuaranteed},
  };
  for (auto& c : cases) {
    ApplyRequestDefaults(c.pod);
    EXPECT_EQ(ComputeQos(c.pod), c.want) << c.rule;
  }
}

TEST(QosTest, LimitsDefaultRequests) {
  // Rule: the API server copies limits into missing requests, so limits-only is Guaranteed.
  Pod pod = P({C("a", {}, {{"cpu", Q("2")}, {"memory", Q("1Gi")}})});
  EXPECT_EQ(ComputeQos(pod), QosClass::kBurstable);  // before defaulting: no requests at all
  ApplyRequestDefaults(pod);
  EXPECT_EQ(pod.containers[0].requests.at("cpu"), Q("2"));
  EXPECT_EQ(ComputeQos(pod), QosClass::kGuaranteed);
  // An explicit request is kept.
  Pod burst = P({C("a", {{"cpu", Q("1")}}, {{"cpu", Q("2")}, {"memory", Q("1Gi")}})});
  ApplyRequestDefaults(burst);
  EXPECT_EQ(burst.containers[0].requests.at("cpu"), Q("1"));
  EXPECT_EQ(ComputeQos(burst), QosClass::kBurstable);
  EXPECT_EQ(QosClassName(QosClass::kGuaranteed), "Guaranteed");
}

TEST(EffectiveRequestTest, InitContainersAndSidecars) {
  // Rule: max(sum(app) + sum(sidecars),
  //                                   max_i(init_i + sidecars declared before i)).
  Pod pod = P({C("app", {{"cpu", Q("2")}}, {}), C("m", {{"cpu", Q("500m")}}, {})},
              {C("setup", {{"cpu", Q("4")}}, {}),
               C("sidecar", {{"cpu", Q("1")}}, {}, /*restart_always=*/true),
               C("warmup", {{"cpu", Q("6")}}, {})});
  EXPECT_EQ(EffectivePodRequests(pod).at("cpu"), Q("7"));  // warmup 6 + sidecar 1

  pod.init_containers[2].requests["cpu"] = Q("2");
  EXPECT_EQ(EffectivePodRequests(pod).at("cpu"), Q("4"));  // init "setup" alone

  pod.init_containers[0].requests["cpu"] = Q("1");
  EXPECT_EQ(EffectivePodRequests(pod).at("cpu"), Q("3.5"));  // apps 2.5 + sidecar 1
}

TEST(EffectiveRequestTest, ResourceOnlyInInitContainerStillCounts) {
  Pod pod = P({C("a", {{"cpu", Q("1")}}, {})},
              {C("i", {{"example.com/dev", Q("2")}}, {{"example.com/dev", Q("2")}})});
  const ResourceList req = EffectivePodRequests(pod);
  EXPECT_EQ(req.at("example.com/dev"), Q("2"));
  EXPECT_EQ(req.at("cpu"), Q("1"));
  EXPECT_EQ(EffectivePodLimits(pod).at("example.com/dev"), Q("2"));
  EXPECT_EQ(EffectivePodLimits(pod).count("cpu"), 0U);
}

TEST(EffectiveRequestTest, SidecarStacksUnderLaterInitContainers) {
  // Two sidecars then an init container: the init container runs beside both.
  Pod pod = P({C("a", {{"memory", Q("1Gi")}}, {})},
              {C("s1", {{"memory", Q("1Gi")}}, {}, true), C("s2", {{"memory", Q("1Gi")}}, {}, true),
               C("i", {{"memory", Q("3Gi")}}, {})});
  EXPECT_EQ(EffectivePodRequests(pod).at("memory"), Q("5Gi"));
}

TEST(ResourceNameTest, Classifies) {
  EXPECT_TRUE(IsHugePageResourceName("hugepages-2Mi"));
  EXPECT_FALSE(IsHugePageResourceName("hugepages-"));
  EXPECT_FALSE(IsHugePageResourceName("memory"));
  EXPECT_TRUE(IsNativeResourceName("cpu"));
  EXPECT_TRUE(IsNativeResourceName("kubernetes.io/foo"));
  EXPECT_TRUE(IsNativeResourceName("foo.kubernetes.io/bar"));
  EXPECT_FALSE(IsNativeResourceName("nvidia.com/gpu"));
  EXPECT_TRUE(IsExtendedResourceName("nvidia.com/gpu"));
  EXPECT_FALSE(IsExtendedResourceName("memory"));
}

TEST(ResourceQuantityTest, AppliesTheApiServerRules) {
  auto reason = [](std::string_view name, const char* value) {
    return std::string(ValidateResourceQuantity(name, Q(value)).message());
  };
  EXPECT_TRUE(ValidateResourceQuantity("cpu", Q("1500m")).ok());
  EXPECT_TRUE(ValidateResourceQuantity("memory", Q("0.5")).ok());
  EXPECT_EQ(reason("memory", "-1"), "must be greater than or equal to 0");
  // Extended resources: whole numbers only (apimachinery's MilliValue() % 1000 test).
  EXPECT_TRUE(ValidateResourceQuantity("nvidia.com/gpu", Q("2")).ok());
  EXPECT_TRUE(ValidateResourceQuantity("nvidia.com/gpu", Q("3000m")).ok());
  EXPECT_EQ(ValidateResourceQuantity("nvidia.com/gpu", Q("1500m")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reason("nvidia.com/gpu", "1500m"), "must be an integer (got 1500m)");
  EXPECT_EQ(reason("nec.com/ve", "1.001"), "must be an integer (got 1001m)");
  EXPECT_TRUE(ValidateResourceQuantity("kubernetes.io/foo", Q("0.5")).ok());  // native
  EXPECT_TRUE(ValidateResourceQuantity("nvidia.com/gpu", Q("5e15")).ok());  // MilliValue saturates
  EXPECT_TRUE(ValidateResourceQuantity("nvidia.com/gpu", Q("0.9995")).ok());  // rounds up to 1000m
  EXPECT_EQ(reason("nvidia.com/gpu", "0.999"), "must be an integer (got 999m)");
  // Hugepages: a multiple of the size in the name.
  EXPECT_TRUE(ValidateResourceQuantity("hugepages-2Mi", Q("6Mi")).ok());
  EXPECT_TRUE(ValidateResourceQuantity("hugepages-2Mi", Q("0")).ok());
  EXPECT_TRUE(ValidateResourceQuantity("hugepages-1G", Q("3G")).ok());
  EXPECT_EQ(reason("hugepages-2Mi", "3Mi"), "must be a multiple of 2Mi (got 3145728)");
  EXPECT_EQ(reason("hugepages-1Gi", "1.5Gi"), "must be a multiple of 1Gi (got 1610612736)");
  EXPECT_EQ(reason("hugepages-1G", "1Gi"), "must be a multiple of 1G (got 1073741824)");
  for (const char* bad : {"hugepages-x", "hugepages-0", "hugepages-1500m", "hugepages--2Mi"}) {
    EXPECT_EQ(reason(bad, "2Mi").rfind("invalid hugepages page size", 0), 0U) << bad;
  }
}

TEST(ContainerLookupTest, FindsInitThenApp) {
  Pod pod = P({C("a", {}, {})}, {C("i", {}, {}), C("s", {}, {}, true)});
  ASSERT_NE(FindContainer(pod, "a"), nullptr);
  EXPECT_EQ(FindContainer(pod, "zz"), nullptr);
  EXPECT_TRUE(IsRegularInitContainer(pod, "i"));
  EXPECT_FALSE(IsRegularInitContainer(pod, "s"));
  EXPECT_FALSE(IsRegularInitContainer(pod, "a"));
  EXPECT_TRUE(IsSidecarContainer(pod, "s"));
  EXPECT_FALSE(IsSidecarContainer(pod, "i"));
}

}  // namespace
}  // namespace topologyd::pod
