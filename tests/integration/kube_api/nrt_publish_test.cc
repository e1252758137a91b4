// topologyd publishing its NodeResourceTopology object to a real kube-apiserver v1.34
// (`nrt.apiServer`), with the credentials of a node (group system:nodes) and the RBAC of
// deploy/rbac.yaml: before the binding exists the daemon says which verb it lacks, before the
// CRD exists it names the CRD, once deploy/noderesourcetopology-crd.yaml is applied then it applies
// the object, owned by its Node and managed by "topologyd", and updates it after an admission.
// Admission never waits for any of it. When the API server restarts, the publisher's retries
// reconnect and bring the object up to date. With kube-controller-manager's garbage collector,
// the object goes with its Node.
#include <chrono>
#include <cstdint>
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
#include "tests/support/kube/controller_manager_process.h"
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

constexpr char kRbacManifest[] = TOPOLOGYD_SOURCE_DIR "/deploy/rbac.yaml";
constexpr char kCrdManifest[] = TOPOLOGYD_SOURCE_DIR "/deploy/noderesourcetopology-crd.yaml";

class NrtPublishTest : public ::testing::Test {
 protected:
  // Starts the control plane with Node worker-1 (its uid in node_uid_), and writes the config
  // of a daemon publishing to it with the node's credentials (config_path_); `api_server_keys`
  // are more keys of nrt.apiServer, each a line.
  void StartControlPlaneWithNode(const std::string& api_server_keys = "") {
    absl::Status started = control_plane_.Start();
    ASSERT_TRUE(started.ok()) << started;
    absl::StatusOr<ApiResponse> node =
        control_plane_.Request("POST", "/api/v1/nodes", {{"metadata", {{"name", "worker-1"}}}});
    ASSERT_TRUE(node.ok()) << node.status();
    ASSERT_EQ(node->code, 201) << node->body.dump();
    node_uid_ = node->body["metadata"]["uid"];
    absl::StatusOr<std::string> kubeconfig = control_plane_.Kubeconfig(kNodeToken);
    ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status();
    config_path_ = dir_.File("config.yaml");
    WriteFile(config_path_, MinimalConfig(dir_.path(),
                                          "nrt:\n  nodeName: worker-1\n  apiServer:\n"
                                          "    kubeconfig: " +
                                              *kubeconfig + "\n" + api_server_keys));
  }
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

  ControlPlane control_plane_;
  TempDir dir_;
  std::string node_uid_;
  std::string config_path_;
};

TEST_F(NrtPublishTest, PublishesWithTheNodesCredentialsOnceRbacAndCrdExist) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  ASSERT_NO_FATAL_FAILURE(StartControlPlaneWithNode());
  ControlPlane& control_plane = control_plane_;
  daemon::Daemon topologyd(config_path_);
  ASSERT_EQ(topologyd.Start(), 0);

  // No binding yet: the node may not even read its Node.
  ASSERT_TRUE(PollUntil([&] {
    return PublishStatus(topologyd).last_error().find("may not get nodes") != std::string::npos;
  })) << PublishStatus(topologyd).DebugString();
  EXPECT_EQ(PublishStatus(topologyd).server(), control_plane.server());
  // Admission goes on meanwhile.
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p1", "2"));

  // The binding, but no CRD: the CRD is named.
  absl::Status rbac = CreateManifest(control_plane, kRbacManifest);
  ASSERT_TRUE(rbac.ok()) << rbac;
  ASSERT_TRUE(PollUntil([&] {
    return PublishStatus(topologyd).last_error().find(
               "the NodeResourceTopology CRD (noderesourcetopologies.topology.node.k8s.io, "
               "version v1alpha2) is not installed") != std::string::npos;
  })) << PublishStatus(topologyd).DebugString();

  // The CRD topologyd ships: the next retry applies the object.
  absl::Status crd = ApplyNrtCrd(control_plane, kCrdManifest);
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
          {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "worker-1"}, {"uid", node_uid_}}}));
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
  // The publisher records an apply once the API server's answer is back, which can be after
  // the object is readable.
  EXPECT_TRUE(PollUntil(
      [&] {
        const v1::NrtPublishStatus now = PublishStatus(topologyd);
        return now.last_ok() && now.last_trigger() == "change";
      },
      10))
      << PublishStatus(topologyd).DebugString();
  EXPECT_EQ(topologyd.Stop(), 0);
}

