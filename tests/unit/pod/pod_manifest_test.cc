// Tests of ParsePodManifest with real Pod manifests (tests/fixtures/pods) and error paths.
#include "lib/pod/pod_manifest.h"

#include <fstream>
#include <initializer_list>
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

// A one-container manifest whose limits are `limits` (a YAML flow map body).
std::string WithLimits(const std::string& limits) {
  return "metadata: {name: p}\nspec: {containers: [{name: a, resources: {limits: {" + limits +
         "}}}]}\n";
}

void ExpectInvalid(const std::string& text, const std::string& prefix) {
  auto pod = ParsePodManifest(text);
  ASSERT_FALSE(pod.ok()) << text;
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(std::string(pod.status().message()), StartsWith(prefix)) << text;
}

// A pod whose one container has each of `limits` ("name: quantity") in turn parses.
void ExpectLimitsAccepted(std::initializer_list<const char*> limits) {
  for (const char* ok : limits) {
    auto pod = ParsePodManifest(WithLimits(ok));
    EXPECT_TRUE(pod.ok()) << ok << ": " << pod.status();
  }
}

TEST(PodManifestTest, ExtendedResourcesMustBeIntegers) {
  ExpectInvalid(WithLimits("nvidia.com/gpu: 1500m"),
                "spec.containers[0].resources.limits.nvidia.com/gpu: must be an integer (got "
                "1500m)");
  ExpectInvalid(
      "metadata: {name: p}\nspec: {containers: [{name: a}, {name: b, resources: "
      "{requests: {nec.com/ve: 0.5}, limits: {nec.com/ve: 0.5}}}]}\n",
      "spec.containers[1].resources.requests.nec.com/ve: must be an integer");
  // Native resources may be fractional; whole extended quantities in any spelling are fine.
  ExpectLimitsAccepted({"nvidia.com/gpu: 2", "nvidia.com/gpu: 2000m", "nvidia.com/gpu: 0",
                        "cpu: 1500m", "example.com/foo: 1k"});
}

TEST(PodManifestTest, HugePagesMustBeMultiplesOfThePageSize) {
  ExpectInvalid(WithLimits("hugepages-2Mi: 3Mi"),
                "spec.containers[0].resources.limits.hugepages-2Mi: must be a multiple of 2Mi");
  ExpectInvalid(WithLimits("hugepages-1Gi: 1.5Gi"),
                "spec.containers[0].resources.limits.hugepages-1Gi: must be a multiple of 1Gi");
  ExpectInvalid(WithLimits("hugepages-64Ki: 100Ki"),
                "spec.containers[0].resources.limits.hugepages-64Ki: must be a multiple of 64Ki");
  ExpectInvalid(WithLimits("hugepages-2Mx: 2Mi"),
                "spec.containers[0].resources.limits.hugepages-2Mx: invalid hugepages page size");
  ExpectInvalid(WithLimits("hugepages-0: 0"),
                "spec.containers[0].resources.limits.hugepages-0: invalid hugepages page size");
  for (const char* ok :
       {"hugepages-2Mi: 4Mi", "hugepages-2Mi: 0", "hugepages-1Gi: 2Gi", "hugepages-2Mi: 4194304"}) {
    auto pod = ParsePodManifest(WithLimits(ok));
    EXPECT_TRUE(pod.ok()) << ok << ": " << pod.status();
  }
}

TEST(PodManifestTest, RejectsDuplicateKeysWithTheirLine) {
  ExpectInvalid("metadata:\n  name: p\n  name: q\nspec: {containers: [{name: a}]}\n",
                "line 3, column 3: duplicate key \"name\" (first at line 2)");
  ExpectInvalid(
      "metadata: {name: p}\nspec:\n  containers:\n  - name: a\n    resources:\n"
      "      limits: {cpu: 1, \"cpu\": 2}\n",
      "line 6, column 24: duplicate key \"cpu\" (first at line 6)");
  ExpectInvalid("metadata: {name: p}\nspec: {containers: [{name: a}]}\nmetadata: {name: q}\n",
                "line 3, column 1: duplicate key \"metadata\" (first at line 1)");
  // JSON is read by the same parser, so the same rule holds.
  ExpectInvalid(
      "{\"metadata\": {\"name\": \"p\"},\n \"spec\": {\"containers\": [{\"name\": "
      "\"a\"}]},\n \"metadata\": {\"name\": \"q\"}}\n",
      "line 3, column 2: duplicate key \"metadata\" (first at line 1)");
  // The same key in different maps, or as a value, is not a duplicate.
  auto pod = ParsePodManifest(
      "metadata: {name: name, annotations: {name: x}}\nspec: {containers: [{name: a}, "
      "{name: b}]}\n");
  EXPECT_TRUE(pod.ok()) << pod.status();
}

