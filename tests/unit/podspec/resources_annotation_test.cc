// Tests of the topologyd.io/resources annotation: the pod it gives equals the manifest parser's
// for the same spec, and every malformed value is refused naming the annotation and its path.
#include "lib/podspec/resources_annotation.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/pod/pod_manifest.h"

namespace topologyd::podspec {
namespace {

using ::testing::HasSubstr;

constexpr char kUid[] = "0b8f6e32-9c1d-4f5e-a7b2-3c4d5e6f7a8b";

absl::StatusOr<std::optional<pod::Pod>> FromValue(const std::string& value,
                                                  size_t max_containers = 16) {
  return PodFromResourcesAnnotation(kUid, "ml", "trainer-0",
                                    {{"topologyd.io/resources", value}, {"team", "vision"}},
                                    max_containers);
}

TEST(ResourcesAnnotationTest, AbsentIsNullopt) {
  auto pod = PodFromResourcesAnnotation(kUid, "ml", "p", {{"team", "vision"}}, 16);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_FALSE(pod->has_value());
}

TEST(ResourcesAnnotationTest, EqualsTheManifestOfTheSamePod) {
  const std::string value = R"({
    "initContainers": [
      {"name": "fetch", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}},
      {"name": "proxy", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m", "memory": "128Mi"}}}
    ],
    "containers": [
      {"name": "trainer", "image": "registry.example/trainer:1", "command": ["train"],
       "resources": {"limits": {"cpu": "8", "memory": "32Gi", "hugepages-1Gi": "4Gi",
                                "nvidia.com/gpu": "2"}}},
      {"name": "logger", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    ]
  })";
  auto pod = FromValue(value);
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->has_value());

  std::string manifest = std::string(R"(
apiVersion: v1
kind: Pod
metadata:
  name: trainer-0
  namespace: ml
  uid: )") + kUid + R"(
  annotations:
    team: vision
    topologyd.io/resources: '__VALUE__'
spec:
  initContainers:
  - name: fetch
    resources: {requests: {cpu: "1", memory: 256Mi}}
  - name: proxy
    restartPolicy: Always
    resources: {requests: {cpu: 500m}, limits: {cpu: 500m, memory: 128Mi}}
  containers:
  - name: trainer
    resources:
      limits: {cpu: "8", memory: 32Gi, hugepages-1Gi: 4Gi, nvidia.com/gpu: "2"}
  - name: logger
    resources: {requests: {cpu: 100m, memory: 64Mi}}
)";
  // The annotation's value as a single-quoted YAML scalar on one line.
  std::string flat;
  for (char c : value) flat += c == '\n' ? ' ' : c;
  manifest.replace(manifest.find("__VALUE__"), 9, flat);
  auto expected = pod::ParsePodManifest(manifest);
  ASSERT_TRUE(expected.ok()) << expected.status();
  expected->annotations["topologyd.io/resources"] = value;
  EXPECT_EQ(**pod, *expected);

  const pod::Pod& p = **pod;
  ASSERT_EQ(p.init_containers.size(), 2U);
  EXPECT_EQ(p.init_containers[0].name, "fetch");
  EXPECT_FALSE(p.init_containers[0].restart_always);
  EXPECT_TRUE(p.init_containers[1].restart_always);
  EXPECT_EQ(p.containers[0].requests.at("nvidia.com/gpu"), pod::Quantity::FromInt(2));  // defaulted
  EXPECT_EQ(p.containers[1].name, "logger");
  EXPECT_EQ(pod::ComputeQos(p), pod::QosClass::kBurstable);
}

