#include "lib/planner/container_plan.h"

#include <gtest/gtest.h>

#include "lib/pod/validate.h"
#include "tests/support/pod_builder.h"

namespace topologyd::planner {
namespace {

pod::Pod ThreeContainerPod() { return ::topologyd::testing::InitSidecarAndTwoApps(); }

std::vector<std::string> Names(const pod::Pod& p) {
  std::vector<std::string> names;
  for (const auto& c : p.init_containers) names.push_back(c.name);
  for (const auto& c : p.containers) names.push_back(c.name);
  return names;
}

// What kubelet sends for a Guaranteed container with `cpus` whole CPUs and `memory` bytes.
RuntimeContainer Guaranteed(std::string name, int cpus, int64_t memory) {
  RuntimeContainer c;
  c.name = std::move(name);
  c.resources.cpu_period = 100000;
  c.resources.cpu_quota = cpus * 100000;
  c.resources.cpu_shares = cpus * 1024;
  c.resources.memory_limit_in_bytes = memory;
  return c;
}

RuntimePod GuaranteedPod() {
  RuntimePod p;
  p.uid = "u1";
  p.namespace_name = "ns";
  p.name = "p";
  p.cgroup_parent = "kubepods/podu1";
  return p;
}

TEST(PodToAdmitTest, APodTopologydDoesNotKnowIsAdmittedWhole) {
  absl::StatusOr<pod::Pod> request = PodToAdmit(ThreeContainerPod(), {}, "init");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(*request, ThreeContainerPod());
}

TEST(PodToAdmitTest, AKnownPodIsSentWithWhatItHoldsPlusTheNewContainerInSpecOrder) {
  // The init container finished and was released; the app container restarts.
  absl::StatusOr<pod::Pod> request = PodToAdmit(ThreeContainerPod(), {"side", "app2"}, "app");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(Names(*request), (std::vector<std::string>{"side", "app", "app2"}));
  EXPECT_TRUE(request->init_containers[0].restart_always);
}

TEST(PodToAdmitTest, AContainerMissingFromTheSpecIsNotFound) {
  EXPECT_EQ(PodToAdmit(ThreeContainerPod(), {}, "debugger").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ResolveSpecTest, TheCallersSpecDecides) {
  RuntimePod runtime = GuaranteedPod();
  runtime.annotations["topologyd.io/resources"] = R"({"containers": [{"name": "x"}]})";
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("app", 2, 1 << 30), ThreeContainerPod(), kDefaultSpecSources,
                  pod::kDefaultMaxContainersPerPod);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->source, "request");
  EXPECT_EQ(spec->pod, ThreeContainerPod());
}

TEST(ResolveSpecTest, TheAnnotationComesBeforeTheEstimate) {
  RuntimePod runtime = GuaranteedPod();
  runtime.annotations["topologyd.io/resources"] =
      R"({"containers": [{"name": "app", "resources": {"limits": {"cpu": "3", "memory": "1Gi"}}}]})";
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("app", 2, 1 << 30), std::nullopt, kDefaultSpecSources,
                  pod::kDefaultMaxContainersPerPod);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->source, "annotation");
  ASSERT_EQ(spec->pod.containers.size(), 1u);
  EXPECT_EQ(spec->pod.containers[0].requests.at("cpu").ToString(), "3");
}

TEST(ResolveSpecTest, AMalformedAnnotationIsAnErrorNotAGuess) {
  RuntimePod runtime = GuaranteedPod();
  runtime.annotations["topologyd.io/resources"] =
      R"({"containers": [{"name": "app", "resources": {"limits": {"cpu": "x"}}}]})";
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("app", 2, 1 << 30), std::nullopt, kDefaultSpecSources,
                  pod::kDefaultMaxContainersPerPod);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(spec.status().message());
  EXPECT_EQ(message.find("pod ns/p: annotation topologyd.io/resources: "), 0u) << message;
  // The annotation is named once.
  EXPECT_EQ(message.find("topologyd.io/resources", message.find("topologyd.io/resources") + 1),
            std::string::npos)
      << message;
}

TEST(ResolveSpecTest, TheEstimateHoldsTheKnownContainersWithTheNewestResources) {
  RuntimePod runtime = GuaranteedPod();
  runtime.containers = {Guaranteed("first", 1, 1 << 28), Guaranteed("app", 1, 1 << 28)};
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("app", 2, 1 << 30), std::nullopt, kDefaultSpecSources,
                  pod::kDefaultMaxContainersPerPod);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->source, "estimate");
  EXPECT_EQ(Names(spec->pod), (std::vector<std::string>{"first", "app"}));
  EXPECT_EQ(spec->pod.containers[1].limits.at("cpu").ToString(), "2");
  EXPECT_EQ(pod::ComputeQos(spec->pod), pod::QosClass::kGuaranteed);
  EXPECT_FALSE(spec->unknown.empty());
}

TEST(ResolveSpecTest, AnEstimateNeedsAQosClassInTheCgroupParent) {
  RuntimePod runtime = GuaranteedPod();
  runtime.cgroup_parent = "/custom";
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("app", 2, 1 << 30), std::nullopt, kDefaultSpecSources,
                  pod::kDefaultMaxContainersPerPod);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(spec.status().message().find("/custom"), std::string::npos);
}

TEST(ResolveSpecTest, WithoutTheEstimateSourceAPodWithoutAnnotationIsRefused) {
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(GuaranteedPod(), Guaranteed("app", 2, 1 << 30), std::nullopt,
                  {SpecSource::kAnnotation}, pod::kDefaultMaxContainersPerPod);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(spec.status().message().find("(annotation)"), std::string::npos);
}

TEST(ResolveSpecTest, AnEstimateWithMoreContainersThanAllowedIsRefused) {
  RuntimePod runtime = GuaranteedPod();
  runtime.containers = {Guaranteed("a", 1, 1 << 28), Guaranteed("b", 1, 1 << 28)};
  absl::StatusOr<ResolvedSpec> spec =
      ResolveSpec(runtime, Guaranteed("c", 1, 1 << 28), std::nullopt, kDefaultSpecSources, 2);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpecSourceTest, WordsRoundTrip) {
  for (SpecSource s : {SpecSource::kAnnotation, SpecSource::kEstimate}) {
    EXPECT_EQ(ParseSpecSource(ToString(s)), s);
  }
  EXPECT_EQ(ParseSpecSource("apiServer"), std::nullopt);
}

}  // namespace
}  // namespace topologyd::planner