TEST(PodManifestTest, RejectsASecondDocument) {
  const std::string pod = "metadata: {name: p}\nspec: {containers: [{name: a}]}\n";
  ExpectInvalid(pod + "---\n" + pod, "line 4, column 1: a second YAML document");
  ExpectInvalid(pod + "---\n- x\n", "line 4, column 1: a second YAML document");
  // A leading "---" and empty trailing documents are common in hand-written manifests.
  for (const std::string& ok : {"---\n" + pod, pod + "---\n", pod + "---\n---\n"}) {
    auto parsed = ParsePodManifest(ok);
    EXPECT_TRUE(parsed.ok()) << ok << ": " << parsed.status();
  }
}

// yaml-cpp 0.7 reports endless empty documents for such text without reading on; the parser
// must stop and refuse it rather than spin.
TEST(PodManifestTest, TextTheYamlParserCannotReadOnIsAnError) {
  ExpectInvalid(",", "line 1, column 1: not a YAML document");
  ExpectInvalid(",a", "line 1, column 1: not a YAML document");
  // After a valid Pod too, where only empty documents would follow.
  const std::string pod = "{metadata: {name: p}, spec: {containers: [{name: a}]}}\n";
  ExpectInvalid(pod + ",\n", "line 2, column 1: not a YAML document");
  ExpectInvalid(pod + "---\n,a\n", "line 3, column 1: not a YAML document");
}

// The rules PodFromProto applies to a pod sent over gRPC, with the same messages.
TEST(PodManifestTest, NamesFollowTheApiRules) {
  const std::string spec = "spec: {containers: [{name: a}]}\n";
  ExpectInvalid("metadata: {name: \"Not A DNS Name!\"}\n" + spec,
                "metadata.name: invalid pod name \"Not A DNS Name!\": must be a DNS subdomain");
  ExpectInvalid("metadata: {name: p, namespace: ../etc}\n" + spec,
                "metadata.namespace: invalid namespace \"../etc\": must be a DNS label");
  ExpectInvalid("metadata: {name: p, uid: u/../x}\n" + spec,
                "metadata.uid: invalid uid \"u/../x\": expected 1 to 64 of [A-Za-z0-9-]");
  ExpectInvalid("metadata: {name: p, annotations: {\"bad key\": v}}\n" + spec,
                "metadata.annotations[\"bad key\"]: invalid annotation key");
  ExpectInvalid("metadata: {name: p}\nspec: {containers: [{name: ../../evil container}]}\n",
                "spec.containers[0].name: invalid container name \"../../evil container\": "
                "must be a DNS label");
  ExpectInvalid(
      "metadata: {name: p}\nspec: {initContainers: [{name: Setup}], containers: [{name: a}]}\n",
      "spec.initContainers[0].name: invalid container name \"Setup\"");
  ExpectInvalid(WithLimits("\"not a qualified name!!\": 1"),
                "spec.containers[0].resources.limits[\"not a qualified name!!\"]: "
                "invalid resource name");
  ExpectInvalid(WithLimits("\"\": 1"),
                "spec.containers[0].resources.limits[\"\"]: invalid resource name");
  // The first problem of the reproduction: every name in it is bad.
  ExpectInvalid(
      "kind: Pod\nmetadata: {name: \"Not A DNS Name!\", namespace: \"../etc\", uid: "
      "\"u/../x\"}\nspec:\n  containers:\n  - name: \"../../evil container\"\n"
      "    resources: {limits: {\"not a qualified name!!\": \"1\"}}\n",
      "metadata.name: invalid pod name");
}

// The API server's rule for container resource names: a name without a domain is a standard
// one, a name with one outside kubernetes.io is an extended resource.
TEST(PodManifestTest, ResourceNamesAreStandardOrExtended) {
  ExpectInvalid(WithLimits("foo: 1"),
                "spec.containers[0].resources.limits[\"foo\"]: invalid resource name \"foo\" of "
                "container \"a\": must be a standard container resource");
  ExpectInvalid(
      "metadata: {name: p}\nspec: {containers: [{name: a}, {name: side, resources: "
      "{requests: {storage: 1Gi}}}]}\n",
      "spec.containers[1].resources.requests[\"storage\"]: invalid resource name "
      "\"storage\" of container \"side\"");
  ExpectInvalid(WithLimits("requests.example.com/gpu: 1"),
                "spec.containers[0].resources.limits[\"requests.example.com/gpu\"]: invalid "
                "resource name");
  ExpectLimitsAccepted({"cpu: 1", "ephemeral-storage: 1Gi", "hugepages-2Mi: 4Mi",
                        "example.com/gpu: 1", "kubernetes.io/foo: 1"});
}

