// topologyd's NodeResourceTopology object against a real kube-apiserver v1.34 with the
// NodeResourceTopology CustomResourceDefinition of the API's own release (noderesourcetopology-api,
// pinned in tests/e2e/nrt/go.mod; tools/nrt-crd.sh fetches it): the object an in-process
// daemon answers GetNodeResourceTopology with, after an admission, is created through the API
// and reads back unchanged. The API server prunes every field its schema does not know, so a
// field topologyd writes that the scheduler's schema lacks would show here.
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
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
#include "tests/support/require_component.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::kube {
namespace {

namespace v1 = ::topologyd::v1;

// A YAML document as JSON, with YAML 1.2's core types for plain scalars (true/false, integers,
// null); quoted scalars stay strings.
nlohmann::json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = ToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const YAML::Node& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      if (text == "true" || text == "false") return text == "true";
      if (text == "null" || text == "~") return nullptr;
      if (!text.empty() && text.find_first_not_of("-0123456789") == std::string::npos &&
          text != "-") {
        return std::stoll(text);
      }
      return text;
    }
    default:
      return nullptr;
  }
}

// Polls `done` every 100 ms for up to 60 s.
bool PollUntil(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// The CRD file tools/nrt-crd.sh prints, or "" with `why` set.
std::string CrdPath(std::string* why) {
  const std::string command = std::string(TOPOLOGYD_SOURCE_DIR) + "/tools/nrt-crd.sh 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) {
    *why = "cannot run tools/nrt-crd.sh";
    return "";
  }
  std::string out;
  std::array<char, 512> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  const int status = ::pclose(pipe.release());
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (status != 0) {
    *why = "tools/nrt-crd.sh failed: " + out;
    return "";
  }
  return out;
}

TEST(NrtCrdTest, TopologydsObjectIsAcceptedAndReadsBackUnchanged) {
  if (std::string reason = ControlPlaneSkipReason(); !reason.empty()) SKIP_OR_FAIL() << reason;
  std::string why;
  const std::string crd_path = CrdPath(&why);
  if (crd_path.empty()) SKIP_OR_FAIL() << why;
  ControlPlane control_plane;
  absl::Status started = control_plane.Start();
  ASSERT_TRUE(started.ok()) << started;

  const nlohmann::json crd = ToJson(YAML::LoadFile(crd_path));
  absl::StatusOr<ApiResponse> created =
      control_plane.Request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->code, 201) << created->body.dump();
  const std::string crd_name = crd["metadata"]["name"];
  ASSERT_TRUE(PollUntil([&] {
    absl::StatusOr<ApiResponse> got = control_plane.Request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd_name);
    if (!got.ok() || got->code != 200) return false;
    for (const nlohmann::json& c :
         got->body["status"].value("conditions", nlohmann::json::array())) {
      if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
    }
    return false;
  })) << "the CRD was not established";

  // The daemon's object after one admission: zones with something taken.
  TempDir dir;
  WriteFile(dir.File("config.yaml"), MinimalConfig(dir.path(), "nrt: {nodeName: worker-1}\n"));
  daemon::Daemon topologyd(dir.File("config.yaml"));
  ASSERT_EQ(topologyd.Start(), 0);
  {
    grpc::ClientContext context;
    Deadline(context);
    v1::AdmitRequest request;
    *request.mutable_pod() = GuaranteedPod("p1", "2");
    v1::AdmitResponse admitted;
    ASSERT_TRUE(Connect(topologyd)->Admit(&context, request, &admitted).ok());
    ASSERT_TRUE(admitted.admitted()) << admitted.message();
  }
  v1::GetNodeResourceTopologyResponse nrt;
  {
    grpc::ClientContext context;
    Deadline(context);
    ASSERT_TRUE(Connect(topologyd)->GetNodeResourceTopology(&context, {}, &nrt).ok());
  }
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
