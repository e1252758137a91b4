// The Kubernetes API client and the shim's apiServer pod-spec source against a real
// kube-apiserver v1.34 on etcd (tests/support/kube/control_plane.h): a pod created through the
// API reads back as its manifest parses; RBAC refusals, missing pods, a pod created again
// under the same name and a wrong token come back as the documented errors.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/kube_api/kube_api_client.h"
#include "lib/pod/pod_manifest.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/require_component.h"

#include "shim/pod_spec_resolver.h"

namespace topologyd::testing::kube {
namespace {

using ::testing::HasSubstr;

// A Guaranteed pod with an init container, a sidecar and huge pages, as a user would write it.
const nlohmann::json kPod = nlohmann::json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web", "namespace": "default",
               "annotations": {"example.com/owner": "shop"}},
  "spec": {
    "initContainers": [
      {"name": "setup", "image": "busybox", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}},
      {"name": "proxy", "image": "busybox", "restartPolicy": "Always",
       "resources": {"limits": {"cpu": "500m", "memory": "32Mi"}}}],
    "containers": [
      {"name": "app", "image": "busybox",
       "resources": {"limits": {"cpu": "2", "memory": "128Mi", "hugepages-2Mi": "4Mi"}}}]}
})");

class ApiServerTest : public ::testing::Test {
 protected:
  // One control plane for the whole suite: it takes seconds to start.
  static void SetUpTestSuite() {
    if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) {
      skip_reason_ = new std::string(reason);
      return;
    }
    control_plane_ = new ControlPlane();
    start_status_ = new absl::Status(control_plane_->Start());
  }
  static void TearDownTestSuite() {
    delete control_plane_;
    control_plane_ = nullptr;
    delete start_status_;
    delete skip_reason_;
  }

  void SetUp() override {
    if (skip_reason_ != nullptr) SKIP_OR_FAIL() << *skip_reason_;
    ASSERT_TRUE(start_status_->ok()) << *start_status_;
  }

  // Creates `pod` (a fresh uid each time) and returns what the API server stored.
  static nlohmann::json Create(const nlohmann::json& pod) {
    auto created = control_plane_->Request("POST", "/api/v1/namespaces/default/pods", pod);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return nullptr;
    EXPECT_EQ(created->code, 201) << created->body.dump();
    return created->body;
  }

  static void Delete(const std::string& name) {
    auto deleted = control_plane_->Request(
        "DELETE", "/api/v1/namespaces/default/pods/" + name + "?gracePeriodSeconds=0");
    ASSERT_TRUE(deleted.ok()) << deleted.status();
    ASSERT_EQ(deleted->code, 200) << deleted->body.dump();
  }

  static kube_api::KubeApiClient Client(std::string_view token) {
    auto kubeconfig = control_plane_->Kubeconfig(token);
    EXPECT_TRUE(kubeconfig.ok());
    auto client = kube_api::KubeApiClient::FromKubeconfig(*kubeconfig);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  static ControlPlane* control_plane_;
  static absl::Status* start_status_;
  static std::string* skip_reason_;
};

ControlPlane* ApiServerTest::control_plane_ = nullptr;
absl::Status* ApiServerTest::start_status_ = nullptr;
std::string* ApiServerTest::skip_reason_ = nullptr;

TEST_F(ApiServerTest, APodReadsBackAsItsManifestParses) {
  const nlohmann::json stored = Create(kPod);
  ASSERT_FALSE(stored.is_null());
  const std::string uid = stored["metadata"]["uid"];
  absl::StatusOr<pod::Pod> read = Client(kAdminToken).GetPod("default", "web", uid);
  ASSERT_TRUE(read.ok()) << read.status();
  // The API server defaults requests from limits; the manifest parser does the same.
  nlohmann::json manifest = kPod;
  manifest["metadata"]["uid"] = uid;
  absl::StatusOr<pod::Pod> parsed = pod::ParsePodManifest(manifest.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*read, *parsed);
  EXPECT_EQ(read->uid, uid);
  ASSERT_EQ(read->init_containers.size(), 2u);
  EXPECT_TRUE(read->init_containers[1].restart_always);
  EXPECT_EQ(read->annotations.at("example.com/owner"), "shop");

  // The pod deleted and created again under the same name is another pod.
  Delete("web");
  ASSERT_FALSE(Create(kPod).is_null());
  read = Client(kAdminToken).GetPod("default", "web", uid);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("the sandbox has uid \"" + uid));
  Delete("web");
}

TEST_F(ApiServerTest, MissingPodsRefusalsAndBadTokensAreTheDocumentedErrors) {
  absl::StatusOr<pod::Pod> read = Client(kAdminToken).GetPod("default", "absent", "u");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << read.status();

  // A user without RBAC rights: kube-apiserver's own message, naming the verb and resource.
  read = Client(kNobodyToken).GetPod("default", "absent", "u");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnavailable) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("HTTP 403"));
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("User \\\"nobody\\\" cannot get resource \\\"pods\\\""));

  read = Client("not-a-token").GetPod("default", "absent", "u");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnavailable) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("HTTP 401"));
}

TEST_F(ApiServerTest, TheShimsApiServerSourceGivesThePodsFullSpec) {
  const nlohmann::json stored = Create(kPod);
  ASSERT_FALSE(stored.is_null());
  shim::ShimConfig config;
  config.pod_spec.sources = {shim::PodSpecSource::kApiServer, shim::PodSpecSource::kEstimate};
  auto kubeconfig = control_plane_->Kubeconfig(kAdminToken);
  ASSERT_TRUE(kubeconfig.ok());
  config.pod_spec.kubeconfig = *kubeconfig;
  shim::PodSpecResolver resolver(config, Client(kAdminToken));
  shim::SandboxRecord sandbox{.id = "sandbox-1",
                              .pod_uid = stored["metadata"]["uid"],
                              .namespace_name = "default",
                              .pod_name = "web"};
  std::optional<pod::Pod> spec = resolver.ApiServerSpec(sandbox);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->containers.at(0).name, "app");
  EXPECT_EQ(spec->containers.at(0).limits.at("hugepages-2Mi").Value(), 4 << 20);
  Delete("web");

  // A pod the API server does not have: topologyd's sources decide (the estimate).
  sandbox.pod_uid = "0b7e6d1c-0000-4000-8000-000000000001";
  sandbox.pod_name = "elsewhere";
  EXPECT_FALSE(resolver.ApiServerSpec(sandbox).has_value());
}

}  // namespace
}  // namespace topologyd::testing::kube
