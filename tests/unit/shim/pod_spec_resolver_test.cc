// The shim's choice of a pod's spec source: the configured order, the annotation's errors, the
// fall-through when the API server cannot answer, and one resolution per pod. The API server is
// a small HTTP server (python3) serving one Pod.
#include "shim/pod_spec_resolver.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/pod/pod_manifest.h"
#include "tests/support/port_server.h"
#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"

namespace topologyd::shim {
namespace {

constexpr char kUid[] = "6d1c0d5e-1f3a-4b7c-9d2e-0a1b2c3d4e5f";

constexpr char kPodJson[] = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web", "namespace": "shop", "uid": "6d1c0d5e-1f3a-4b7c-9d2e-0a1b2c3d4e5f",
               "resourceVersion": "12345"},
  "spec": {"nodeName": "n1",
           "initContainers": [{"name": "setup", "image": "x",
                               "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}],
           "containers": [{"name": "app", "image": "y",
                           "resources": {"limits": {"cpu": "2", "memory": "128Mi"}}}]},
  "status": {"phase": "Pending"}
})";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PodSpecResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
      SKIP_OR_FAIL() << "needs python3 to run a stand-in API server";
    }
    std::ofstream(dir_ + "/pod.json") << kPodJson;
    const std::string started = server_process_.Start(
        {"python3", std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/support/fake_apiserver.py", "--pod",
         dir_ + "/pod.json", "--log", dir_ + "/requests.log"});
    ASSERT_EQ(started, "") << "the stand-in API server did not start";
    server_ = "http://127.0.0.1:" + std::to_string(server_process_.port());
  }

  PodSpecResolver Resolver(std::vector<PodSpecSource> sources, std::string server = "") {
    ShimConfig config;
    config.pod_spec.sources = std::move(sources);
    kube_api::KubeApiConfig api;
    api.server = server.empty() ? server_ : server;
    return PodSpecResolver(config, kube_api::KubeApiClient(api));
  }

  int Requests() {
    std::string log = ReadAll(dir_ + "/requests.log");
    return static_cast<int>(std::count(log.begin(), log.end(), '\n'));
  }

  SandboxRecord Sandbox(std::map<std::string, std::string> annotations = {}) {
    return SandboxRecord{"s1", kUid, "shop", "web", std::move(annotations), "/kubepods/pod1", 0};
  }

  topologyd::testing::TempDir tmp_{"tpd-resolver"};
  const std::string dir_ = tmp_.path();
  topologyd::testing::PortServer server_process_;
  std::string server_;
};

TEST_F(PodSpecResolverTest, TheApiServersPodIsTheManifestsAndIsAskedOncePerPod) {
  PodSpecResolver resolver = Resolver({PodSpecSource::kApiServer, PodSpecSource::kEstimate});
  std::optional<pod::Pod> spec = resolver.ApiServerSpec(Sandbox());
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(*spec, *pod::ParsePodManifest(kPodJson));
  EXPECT_EQ(resolver.ApiServerSpec(Sandbox()), spec);
  EXPECT_EQ(Requests(), 1);
  resolver.Forget(kUid);
  EXPECT_EQ(Requests(), 1);
  EXPECT_EQ(resolver.ApiServerSpec(Sandbox()), spec);
  EXPECT_EQ(Requests(), 2);
}

TEST_F(PodSpecResolverTest, AnApiServerThatCannotAnswerIsAskedOncePerPod) {
  // A uid the API server does not have (the pod was recreated under the same name).
  PodSpecResolver resolver = Resolver({PodSpecSource::kApiServer, PodSpecSource::kEstimate});
  SandboxRecord other = Sandbox();
  other.pod_uid = "00000000-0000-0000-0000-000000000000";
  EXPECT_FALSE(resolver.ApiServerSpec(other).has_value());
  EXPECT_FALSE(resolver.ApiServerSpec(other).has_value());
  EXPECT_EQ(Requests(), 1) << "the pod keeps the source it was given";

  // Nobody listening.
  PodSpecResolver unreachable =
      Resolver({PodSpecSource::kApiServer, PodSpecSource::kEstimate}, "http://127.0.0.1:1");
  EXPECT_FALSE(unreachable.ApiServerSpec(Sandbox()).has_value());
}

TEST_F(PodSpecResolverTest, ASourceListedBeforeTheApiServerLeavesThePodToTopologyd) {
  // The annotation, even a malformed one: topologyd reads it and says what is wrong.
  PodSpecResolver resolver = Resolver({PodSpecSource::kAnnotation, PodSpecSource::kApiServer});
  EXPECT_FALSE(resolver.ApiServerSpec(Sandbox({{"topologyd.io/resources", R"({"containers": 3})"}}))
                   .has_value());
  EXPECT_EQ(Requests(), 0);
  PodSpecResolver estimate_first = Resolver({PodSpecSource::kEstimate, PodSpecSource::kApiServer});
  EXPECT_FALSE(estimate_first.ApiServerSpec(Sandbox()).has_value());
  EXPECT_EQ(Requests(), 0);

  // Without the annotation, the API server is next.
  PodSpecResolver annotation_first =
      Resolver({PodSpecSource::kAnnotation, PodSpecSource::kApiServer});
  EXPECT_TRUE(annotation_first.ApiServerSpec(Sandbox()).has_value());
  EXPECT_EQ(Requests(), 1);
}

}  // namespace
}  // namespace topologyd::shim