// The API server goes away with the publisher's kept connection and comes back at the same
// address: admission goes on, the failures are counted with curl's reason, and the retry
// reconnects and brings the object up to date.
TEST_F(NrtPublishTest, RidesOutAnApiServerRestart) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  ASSERT_NO_FATAL_FAILURE(StartControlPlaneWithNode());
  ControlPlane& control_plane = control_plane_;
  absl::Status rbac = CreateManifest(control_plane, kRbacManifest);
  ASSERT_TRUE(rbac.ok()) << rbac;
  absl::Status crd = ApplyNrtCrd(control_plane, kCrdManifest);
  ASSERT_TRUE(crd.ok()) << crd;
  daemon::Daemon topologyd(config_path_);
  ASSERT_EQ(topologyd.Start(), 0);
  ASSERT_TRUE(PollUntil([&] { return PublishStatus(topologyd).last_ok(); }))
      << PublishStatus(topologyd).DebugString();
  // A change after start-up, published over the connection the publisher keeps.
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p1", "1"));
  ASSERT_TRUE(PollUntil([&] {
    return Fingerprint(StoredObject(control_plane)) == DaemonFingerprint(topologyd);
  })) << PublishStatus(topologyd).DebugString();
  const uint64_t failed_before = PublishStatus(topologyd).failed_publishes();

  control_plane.StopApiserver();
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p2", "1"));
  ASSERT_TRUE(PollUntil([&] { return PublishStatus(topologyd).consecutive_failures() >= 1; }))
      << PublishStatus(topologyd).DebugString();
  const v1::NrtPublishStatus down = PublishStatus(topologyd);
  EXPECT_FALSE(down.last_ok());
  EXPECT_NE(down.last_error().find("Couldn't connect"), std::string::npos) << down.last_error();
  EXPECT_GT(down.failed_publishes(), failed_before);

  absl::Status restarted = control_plane.RestartApiserver();
  ASSERT_TRUE(restarted.ok()) << restarted;
  // Retries double from 1 s: the one after the API server is back comes within about as long
  // again as the outage took.
  std::string want;
  ASSERT_TRUE(PollUntil(
      [&] {
        want = DaemonFingerprint(topologyd);
        return Fingerprint(StoredObject(control_plane)) == want;
      },
      120))
      << PublishStatus(topologyd).DebugString();
  // As above, the status follows the API server's answer.
  ASSERT_TRUE(PollUntil([&] { return PublishStatus(topologyd).last_ok(); }, 10))
      << PublishStatus(topologyd).DebugString();
  const v1::NrtPublishStatus recovered = PublishStatus(topologyd);
  EXPECT_EQ(recovered.consecutive_failures(), 0U);
  EXPECT_EQ(recovered.last_trigger(), "retry");
  EXPECT_EQ(topologyd.Stop(), 0);
}

// With a real kube-controller-manager's garbage collector: the object goes when its Node is
// deleted (the Node owns it), and a Node registered anew under the same name gets it back,
// owned by the new Node, once a resync reads the new uid.
TEST_F(NrtPublishTest, TheObjectGoesWithItsNodeAndComesBackForANewOne) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  if (std::string reason = ControllerManagerSkipReason(); !reason.empty()) {
    SKIP_OR_FAIL() << reason;
  }
  ASSERT_NO_FATAL_FAILURE(StartControlPlaneWithNode("    resyncPeriod: 2s\n"));
  ControlPlane& control_plane = control_plane_;
  absl::Status rbac = CreateManifest(control_plane, kRbacManifest);
  ASSERT_TRUE(rbac.ok()) << rbac;
  absl::Status crd = ApplyNrtCrd(control_plane, kCrdManifest);
  ASSERT_TRUE(crd.ok()) << crd;
  ControllerManagerProcess controller_manager;
  absl::Status collector = controller_manager.Start(control_plane, dir_.path(), "garbagecollector");
  ASSERT_TRUE(collector.ok()) << collector;

  daemon::Daemon topologyd(config_path_);
  ASSERT_EQ(topologyd.Start(), 0);
  auto owner_uid = [&]() -> std::string {
    const nlohmann::json stored = StoredObject(control_plane);
    if (!stored.is_object() || !stored.contains("metadata")) return "";
    const nlohmann::json owners =
        stored["metadata"].value("ownerReferences", nlohmann::json::array());
    return owners.empty() ? "" : owners[0].value("uid", "");
  };
  ASSERT_TRUE(PollUntil([&] { return owner_uid() == node_uid_; }))
      << PublishStatus(topologyd).DebugString();

  // The Node goes: the garbage collector deletes what it owns.
  absl::StatusOr<ApiResponse> deleted = control_plane.Request("DELETE", "/api/v1/nodes/worker-1");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_EQ(deleted->code, 200) << deleted->body.dump();
  ASSERT_TRUE(PollUntil(
      [&] {
        absl::StatusOr<ApiResponse> read = control_plane.Request("GET", kObjectPath);
        return read.ok() && read->code == 404;
      },
      120))
      << controller_manager.log();
  // The resyncs find no Node, and say so.
  ASSERT_TRUE(PollUntil([&] {
    return PublishStatus(topologyd).last_error().find("Node worker-1 is not registered") !=
           std::string::npos;
  })) << PublishStatus(topologyd).DebugString();

  // Registered anew: a retry applies the object again, owned by the new Node.
  absl::StatusOr<ApiResponse> again =
      control_plane.Request("POST", "/api/v1/nodes", {{"metadata", {{"name", "worker-1"}}}});
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->code, 201) << again->body.dump();
  const std::string new_uid = again->body["metadata"]["uid"];
  ASSERT_NE(new_uid, node_uid_);
  EXPECT_TRUE(PollUntil([&] { return owner_uid() == new_uid; }, 120))
      << PublishStatus(topologyd).DebugString();
  EXPECT_EQ(topologyd.Stop(), 0);
}

}  // namespace
}  // namespace topologyd::testing::kube
