// The API server's rules for container resource names and annotations, and the container
// bound, as pure functions (lib/pod/validate.h).
#include "lib/pod/validate.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::pod {
namespace {

using ::testing::HasSubstr;

std::string ResourceNameError(const std::string& name) {
  absl::Status s = ValidateContainerResourceName("app", name);
  EXPECT_FALSE(s.ok()) << "accepted resource name \"" << name << "\"";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(ContainerResourceNameTest, StandardNamesWithoutAPrefix) {
  for (const char* name :
       {"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi", "hugepages-64Ki"}) {
    EXPECT_TRUE(ValidateContainerResourceName("app", name).ok()) << name;
  }
}

// Names the API server knows for other objects (quotas, nodes, volumes), or none at all.
TEST(ContainerResourceNameTest, OtherNamesWithoutAPrefixAreRefused) {
  for (const char* name : {"foo", "storage", "pods", "gpu", "requests.cpu", "limits.memory", "CPU",
                           "Memory", "ephemeral_storage", "hugepages"}) {
    EXPECT_THAT(ResourceNameError(name), HasSubstr("must be a standard container resource"))
        << name;
  }
}

TEST(ContainerResourceNameTest, TheErrorNamesTheContainerAndTheResource) {
  absl::Status s = ValidateContainerResourceName("sidecar-1", "foo");
  EXPECT_EQ(s.message(),
            "invalid resource name \"foo\" of container \"sidecar-1\": must be a standard "
            "container resource (cpu, memory, ephemeral-storage, hugepages-<size>) or an "
            "extended resource <domain>/<name>");
}

TEST(ContainerResourceNameTest, ExtendedResourcesOutsideKubernetesIo) {
  for (const char* name :
       {"nvidia.com/gpu", "intel.com/sriov_netdevice", "example.com/Foo.Bar-1", "a/b", "x.y.z/1"}) {
    EXPECT_TRUE(ValidateContainerResourceName("app", name).ok()) << name;
  }
}

// The API server treats any name containing "kubernetes.io/" as native and checks nothing
// more of it; we refuse no more than it does.
TEST(ContainerResourceNameTest, NamesInTheKubernetesIoDomainAreNative) {
  for (const char* name :
       {"kubernetes.io/foo", "node.kubernetes.io/bar", "requests.kubernetes.io/x"}) {
    EXPECT_TRUE(ValidateContainerResourceName("app", name).ok()) << name;
  }
}

TEST(ContainerResourceNameTest, ExtendedNamesThatWouldNotMakeAQuotaNameAreRefused) {
  EXPECT_THAT(ResourceNameError("requests.example.com/gpu"),
              HasSubstr("not an extended resource name"));
  // A domain of 245 characters is a DNS subdomain, but "requests." + it is longer than 253.
  const auto domain = [](size_t last_label) {
    return std::string(62, 'a') + "." + std::string(62, 'b') + "." + std::string(62, 'c') + "." +
           std::string(last_label, 'd');
  };
  ASSERT_EQ(domain(56).size(), 245u);
  EXPECT_THAT(ResourceNameError(domain(56) + "/gpu"), HasSubstr("not an extended resource name"));
  ASSERT_EQ(domain(55).size(), 244u);
  EXPECT_TRUE(ValidateContainerResourceName("app", domain(55) + "/gpu").ok());
}

TEST(ContainerResourceNameTest, NamesThatAreNotQualifiedAreRefused) {
  for (const std::string& name :
       {std::string(""), std::string("a b"), std::string("/cpu"), std::string("cpu/"),
        std::string("vendor..com/gpu"), std::string("Vendor.com/gpu"), std::string("a/b/c"),
        std::string("example.com/-gpu"), std::string("example.com/") + std::string(64, 'g'),
        std::string("-cpu"), std::string("hugepages-"), std::string(1, '\0')}) {
    EXPECT_THAT(ResourceNameError(name), HasSubstr("must be a qualified name")) << name;
  }
}

TEST(AnnotationKeyTest, QualifiedNamesInAnyCase) {
  for (const char* key :
       {"a", "topologyd.io/topology-policy", "Example.COM/Owner_Team.1", "KEY", "a.b/C-d"}) {
    EXPECT_TRUE(ValidateAnnotationKey(key).ok()) << key;
  }
  for (const std::string& key : {std::string(""), std::string("/x"), std::string("a/"),
                                 std::string("-x"), std::string("Bad_Prefix/x"), std::string("a b"),
                                 std::string("a/b/c"), std::string(64, 'k')}) {
    EXPECT_THAT(std::string(ValidateAnnotationKey(key).message()),
                HasSubstr("invalid annotation key"))
        << key;
  }
}

TEST(AnnotationsSizeTest, KeysAndValuesTogetherAtMost256KiB) {
  std::map<std::string, std::string> annotations = {
      {"a", std::string(kMaxAnnotationsBytes - 3, 'v')}, {"bb", ""}};
  EXPECT_TRUE(ValidateAnnotationsSize(annotations).ok());  // exactly 262144 bytes
  annotations["c"] = "";
  absl::Status s = ValidateAnnotationsSize(annotations);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("262145 bytes"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("at most 262144 (256 KiB)"));
  EXPECT_TRUE(ValidateAnnotationsSize({}).ok());
  // One value of 1 MB.
  EXPECT_FALSE(ValidateAnnotationsSize({{"k", std::string(1'000'000, 'x')}}).ok());
}

TEST(ContainerCountTest, AtMostTheConfiguredBound) {
  EXPECT_TRUE(ValidateContainerCount(1, 1).ok());
  EXPECT_TRUE(
      ValidateContainerCount(kDefaultMaxContainersPerPod, kDefaultMaxContainersPerPod).ok());
  absl::Status s = ValidateContainerCount(25'000, 256);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "25000 containers (init and app); this node admits at most 256 per pod "
            "(limits.containersPerPod)");
}

}  // namespace
}  // namespace topologyd::pod
