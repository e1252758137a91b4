#include "tools/topoctl/support_explain_online.h"

#include <iostream>
#include <utility>
#include <vector>

#include "fmt/format.h"

#include "lib/admission/admission_json.h"
#include "lib/common/absl_fmt.h"
#include "lib/rpc/admission_proto.h"
#include "tools/topoctl/support_client.h"
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

// --- table ---------------------------------------------------------------------------------

std::string AffinityText(const nlohmann::json& affinity) {
  if (affinity.is_null()) return "any";
  return "[" + (affinity.empty() ? std::string() : IdList(affinity)) + "]";
}

std::string HintListText(const nlohmann::json& list) {
  if (list.is_null()) return "no preference";
  const bool upward = list.is_object();
  const nlohmann::json& hints = upward ? list["hints"] : list;
  if (hints.empty()) return "cannot be satisfied";
  // As many masks as a terminal line holds; long lists (memory hints over many nodes) are cut.
  constexpr size_t kMaxShown = 8;
  std::string out;
  for (size_t i = 0; i < hints.size() && i < kMaxShown; ++i) {
    if (!out.empty()) out += ", ";
    out += AffinityText(hints[i]["affinity"]);
    if (hints[i]["preferred"].get<bool>()) out += " preferred";
  }
  if (hints.size() > kMaxShown) out += fmt::format(" and {} more", hints.size() - kMaxShown);
  if (upward) out += " (or any superset within " + AffinityText(list["universe"]) + ")";
  return out;
}

}  // namespace

void PrintExplainTable(const nlohmann::json& doc) {
  PrintDecisionTable(doc);
  std::cout << "\npolicy " << doc["policy"].get<std::string>() << ", scope "
            << doc["scope"].get<std::string>() << "\n";
  for (const auto& note : doc["notes"]) std::cout << "note: " << note.get<std::string>() << "\n";
  for (size_t i = 0; i < doc["hints"].size(); ++i) {
    const nlohmann::json& step = doc["hints"][i];
    const nlohmann::json& merged = doc["merged"][i];
    std::cout << "\n"
              << (step["container"].is_null() ? std::string("pod")
                                              : "container " + step["container"].get<std::string>())
              << "\n";
    std::vector<std::vector<std::string>> rows;
    for (auto p = step["providers"].begin(); p != step["providers"].end(); ++p) {
      if (p.value().is_null()) {
        rows.push_back({p.key(), "-", "no preference"});
        continue;
      }
      for (auto r = p.value().begin(); r != p.value().end(); ++r) {
        rows.push_back({p.key(), r.key(), HintListText(r.value())});
      }
    }
    rows.push_back({"merged", "-",
                    AffinityText(merged["affinity"]) +
                        (merged["preferred"].get<bool>() ? " preferred" : " not preferred") +
                        (merged["admit"].get<bool>() ? ", admit" : ", refuse")});
    std::cout << RenderTable({"PROVIDER", "RESOURCE", "HINTS"}, rows);
    if (merged.contains("limit_error")) {
      std::cout << "merge given up: " << merged["limit_error"].get<std::string>() << "\n";
    }
  }
}

nlohmann::json ExplainResponseToJson(const v1::ExplainResponse& response) {
  absl::StatusOr<topologyd::rpc::ExplainedResult> explained =
      topologyd::rpc::ExplainResponseToResult(response);
  return explained.ok() ? Document(*explained) : nlohmann::json(nullptr);
}

int RunOnlineExplain(const GlobalOptions& g, const std::string& pod_file) {
  auto pod = LoadPodRequest(pod_file, kExplainUid);
  if (!pod.ok()) {
    std::cerr << "topoctl: explain: " << pod.status().message() << "\n";
    return kExitRefused;
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
    std::cerr << "topoctl: explain: cannot read the daemon's reply: "
              << explained.status().message() << "\n";
    return kExitRefused;
  }
  PrintResult(Document(*explained), g.format(), PrintExplainTable);
  if (!response.decision().admitted()) {
    std::cerr << "topoctl: explain: would be refused: " << response.decision().reason() << ": "
              << response.decision().message() << "\n";
    return kExitRefused;
  }
  return kExitOk;
}

}  // namespace topoctl