TEST(PodManifestTest, AnnotationsAreAtMost256KiB) {
  const std::string spec = "spec: {containers: [{name: a}]}\n";
  // Key "k" + 262143 bytes of value: exactly the limit.
  auto pod = ParsePodManifest("metadata: {name: p, annotations: {k: " + std::string(262'143, 'v') +
                              "}}\n" + spec);
  ASSERT_TRUE(pod.ok()) << pod.status();
  ExpectInvalid("metadata: {name: p, annotations: {k: " + std::string(262'144, 'v') + "}}\n" + spec,
                "metadata.annotations: annotations total 262145 bytes (keys and values); the "
                "API server allows at most 262144 (256 KiB)");
  // Upper case is allowed in a key's prefix, as the API server lower-cases keys to check them.
  pod = ParsePodManifest("metadata: {name: p, annotations: {Example.COM/Team: x}}\n" + spec);
  EXPECT_TRUE(pod.ok()) << pod.status();
}

std::string PodWithContainers(size_t init, size_t app) {
  std::string text = "metadata: {name: p}\nspec:\n  initContainers:\n";
  for (size_t i = 0; i < init; ++i) text += "  - {name: i" + std::to_string(i) + "}\n";
  text += "  containers:\n";
  for (size_t i = 0; i < app; ++i) text += "  - {name: c" + std::to_string(i) + "}\n";
  return text;
}

TEST(PodManifestTest, ContainerCountIsBounded) {
  EXPECT_TRUE(ParsePodManifest(PodWithContainers(6, 250)).ok());  // the default bound, 256
  auto pod = ParsePodManifest(PodWithContainers(6, 251));
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().message(),
            "spec.containers: 257 containers (init and app); this node admits at most 256 per "
            "pod (limits.containersPerPod)");
  EXPECT_TRUE(ParsePodManifest(PodWithContainers(6, 251), 257).ok());
  EXPECT_THAT(std::string(ParsePodManifest(PodWithContainers(1, 2), 2).status().message()),
              StartsWith("spec.containers: 3 containers"));
}

TEST(PodManifestTest, NamesAtTheLimitsAreAccepted) {
  const std::string name = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                           std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(name.size(), 253U);
  auto pod = ParsePodManifest("metadata: {name: " + name + ", namespace: " + std::string(63, 'n') +
                              ", uid: " + std::string(64, 'U') +
                              ", annotations: {example.com/Owner_Team.1: x}}\n"
                              "spec: {containers: [{name: " +
                              std::string(63, 'c') +
                              ", resources: {limits: {example.com/foo_bar: 1}}}]}\n");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, name);
  // An empty namespace is the default one, as over gRPC; an empty uid is left to the caller.
  pod = ParsePodManifest(
      "metadata: {name: p, namespace: \"\", uid: \"\"}\nspec: {containers: [{name: a}]}\n");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->namespace_name, "default");
  EXPECT_EQ(pod->uid, "");
}

TEST(PodManifestTest, EveryGoodFixtureParses) {
  for (const char* name : {"besteffort.yaml", "burstable.json", "gpu-inference.yaml",
                           "guaranteed-gpu.yaml", "sidecar-init.yaml"}) {
    auto pod = ParsePodManifest(ReadFixture(name));
    EXPECT_TRUE(pod.ok()) << name << ": " << pod.status();
  }
}

TEST(PodManifestTest, ErrorMessagesShortenAndEscapeValues) {
  auto pod = ParsePodManifest(WithLimits("cpu: \"" + std::string(100'000, '7') + "x\""));
  ASSERT_FALSE(pod.ok());
  const std::string message(pod.status().message());
  EXPECT_LT(message.size(), 300U) << message.substr(0, 300);
  EXPECT_THAT(message, HasSubstr("...(100001 bytes)"));
  ExpectInvalid(
      "metadata: {name: p}\nspec: {initContainers: [{name: i, restartPolicy: "
      "\"a\\nb\"}], containers: [{name: a}]}\n",
      "spec.initContainers[0].restartPolicy: unsupported value \"a\\x0ab\"");
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
