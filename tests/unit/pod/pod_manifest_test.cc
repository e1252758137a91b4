// Tests of ParsePodManifest with real Pod manifests (tests/fixtures/pods) and error paths.
#include "lib/pod/pod_manifest.h"

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::pod {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Quantity Q(const char* text) { return *Quantity::Parse(text); }

TEST(PodManifestTest, GuaranteedGpuPod) {
  auto pod = ParsePodManifest(ReadFixture("guaranteed-gpu.yaml"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "cuda-train");
  EXPECT_EQ(pod->namespace_name, "ml");
  EXPECT_EQ(pod->uid, "6f1c2d3e-1111-4a4a-9b9b-0123456789ab");
  EXPECT_EQ(pod->annotations.at("topologyd.io/topology-policy"), "single-numa-node");
  ASSERT_EQ(pod->containers.size(), 1U);
  const Container& c = pod->containers[0];
  EXPECT_EQ(c.name, "trainer");
  EXPECT_EQ(c.requests.at("cpu").MilliValue(), 8000);
  EXPECT_EQ(c.limits.at("memory").Value(), int64_t{32} << 30);
  EXPECT_EQ(c.limits.at("hugepages-1Gi").Value(), int64_t{4} << 30);
  EXPECT_EQ(c.limits.at("nvidia.com/gpu").Value(), 2);
  EXPECT_EQ(ComputeQos(*pod), QosClass::kGuaranteed);
}

TEST(PodManifestTest, SidecarsAndDefaultedRequests) {
  auto pod = ParsePodManifest(ReadFixture("sidecar-init.yaml"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->namespace_name, "default");
  ASSERT_EQ(pod->init_containers.size(), 3U);
  EXPECT_FALSE(pod->init_containers[0].restart_always);
  EXPECT_TRUE(pod->init_containers[1].restart_always);
  EXPECT_FALSE(pod->init_containers[2].restart_always);
  // Limits-only containers get requests == limits, so the pod is Guaranteed.
  EXPECT_EQ(pod->containers[0].requests.at("intel.com/sriov_netdevice"), Q("2"));
  EXPECT_EQ(ComputeQos(*pod), QosClass::kGuaranteed);
  const ResourceList eff = EffectivePodRequests(*pod);
  EXPECT_EQ(eff.at("cpu"), Q("7"));          // warmup 6 + sidecar 1
  EXPECT_EQ(eff.at("memory"), Q("4480Mi"));  // apps 4Gi+128Mi + sidecar 256Mi
}

TEST(PodManifestTest, JsonBurstablePod) {
  auto pod = ParsePodManifest(ReadFixture("burstable.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->namespace_name, "shop");
  EXPECT_EQ(pod->containers[0].limits.at("cpu").MilliValue(), 500);
  EXPECT_EQ(pod->containers[0].limits.at("memory").Value(), 128974848);
  EXPECT_EQ(ComputeQos(*pod), QosClass::kBurstable);
}

TEST(PodManifestTest, BestEffortPodWithoutUid) {
  auto pod = ParsePodManifest(ReadFixture("besteffort.yaml"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->uid, "");
  EXPECT_EQ(ComputeQos(*pod), QosClass::kBestEffort);
}

TEST(PodManifestTest, BadQuantityNamesTheField) {
  auto pod = ParsePodManifest(ReadFixture("bad-quantity.yaml"));
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(pod.status().message()),
              StartsWith("spec.containers[1].resources.limits.cpu: invalid quantity \"abc\""));
}

TEST(PodManifestTest, RejectsInvalidManifests) {
  struct Case {
    const char* yaml;
    const char* message;
  } cases[] = {
      {"", "must be a map"},
      {"- a\n- b\n", "must be a map"},
      {"kind: Deployment\nmetadata: {name: x}\nspec: {containers: [{name: a}]}\n",
       "kind: expected Pod"},
      {"spec: {containers: [{name: a}]}\n", "metadata: required"},
      {"metadata: {uid: u}\nspec: {containers: [{name: a}]}\n", "metadata.name: required"},
      {"metadata: {name: p}\n", "spec: required"},
      {"metadata: {name: p}\nspec: {containers: []}\n", "spec.containers: at least one"},
      {"metadata: {name: p}\nspec: {containers: {name: a}}\n", "spec.containers: expected a list"},
      {"metadata: {name: p}\nspec: {containers: [{image: x}]}\n",
       "spec.containers[0].name: required"},
      {"metadata: {name: p}\nspec: {containers: [{name: a}, {name: a}]}\n",
       "spec.containers[1].name: duplicate container name \"a\""},
      {"metadata: {name: p}\nspec: {initContainers: [{name: a}], containers: [{name: a}]}\n",
       "spec.containers[0].name: duplicate"},
      {"metadata: {name: p}\nspec: {initContainers: [{name: i, restartPolicy: Sometimes}], "
       "containers: [{name: a}]}\n",
       "spec.initContainers[0].restartPolicy: unsupported value \"Sometimes\""},
      {"metadata: {name: p}\nspec: {containers: [{name: a, resources: {limits: {cpu: -1}}}]}\n",
       "spec.containers[0].resources.limits.cpu: must be greater than or equal to 0"},
      {"metadata: {name: p}\nspec: {containers: [{name: a, resources: {limits: {cpu: [1]}}}]}\n",
       "spec.containers[0].resources.limits.cpu: expected a quantity, got a list"},
      {"metadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: {cpu: 2}, "
       "limits: {cpu: 1}}}]}\n",
       "spec.containers[0].resources.requests.cpu: must be less than or equal to cpu limit of 1"},
      {"metadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: "
       "{nvidia.com/gpu: 1}}}]}\n",
       "spec.containers[0].resources.requests.nvidia.com/gpu: a limit equal to the request"},
      {"metadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: "
       "{hugepages-2Mi: 2Mi}, limits: {hugepages-2Mi: 4Mi}}}]}\n",
       "spec.containers[0].resources.requests.hugepages-2Mi: must be equal to"},
      {"metadata: {name: p}\nspec: {resources: {limits: {cpu: 1}}, containers: [{name: a}]}\n",
       "spec.resources: pod-level resources are not supported"},
      {"metadata: {name: p, annotations: {a: [1]}}\nspec: {containers: [{name: a}]}\n",
       "metadata.annotations.a: expected a string"},
      {"metadata: {name: p\nspec: x\n", "line "},
  };
  for (const Case& c : cases) {
    auto pod = ParsePodManifest(c.yaml);
    ASSERT_FALSE(pod.ok()) << c.yaml;
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(std::string(pod.status().message()), HasSubstr(c.message)) << c.yaml;
  }
}

}  // namespace
}  // namespace topologyd::pod