TEST(ResourcesAnnotationTest, OrderIsKept) {
  auto pod = FromValue(R"({"containers":[{"name":"z"},{"name":"a"},{"name":"m"}]})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ((*pod)->containers.size(), 3U);
  EXPECT_EQ((*pod)->containers[0].name, "z");
  EXPECT_EQ((*pod)->containers[1].name, "a");
  EXPECT_EQ((*pod)->containers[2].name, "m");
  EXPECT_EQ(pod::ComputeQos(**pod), pod::QosClass::kBestEffort);
}

struct BadCase {
  std::string value;
  std::string error;  // after "annotation topologyd.io/resources: "
};

TEST(ResourcesAnnotationTest, RefusesMalformedValues) {
  const BadCase cases[] = {
      {"", "the pod spec: expected a map, got null"},
      {"{\"containers\": [", "line 1, column"},
      {"[]", "the pod spec: expected a map, got a list"},
      {"{}", "containers: at least one container is required"},
      {R"({"containers": []})", "containers: at least one container is required"},
      {R"({"containers": {}})", "containers: expected a list, got a map"},
      {R"({"containers": [{"name": "a"}], "resources": {}})",
       "resources: pod-level resources are not supported"},
      {R"({"initContainers": [{"name": "i", "restartPolicy": "Sometimes"}], "containers": [{"name": "a"}]})",
       "initContainers[0].restartPolicy: unsupported value \"Sometimes\""},
      {R"({"initContainers": [3], "containers": [{"name": "a"}]})",
       "initContainers[0]: expected a map, got a scalar"},
      {R"({"containers": [{"resources": {}}]})", "containers[0].name: required"},
      {R"({"containers": [{"name": "Web_1"}]})", "containers[0].name: invalid container name"},
      {R"({"containers": [{"name": "a"}, {"name": "a"}]})",
       "containers[1].name: duplicate container name \"a\""},
      {R"({"initContainers": [{"name": "a"}], "containers": [{"name": "a"}]})",
       "containers[0].name: duplicate container name \"a\""},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "x"}}}]})",
       "containers[0].resources.requests.cpu: invalid quantity \"x\""},
      {R"({"containers": [{"name": "a", "resources": []}]})",
       "containers[0].resources: expected a map, got a list"},
      {R"({"containers": [{"name": "a", "resources": {"limits": {"cpu": "-1"}}}]})",
       "containers[0].resources.limits.cpu: "},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"gpu": "1"}}}]})",
       "containers[0].resources.requests[\"gpu\"]: invalid resource name \"gpu\""},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]})",
       "containers[0].resources.requests.cpu: must be less than or equal to cpu limit of 1"},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]})",
       "containers[0].resources.requests.nvidia.com/gpu: a limit equal to the request is required"},
      {R"({"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "500m"}}}]})",
       "containers[0].resources.limits.nvidia.com/gpu: must be an integer"},
      {R"({"containers": [{"name": "a", "resources": {"limits": {"hugepages-2Mi": "3Mi"}}}]})",
       "containers[0].resources.limits.hugepages-2Mi: "},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "cpu": "2"}}}]})",
       "line 1, column 70: duplicate key \"cpu\" (first at line 1)"},
      {R"({"containers": [{"name": "a"}], "containers": [{"name": "b"}]})",
       "line 1, column 33: duplicate key \"containers\" (first at line 1)"},
      {R"({"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]})",
       "containers: 3 containers (init and app); this node admits at most 2"},
      {"{\"containers\": [{\"name\": \"a\"}]}\n---\n{\"containers\": [{\"name\": \"b\"}]}",
       "line 3, column 1: a second YAML document; the pod spec must be one document"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.value);
    auto pod = FromValue(c.value, 2);
    ASSERT_FALSE(pod.ok());
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(pod.status().message()),
                HasSubstr("annotation topologyd.io/resources: " + c.error));
  }
}

TEST(ResourcesAnnotationTest, FieldsThatDoNotDecidePlacementAreIgnoredAsInAManifest) {
  auto pod =
      FromValue(R"({"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}],
                                           "resources": {"limits": {"cpu": 2, "memory": "1Gi"}}}],
                          "nodeSelector": {"zone": "a"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ((*pod)->containers[0].requests.at("cpu"), pod::Quantity::FromInt(2));
  EXPECT_EQ(pod::ComputeQos(**pod), pod::QosClass::kGuaranteed);
}

TEST(ResourcesAnnotationTest, RefusesBadPodIdentity) {
  const std::map<std::string, std::string> annotations = {
      {"topologyd.io/resources", R"({"containers":[{"name":"a"}]})"}};
  struct Case {
    std::string uid, ns, name;
    std::string error;
  } cases[] = {
      {"", "ml", "p", "metadata.uid: required"},
      {"a/b", "ml", "p", "metadata.uid: invalid uid"},
      {kUid, "", "p", "metadata.namespace: required"},
      {kUid, "ML", "p", "metadata.namespace: invalid namespace"},
      {kUid, "ml", "P_1", "metadata.name: invalid pod name"},
  };
  for (const Case& c : cases) {
    auto pod = PodFromResourcesAnnotation(c.uid, c.ns, c.name, annotations, 16);
    ASSERT_FALSE(pod.ok());
    EXPECT_THAT(std::string(pod.status().message()), HasSubstr(c.error));
  }
  auto pod = PodFromResourcesAnnotation(kUid, "ml", "p",
                                        {{"topologyd.io/resources", "{}"}, {"bad key!", "x"}}, 16);
  ASSERT_FALSE(pod.ok());
  EXPECT_THAT(std::string(pod.status().message()), HasSubstr("metadata.annotations[\"bad key!\"]"));
}

}  // namespace
}  // namespace topologyd::podspec
