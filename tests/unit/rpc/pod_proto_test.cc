// Tests of PodToProto / PodFromProto: lossless round trips of real Pod manifests
// (tests/fixtures/pods) and every refusal, each naming its field.
#include "lib/rpc/pod_proto.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/pod/pod_manifest.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

pod::Quantity Q(const char* text) { return *pod::Quantity::Parse(text); }

// A valid pod to break one field at a time.
v1::Pod ValidPod() {
  v1::Pod p;
  p.set_uid("0b8a3c5e-2222-4b4b-8c8c-fedcba987654");
  p.set_namespace_("shop");
  p.set_name("web-0");
  (*p.mutable_annotations())["topologyd.io/topology-policy"] = "single-numa-node";
  v1::Container* init = p.add_init_containers();
  init->set_name("setup");
  (*init->mutable_limits())["cpu"] = "1";
  (*init->mutable_limits())["memory"] = "64Mi";
  v1::Container* app = p.add_containers();
  app->set_name("app");
  (*app->mutable_requests())["cpu"] = "2";
  (*app->mutable_limits())["cpu"] = "2";
  (*app->mutable_limits())["memory"] = "1Gi";
  return p;
}

void ExpectInvalidWithBound(const v1::Pod& p, size_t max_containers, const std::string& prefix) {
  auto result = PodFromProto(p, max_containers);
  ASSERT_FALSE(result.ok()) << "accepted a pod that should fail with " << prefix;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), StartsWith(prefix));
}

void ExpectInvalid(const v1::Pod& p, const std::string& prefix) {
  ExpectInvalidWithBound(p, pod::kDefaultMaxContainersPerPod, prefix);
}

class PodProtoFixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PodProtoFixtureTest, RoundTripIsLossless) {
  auto parsed = pod::ParsePodManifest(ReadFixture(GetParam()));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  // The daemon requires a uid; some manifests (pre-creation) lack one.
  if (parsed->uid.empty()) parsed->uid = "00000000-0000-0000-0000-000000000001";
  v1::Pod proto;
  PodToProto(*parsed, &proto);
  auto back = PodFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *parsed);
  // Through the wire format as well.
  v1::Pod reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  auto back2 = PodFromProto(reparsed);
  ASSERT_TRUE(back2.ok()) << back2.status();
  EXPECT_EQ(*back2, *parsed);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PodProtoFixtureTest,
                         ::testing::Values("besteffort.yaml", "burstable.json",
                                           "guaranteed-gpu.yaml", "sidecar-init.yaml"));

TEST(PodProtoTest, ToProtoWritesEveryField) {
  auto parsed = pod::ParsePodManifest(ReadFixture("sidecar-init.yaml"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  v1::Pod proto;
  PodToProto(*parsed, &proto);
  EXPECT_EQ(proto.uid(), "0b8a3c5e-2222-4b4b-8c8c-fedcba987654");
  EXPECT_EQ(proto.namespace_(), "default");
  EXPECT_EQ(proto.name(), "dpdk-router");
  ASSERT_EQ(proto.init_containers_size(), 3);
  EXPECT_EQ(proto.init_containers(0).restart_policy(), "");
  EXPECT_EQ(proto.init_containers(1).name(), "log-shipper");
  EXPECT_EQ(proto.init_containers(1).restart_policy(), "Always");
  ASSERT_EQ(proto.containers_size(), 2);
  EXPECT_EQ(proto.containers(0).limits().at("intel.com/sriov_netdevice"), "2");
  EXPECT_EQ(proto.containers(0).limits().at("memory"), "4294967296");
  EXPECT_EQ(proto.containers(1).limits().at("cpu"), "500m");
  EXPECT_EQ(proto.containers(1).requests().at("cpu"), "500m");
}

TEST(PodProtoTest, ToProtoClearsTheOutput) {
  v1::Pod proto = ValidPod();
  pod::Pod p;
  p.uid = "u";
  p.name = "n";
  PodToProto(p, &proto);
  EXPECT_EQ(proto.containers_size(), 0);
  EXPECT_TRUE(proto.annotations().empty());
}

TEST(PodProtoTest, FromProtoReadsEveryFieldAndDefaultsRequests) {
  auto p = PodFromProto(ValidPod());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->uid, "0b8a3c5e-2222-4b4b-8c8c-fedcba987654");
  EXPECT_EQ(p->namespace_name, "shop");
  EXPECT_EQ(p->name, "web-0");
  EXPECT_EQ(p->annotations.at("topologyd.io/topology-policy"), "single-numa-node");
  ASSERT_EQ(p->init_containers.size(), 1u);
  EXPECT_EQ(p->init_containers[0].requests.at("cpu"), Q("1"));  // defaulted from the limit
  EXPECT_FALSE(p->init_containers[0].restart_always);
  ASSERT_EQ(p->containers.size(), 1u);
  EXPECT_EQ(p->containers[0].requests.at("memory"), Q("1Gi"));
  EXPECT_EQ(pod::ComputeQos(*p), pod::QosClass::kGuaranteed);
}

TEST(PodProtoTest, EmptyNamespaceMeansDefault) {
  v1::Pod in = ValidPod();
  in.clear_namespace_();
  auto p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->namespace_name, "default");
}

