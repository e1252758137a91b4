#include "tools/topoctl/support_explain_online.h"

#include <iostream>
#include <utility>
#include <vector>

#include "fmt/format.h"

#include "lib/admission/admission_json.h"
#include "lib/common/absl_fmt.h"
#include "lib/rpc/admission_proto.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_explain_table.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_pods.h"

namespace topoctl {
namespace {

namespace v1 = ::topologyd::v1;

// The uid a manifest without one is explained under: Explain changes no state, so any
// well-formed uid will do.
constexpr char kExplainUid[] = "topoctl-explain";

// The offline document's renderer on the reply read back.
nlohmann::json Document(const topologyd::rpc::ExplainedResult& explained) {
  return topologyd::admission::AdmissionResultToJson(explained.numa, explained.result,
                                                     /*with_explanation=*/true);
}

}  // namespace

nlohmann::json ExplainResponseToJson(const v1::ExplainResponse& response) {
  absl::StatusOr<topologyd::rpc::ExplainedResult> explained =
      topologyd::rpc::ExplainResponseToResult(response);
  return explained.ok() ? Document(*explained) : nlohmann::json(nullptr);
}

int RunOnlineExplain(const GlobalOptions& g, const std::string& pod_file) {
  auto pod = LoadPodRequest(pod_file, kExplainUid);
  if (!pod.ok()) {
    return Fail("explain", kExitRefused, std::string(pod.status().message()));
  }
  auto stub = ConnectToDaemon(g.socket);
  v1::ExplainRequest request;
  *request.mutable_pod() = *std::move(pod);
  v1::ExplainResponse response;
  grpc::Status s = stub->Explain(CallContext().get(), request, &response);
  if (!s.ok()) return ReportRpcError("explain", s, g.socket);

  absl::StatusOr<topologyd::rpc::ExplainedResult> explained =
      topologyd::rpc::ExplainResponseToResult(response);
  if (!explained.ok()) {
    return Fail("explain", kExitRefused,
                "cannot read the daemon's reply: " + std::string(explained.status().message()));
  }
  const ContainerMarks marks = MarksOf(request.pod());
  PrintResult(Document(*explained), g.format(),
              [&marks](const nlohmann::json& doc) { PrintExplainTable(doc, marks); });
  if (!response.decision().admitted()) {
    return Fail("explain", kExitRefused,
                "the pod would be refused: " + response.decision().reason() + ": " +
                    response.decision().message());
  }
  return kExitOk;
}

}  // namespace topoctl
