#include "tools/topoctl/support_explain_online.h"

#include <iostream>
#include <map>
#include <utility>
#include <vector>

#include "lib/common/absl_fmt.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"
#include "tools/topoctl/support_pods.h"

#include "fmt/format.h"

namespace topoctl {
namespace {

namespace v1 = ::topologyd::v1;

// The uid a manifest without one is explained under: Explain changes no state, so any
// well-formed uid will do.
constexpr char kExplainUid[] = "topoctl-explain";

nlohmann::json Affinity(const v1::Hint& h) {
  if (h.any_numa()) return nullptr;
  return std::vector<int>(h.numa_nodes().begin(), h.numa_nodes().end());
}

nlohmann::json HintArray(const google::protobuf::RepeatedPtrField<v1::Hint>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const v1::Hint& h : list) {
    out.push_back({{"affinity", Affinity(h)}, {"preferred", h.preferred()}});
  }
  return out;
}

nlohmann::json ResourceHintsJson(const v1::ResourceHints& r) {
  if (r.no_preference()) return nullptr;
  if (!r.upward_closed()) return HintArray(r.hints());
  return {{"upward_closed", true},
          {"universe", std::vector<int>(r.universe().begin(), r.universe().end())},
          {"hints", HintArray(r.hints())}};
}

nlohmann::json ContainerName(const v1::ContainerExplanation& e) {
  return e.name().empty() ? nlohmann::json(nullptr) : nlohmann::json(e.name());
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
  nlohmann::json doc = DecisionToJson(response.decision());
  doc["policy"] = response.policy();
  doc["scope"] = response.scope();
  doc["notes"] = std::vector<std::string>(response.notes().begin(), response.notes().end());
  nlohmann::json hints = nlohmann::json::array();
  nlohmann::json merged = nlohmann::json::array();
  for (const v1::ContainerExplanation& e : response.containers()) {
    nlohmann::json providers = nlohmann::json::object();
    for (const v1::ResourceHints& r : e.hints()) {
      if (r.resource().empty()) {
        // A provider-level entry: no map at all (no_preference), or an empty map.
        providers[r.provider()] =
            r.no_preference() ? nlohmann::json(nullptr) : nlohmann::json::object();
        continue;
      }
      nlohmann::json& p = providers[r.provider()];
      if (!p.is_object()) p = nlohmann::json::object();
      p[r.resource()] = ResourceHintsJson(r);
    }
    hints.push_back({{"container", ContainerName(e)}, {"providers", providers}});
    nlohmann::json m = {{"container", ContainerName(e)},
                        {"affinity", Affinity(e.merged())},
                        {"preferred", e.merged().preferred()},
                        {"admit", e.admit()}};
    // As the offline document: the key only for a merge given up at its limits.
    if (!e.limit_error().empty()) m["limit_error"] = e.limit_error();
    merged.push_back(std::move(m));
  }
  doc["hints"] = hints;
  doc["merged"] = merged;
  return doc;
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

  nlohmann::json doc = ExplainResponseToJson(response);
  PrintResult(doc, g.format(), PrintExplainTable);
  if (!response.decision().admitted()) {
    std::cerr << "topoctl: explain: would be refused: " << response.decision().reason() << ": "
              << response.decision().message() << "\n";
    return kExitRefused;
  }
  return kExitOk;
}

}  // namespace topoctl