TEST(PodProtoTest, RestartPolicyAlwaysMakesOnlyInitContainersSidecars) {
  v1::Pod in = ValidPod();
  in.mutable_init_containers(0)->set_restart_policy("Always");
  in.mutable_containers(0)->set_restart_policy("Always");
  auto p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->init_containers[0].restart_always);
  EXPECT_FALSE(p->containers[0].restart_always);
  in.mutable_init_containers(0)->set_restart_policy("OnFailure");
  p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->init_containers[0].restart_always);
}

TEST(PodProtoTest, AcceptsLongestValidIdentifiers) {
  v1::Pod in = ValidPod();
  in.set_uid(std::string(64, 'A'));
  in.set_name(std::string(63, 'a') + "." + std::string(63, 'b'));
  in.set_namespace_(std::string(63, 'n'));
  in.mutable_containers(0)->set_name(std::string(63, 'c'));
  EXPECT_TRUE(PodFromProto(in).ok());
}

TEST(PodProtoTest, UidIsRequired) {
  v1::Pod in = ValidPod();
  in.clear_uid();
  ExpectInvalid(in, "pod.uid: required");
}

TEST(PodProtoTest, UidMustBeSafe) {
  for (const std::string& uid :
       {std::string("../etc"), std::string("a/b"), std::string("a b"), std::string("a_b"),
        std::string("a.b"), std::string("a\nb"), std::string(65, 'a'), std::string("a\0b", 3)}) {
    v1::Pod in = ValidPod();
    in.set_uid(uid);
    ExpectInvalid(in, "pod.uid: invalid uid");
  }
}

TEST(PodProtoTest, NameIsRequiredAndADnsSubdomain) {
  v1::Pod in = ValidPod();
  in.clear_name();
  ExpectInvalid(in, "pod.name: required");
  for (const std::string& name :
       {std::string("Web"), std::string("web_0"), std::string("-web"), std::string("web."),
        std::string("a..b"), std::string("a/b"), std::string(254, 'a')}) {
    in.set_name(name);
    ExpectInvalid(in, "pod.name: invalid pod name");
  }
}

TEST(PodProtoTest, NamespaceMustBeADnsLabel) {
  v1::Pod in = ValidPod();
  for (const std::string& ns : {std::string("kube.system"), std::string("Shop"),
                                std::string("shop-"), std::string(64, 'a'), std::string("../x")}) {
    in.set_namespace_(ns);
    ExpectInvalid(in, "pod.namespace: invalid namespace");
  }
}

