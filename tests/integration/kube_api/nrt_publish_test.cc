// topologyd publishing its NodeResourceTopology object to a real kube-apiserver v1.34
// (`nrt.apiServer`), with the credentials of a node (group system:nodes) and the RBAC of
// deploy/rbac.yaml: before the binding exists the daemon says which verb it lacks, before the
// CRD exists it names the CRD, once deploy/noderesourcetopology-crd.yaml is applied then it applies
// the object, owned by its Node and managed by "topologyd", and updates it after an admission.
// Admission never waits for any of it.
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "daemon/daemon.h"
#include "tests/integration/api_pods.h"
#include "tests/integration/in_process_client.h"
#include "tests/integration/process.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/kube/nrt_crd.h"
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::kube {
namespace {

namespace v1 = ::topologyd::v1;

constexpr char kObjectPath[] =
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/worker-1";

// Polls `done` every 100 ms for up to `seconds`; whether it became true.
bool PollUntil(const std::function<bool()>& done, int seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// Creates every document of a manifest file through the API as the administrator.
absl::Status CreateManifest(const ControlPlane& control_plane, const std::string& path) {
  for (const YAML::Node& document : YAML::LoadAllFromFile(path)) {
    const nlohmann::json object = YamlToJson(document);
    const std::string kind = object.value("kind", "");
    std::string collection;
    if (kind == "ClusterRole") collection = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    if (kind == "ClusterRoleBinding") {
      collection = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    }
    if (collection.empty()) return absl::InvalidArgumentError(path + ": unexpected kind " + kind);
    absl::StatusOr<ApiResponse> created = control_plane.Request("POST", collection, object);
    if (!created.ok()) return created.status();
    if (created->code != 201) return absl::InternalError(created->body.dump());
  }
  return absl::OkStatus();
}

class NrtPublishTest : public ::testing::Test {
 protected:
  v1::NrtPublishStatus PublishStatus(daemon::Daemon& topologyd) {
    grpc::ClientContext context;
    Deadline(context);
    v1::StatusResponse status;
    EXPECT_TRUE(Connect(topologyd)->Status(&context, {}, &status).ok());
    return status.nrt_api_server();
  }
  std::string DaemonFingerprint(daemon::Daemon& topologyd) {
    grpc::ClientContext context;
    Deadline(context);
    v1::GetNodeResourceTopologyResponse nrt;
    EXPECT_TRUE(Connect(topologyd)->GetNodeResourceTopology(&context, {}, &nrt).ok());
    return Fingerprint(nlohmann::json::parse(nrt.object_json()));
  }
  static std::string Fingerprint(const nlohmann::json& object) {
    for (const nlohmann::json& a : object.value("attributes", nlohmann::json::array())) {
      if (a.value("name", "") == "nodeTopologyPodsFingerprint") return a.value("value", "");
    }
    return "";
  }
  nlohmann::json StoredObject(const ControlPlane& control_plane) {
    absl::StatusOr<ApiResponse> read = control_plane.Request("GET", kObjectPath);
    return read.ok() && read->code == 200 ? read->body : nlohmann::json();
  }
};

TEST_F(NrtPublishTest, PublishesWithTheNodesCredentialsOnceRbacAndCrdExist) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  ControlPlane control_plane;
  absl::Status started = control_plane.Start();
  ASSERT_TRUE(started.ok()) << started;
  absl::StatusOr<ApiResponse> node =
      control_plane.Request("POST", "/api/v1/nodes", {{"metadata", {{"name", "worker-1"}}}});
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ(node->code, 201) << node->body.dump();
  const std::string node_uid = node->body["metadata"]["uid"];
  absl::StatusOr<std::string> kubeconfig = control_plane.Kubeconfig(kNodeToken);
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status();

  TempDir dir;
  WriteFile(dir.File("config.yaml"),
            MinimalConfig(dir.path(), "nrt:\n  nodeName: worker-1\n  apiServer:\n    kubeconfig: " +
                                          *kubeconfig + "\n"));
  daemon::Daemon topologyd(dir.File("config.yaml"));
  ASSERT_EQ(topologyd.Start(), 0);

  // No binding yet: the node may not even read its Node.
  ASSERT_TRUE(PollUntil([&] {
    return PublishStatus(topologyd).last_error().find("may not get nodes") != std::string::npos;
  })) << PublishStatus(topologyd).DebugString();
  EXPECT_EQ(PublishStatus(topologyd).server(), control_plane.server());
  // Admission goes on meanwhile.
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p1", "2"));

  // The binding, but no CRD: the CRD is named.
  absl::Status rbac =
      CreateManifest(control_plane, std::string(TOPOLOGYD_SOURCE_DIR) + "/deploy/rbac.yaml");
  ASSERT_TRUE(rbac.ok()) << rbac;
  ASSERT_TRUE(PollUntil([&] {
    return PublishStatus(topologyd).last_error().find(
               "the NodeResourceTopology CRD (noderesourcetopologies.topology.node.k8s.io, "
               "version v1alpha2) is not installed") != std::string::npos;
  })) << PublishStatus(topologyd).DebugString();

  // The CRD topologyd ships: the next retry applies the object.
  absl::Status crd = ApplyNrtCrd(
      control_plane, std::string(TOPOLOGYD_SOURCE_DIR) + "/deploy/noderesourcetopology-crd.yaml");
  ASSERT_TRUE(crd.ok()) << crd;
  ASSERT_TRUE(PollUntil([&] { return PublishStatus(topologyd).last_ok(); }))
      << PublishStatus(topologyd).DebugString();
  const v1::NrtPublishStatus recovered = PublishStatus(topologyd);
  EXPECT_EQ(recovered.last_trigger(), "retry");
  EXPECT_GE(recovered.failed_publishes(), 2U);
  EXPECT_EQ(recovered.consecutive_failures(), 0U);

  nlohmann::json stored = StoredObject(control_plane);
  ASSERT_FALSE(stored.is_null());
  EXPECT_EQ(
      stored["metadata"]["ownerReferences"],
      nlohmann::json::array(
          {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "worker-1"}, {"uid", node_uid}}}));
  ASSERT_EQ(stored["metadata"]["managedFields"].size(), 1U) << stored.dump();
  EXPECT_EQ(stored["metadata"]["managedFields"][0]["manager"], "topologyd");
  EXPECT_EQ(stored["metadata"]["managedFields"][0]["operation"], "Apply");
  EXPECT_EQ(Fingerprint(stored), DaemonFingerprint(topologyd));

  // An admission: the object follows. The daemon's own object shows only durable state, and
  // the checkpoint is written after Admit answers, so wait for it to change first.
  const std::string before = Fingerprint(stored);
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p2", "1"));
  std::string after;
  ASSERT_TRUE(PollUntil(
      [&] {
        after = DaemonFingerprint(topologyd);
        return after != before;
      },
      10));
  EXPECT_TRUE(PollUntil([&] { return Fingerprint(StoredObject(control_plane)) == after; }, 10));
  EXPECT_EQ(PublishStatus(topologyd).last_trigger(), "change");
  EXPECT_EQ(topologyd.Stop(), 0);
}

}  // namespace
}  // namespace topologyd::testing::kube
