// topologyd's NodeResourceTopology object against a real kube-apiserver v1.34 with the
// NodeResourceTopology CustomResourceDefinition of the API's own release (noderesourcetopology-api,
// pinned in tests/e2e/nrt/go.mod; tools/nrt-crd.sh fetches it): the object an in-process
// daemon answers GetNodeResourceTopology with, after an admission, is created through the API
// and reads back unchanged. The API server prunes every field its schema does not know, so a
// field topologyd writes that the scheduler's schema lacks would show here.
#include "tests/support/kube/nrt_crd.h"

#include <chrono>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "daemon/daemon.h"
#include "tests/integration/api_pods.h"
#include "tests/integration/in_process_client.h"
#include "tests/integration/process.h"
#include "tests/support/kube/control_plane.h"
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::kube {
namespace {

namespace v1 = ::topologyd::v1;

TEST(NrtCrdTest, TopologydsObjectIsAcceptedAndReadsBackUnchanged) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  absl::StatusOr<std::string> crd_path = NrtCrdPath();
  if (!crd_path.ok()) SKIP_OR_FAIL() << crd_path.status().message();
  ControlPlane control_plane;
  absl::Status started = control_plane.Start();
  ASSERT_TRUE(started.ok()) << started;
  absl::Status applied = ApplyNrtCrd(control_plane, *crd_path);
  ASSERT_TRUE(applied.ok()) << applied;

  // The daemon's object after one admission: zones with something taken.
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path(), "nrt: {nodeName: worker-1}\n"));
  daemon::Daemon topologyd(dir.File("config.yaml"));
  ASSERT_EQ(topologyd.Start(), 0);
  ASSERT_NO_FATAL_FAILURE(AdmitGuaranteed(topologyd, "p1", "2"));
  // The durable view the object is built from follows the admission's answer by a moment.
  v1::GetNodeResourceTopologyResponse nrt;
  for (int attempt = 0; attempt < 100 && nrt.generation() == 0; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    grpc::ClientContext context;
    Deadline(context);
    ASSERT_TRUE(Connect(topologyd)->GetNodeResourceTopology(&context, {}, &nrt).ok());
  }
  ASSERT_GT(nrt.generation(), 0U);
  EXPECT_EQ(topologyd.Stop(), 0);
  const nlohmann::json object = nlohmann::json::parse(nrt.object_json());
  ASSERT_EQ(object.value("apiVersion", ""), "topology.node.k8s.io/v1alpha2");

  const std::string collection = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";
  absl::StatusOr<ApiResponse> stored = control_plane.Request("POST", collection, object);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->code, 201) << stored->body.dump();
  absl::StatusOr<ApiResponse> read = control_plane.Request("GET", collection + "/worker-1");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->code, 200) << read->body.dump();
  // Everything but the metadata the API server adds reads back as sent.
  for (const char* field : {"apiVersion", "kind", "topologyPolicies", "zones", "attributes"}) {
    EXPECT_EQ(read->body.value(field, nlohmann::json()), object.value(field, nlohmann::json()))
        << field;
  }
  EXPECT_EQ(read->body["metadata"]["name"], "worker-1");
  EXPECT_FALSE(object["zones"].empty());
}

}  // namespace
}  // namespace topologyd::testing::kube