TEST(PodProtoTest, AnnotationKeysMustBeQualifiedNames) {
  for (const std::string& key :
       {std::string(""), std::string("/x"), std::string("a/"), std::string("-x"),
        std::string("Bad_Prefix/x"), std::string("a b")}) {
    v1::Pod in = ValidPod();
    (*in.mutable_annotations())[key] = "v";
    ExpectInvalid(in, "pod.annotations[");
  }
  v1::Pod ok = ValidPod();
  (*ok.mutable_annotations())["example.com/Owner_Team.1"] = "anything at all\n";
  EXPECT_TRUE(PodFromProto(ok).ok());
}

TEST(PodProtoTest, AtLeastOneContainer) {
  v1::Pod in = ValidPod();
  in.clear_containers();
  ExpectInvalid(in, "pod.containers: at least one container is required");
}

TEST(PodProtoTest, ContainerNameIsRequired) {
  v1::Pod in = ValidPod();
  in.mutable_containers(0)->clear_name();
  ExpectInvalid(in, "pod.containers[0].name: required");
  in = ValidPod();
  in.mutable_init_containers(0)->clear_name();
  ExpectInvalid(in, "pod.init_containers[0].name: required");
}

TEST(PodProtoTest, ContainerNameMustBeADnsLabel) {
  for (const std::string& name :
       {std::string("App"), std::string("app.1"), std::string("app_1"), std::string("-app"),
        std::string("app-"), std::string("../app"), std::string(64, 'a')}) {
    v1::Pod in = ValidPod();
    in.mutable_containers(0)->set_name(name);
    ExpectInvalid(in, "pod.containers[0].name: invalid container name");
  }
}

TEST(PodProtoTest, DuplicateContainerNames) {
  v1::Pod in = ValidPod();
  in.add_containers()->set_name("app");
  ExpectInvalid(in, "pod.containers[1].name: duplicate container name \"app\"");
  // Init and app containers share one namespace of names.
  in = ValidPod();
  in.mutable_containers(0)->set_name("setup");
  ExpectInvalid(in, "pod.containers[0].name: duplicate container name \"setup\"");
}

TEST(PodProtoTest, InvalidRestartPolicy) {
  v1::Pod in = ValidPod();
  in.mutable_init_containers(0)->set_restart_policy("always");
  ExpectInvalid(in, "pod.init_containers[0].restart_policy: unsupported value \"always\"");
}

TEST(PodProtoTest, InvalidQuantity) {
  v1::Pod in = ValidPod();
  in.add_containers()->set_name("side");
  (*in.mutable_containers(1)->mutable_requests())["cpu"] = "x";
  ExpectInvalid(in, "pod.containers[1].requests[\"cpu\"]: invalid quantity \"x\"");
  in = ValidPod();
  (*in.mutable_init_containers(0)->mutable_limits())["memory"] = "";
  ExpectInvalid(in, "pod.init_containers[0].limits[\"memory\"]: invalid quantity \"\"");
}

TEST(PodProtoTest, NegativeQuantity) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["memory"] = "-1Gi";
  ExpectInvalid(in, "pod.containers[0].limits[\"memory\"]: must be greater than or equal to 0");
}

TEST(PodProtoTest, InvalidResourceName) {
  for (const std::string& name : {std::string(""), std::string("a b"), std::string("/cpu"),
                                  std::string("vendor..com/gpu"), std::string("cpu/")}) {
    v1::Pod in = ValidPod();
    (*in.mutable_containers(0)->mutable_requests())[name] = "1";
    ExpectInvalid(in, "pod.containers[0].requests[");
    auto result = PodFromProto(in);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("invalid resource name"));
  }
}

TEST(PodProtoTest, ResourceNamesFollowTheApiServersContainerRule) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["foo"] = "1";
  ExpectInvalid(in,
                "pod.containers[0].requests[\"foo\"]: invalid resource name \"foo\" of container "
                "\"app\": must be a standard container resource");
  in = ValidPod();
  (*in.mutable_init_containers(0)->mutable_limits())["requests.example.com/gpu"] = "1";
  ExpectInvalid(in,
                "pod.init_containers[0].limits[\"requests.example.com/gpu\"]: invalid resource "
                "name \"requests.example.com/gpu\" of container \"setup\": not an extended "
                "resource name");
  for (const char* name : {"ephemeral-storage", "kubernetes.io/foo", "example.com/foo"}) {
    in = ValidPod();
    (*in.mutable_containers(0)->mutable_limits())[name] = "1";
    EXPECT_TRUE(PodFromProto(in).ok()) << name;
  }
}

TEST(PodProtoTest, AnnotationsAreAtMost256KiB) {
  v1::Pod in = ValidPod();
  (*in.mutable_annotations())["big"] = std::string(1'000'000, 'x');
  ExpectInvalid(in, "pod.annotations: annotations total 1000047 bytes (keys and values)");
  in = ValidPod();  // 28 + 16 bytes already
  (*in.mutable_annotations())["big"] = std::string(262'144 - 28 - 16 - 3, 'x');
  EXPECT_TRUE(PodFromProto(in).ok());
}

TEST(PodProtoTest, ContainerCountIsBoundedBeforeAnythingElse) {
  v1::Pod in = ValidPod();  // one init and one app container
  for (int i = 0; i < 254; ++i) in.add_containers()->set_name("c" + std::to_string(i));
  EXPECT_TRUE(PodFromProto(in).ok());  // 256, the default bound
  in.add_containers();                 // no name: counted before names are checked
  ExpectInvalid(in,
                "pod.containers: 257 containers (init and app); this node admits at most 256 per "
                "pod (limits.containersPerPod)");
  EXPECT_TRUE(PodFromProto(ValidPod(), 2).ok());
  ExpectInvalidWithBound(ValidPod(), 1, "pod.containers: 2 containers");
}

TEST(PodProtoTest, RequestAboveLimit) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["cpu"] = "3";
  ExpectInvalid(in, "pod.containers[0].requests[\"cpu\"]: must be less than or equal to cpu limit");
}

TEST(PodProtoTest, ExtendedResourcesAndHugePagesNeedRequestEqualToLimit) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["nvidia.com/gpu"] = "1";
  (*in.mutable_containers(0)->mutable_limits())["nvidia.com/gpu"] = "2";
  ExpectInvalid(in, "pod.containers[0].requests[\"nvidia.com/gpu\"]: must be equal to");
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["hugepages-2Mi"] = "2Mi";
  ExpectInvalid(in, "pod.containers[0].requests[\"hugepages-2Mi\"]: a limit equal to the request");
  // A limit alone is fine: the request defaults to it.
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["nvidia.com/gpu"] = "2";
  auto p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->containers[0].requests.at("nvidia.com/gpu"), Q("2"));
}

TEST(PodProtoTest, ExtendedResourcesMustBeIntegers) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["nvidia.com/gpu"] = "1500m";
  ExpectInvalid(in, "pod.containers[0].limits[\"nvidia.com/gpu\"]: must be an integer (got 1500m)");
  in = ValidPod();
  (*in.mutable_init_containers(0)->mutable_requests())["nec.com/ve"] = "0.5";
  (*in.mutable_init_containers(0)->mutable_limits())["nec.com/ve"] = "0.5";
  ExpectInvalid(in, "pod.init_containers[0].requests[\"nec.com/ve\"]: must be an integer");
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["nvidia.com/gpu"] = "2000m";
  auto p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->containers[0].requests.at("nvidia.com/gpu").Value(), 2);
}

TEST(PodProtoTest, HugePagesMustBeMultiplesOfThePageSize) {
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["hugepages-2Mi"] = "3Mi";
  ExpectInvalid(in, "pod.containers[0].limits[\"hugepages-2Mi\"]: must be a multiple of 2Mi");
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["hugepages-1Gi"] = "1536Mi";
  ExpectInvalid(in, "pod.containers[0].limits[\"hugepages-1Gi\"]: must be a multiple of 1Gi");
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["hugepages-huge"] = "2Mi";
  ExpectInvalid(in, "pod.containers[0].limits[\"hugepages-huge\"]: invalid hugepages page size");
  in = ValidPod();
  (*in.mutable_containers(0)->mutable_limits())["hugepages-2Mi"] = "4Mi";
  auto p = PodFromProto(in);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->containers[0].requests.at("hugepages-2Mi"), Q("4Mi"));
}

TEST(PodProtoTest, HugeBadQuantityKeepsTheMessageSmall) {
  // The message goes into grpc-message metadata: echoing 100 KB would make the reply fail
  // with RESOURCE_EXHAUSTED instead of INVALID_ARGUMENT.
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["cpu"] =
      std::string(100'000, '9') + std::string("\n\0", 2);
  ExpectInvalid(in, "pod.containers[0].requests[\"cpu\"]: invalid quantity \"999");
  const std::string message(PodFromProto(in).status().message());
  EXPECT_LT(message.size(), 300U);
  EXPECT_THAT(message, HasSubstr("\"...(100002 bytes): "));
  (*in.mutable_containers(0)->mutable_requests())["cpu"] = std::string("1\n\0", 3);
  ExpectInvalid(in, "pod.containers[0].requests[\"cpu\"]: invalid quantity \"1\\x0a\\x00\"");
}

TEST(PodProtoTest, ErrorMessagesEscapeValues) {
  v1::Pod in = ValidPod();
  in.set_uid("a\"b\n");
  auto result = PodFromProto(in);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("\"a\\\"b\\x0a\""));
}

// The message after the field path, e.g. `invalid uid "x": ...`.
std::string Reason(const absl::Status& status) {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

// A manifest and a gRPC pod with the same bad name are refused with the same reason.
TEST(PodProtoTest, ManifestParserAppliesTheSameNameRules) {
  struct Case {
    std::string metadata;   // the manifest's metadata map body
    std::string container;  // the manifest's container name
    void (*set)(v1::Pod&);
  } cases[] = {
      {"name: p, uid: \"u/../x\"", "a", [](v1::Pod& p) { p.set_uid("u/../x"); }},
      {"name: \"Web 0\"", "a", [](v1::Pod& p) { p.set_name("Web 0"); }},
      {"name: p, namespace: \"../etc\"", "a", [](v1::Pod& p) { p.set_namespace_("../etc"); }},
      {"name: p", "../../evil container",
       [](v1::Pod& p) { p.mutable_containers(0)->set_name("../../evil container"); }},
      {"name: p, annotations: {\"a b\": v}", "a",
       [](v1::Pod& p) { (*p.mutable_annotations())["a b"] = "v"; }},
  };
  for (const Case& c : cases) {
    auto manifest = pod::ParsePodManifest(
        "metadata: {" + c.metadata + "}\nspec: {containers: [{name: \"" + c.container + "\"}]}\n");
    v1::Pod proto = ValidPod();
    c.set(proto);
    auto converted = PodFromProto(proto);
    ASSERT_FALSE(manifest.ok()) << c.metadata;
    ASSERT_FALSE(converted.ok()) << c.metadata;
    EXPECT_EQ(Reason(manifest.status()), Reason(converted.status())) << c.metadata;
  }
}

TEST(PodProtoTest, FirstErrorIsDeterministic) {
  // Two bad resources: the one first in name order is reported, whatever the map order.
  v1::Pod in = ValidPod();
  (*in.mutable_containers(0)->mutable_requests())["zz"] = "bad";
  (*in.mutable_containers(0)->mutable_requests())["aa"] = "bad";
  ExpectInvalid(in, "pod.containers[0].requests[\"aa\"]");
}

}  // namespace
}  // namespace topologyd::rpc
