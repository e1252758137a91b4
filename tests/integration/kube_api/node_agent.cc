#include "tests/integration/kube_api/node_agent.h"

#include "absl/strings/str_cat.h"

namespace topologyd::testing::kube {

absl::Status NodeAgent::Poll() {
  absl::StatusOr<ApiResponse> list =
      control_plane_.Request("GET", "/api/v1/namespaces/default/pods");
  if (!list.ok()) return list.status();
  if (list->code != 200) return absl::InternalError("listing pods: " + list->body.dump());
  for (const nlohmann::json& pod : list->body["items"]) {
    const std::string uid = pod["metadata"]["uid"];
    const std::string node = pod["spec"].value("nodeName", "");
    const auto worker = workers_.find(node);
    if (worker == workers_.end() || handled_.count(uid) != 0) continue;
    absl::StatusOr<v1::AdmitResponse> decided = worker->second->Admit(pod);
    if (!decided.ok()) return decided.status();
    handled_.insert(uid);
    const std::string name = pod["metadata"]["name"];
    if (decided->admitted()) {
      ++admitted_;
      absl::Status written = WriteStatus(name, {{"phase", "Running"}});
      if (!written.ok()) return written;
      continue;
    }
    ++refused_[decided->reason()];
    // kubelet's rejection of a pod at admission (its admit handler's result).
    absl::Status written =
        WriteStatus(name, {{"phase", "Failed"},
                           {"reason", decided->reason()},
                           {"message", "Pod was rejected: " + decided->message()}});
    if (!written.ok()) return written;
  }
  return absl::OkStatus();
}

absl::Status NodeAgent::WriteStatus(const std::string& name, const nlohmann::json& status) const {
  absl::StatusOr<ApiResponse> patched =
      control_plane_.Patch(absl::StrCat("/api/v1/namespaces/default/pods/", name, "/status"),
                           {{"status", status}}, "application/merge-patch+json");
  if (!patched.ok()) return patched.status();
  if (patched->code != 200) {
    return absl::InternalError(
        absl::StrCat("status of pod ", name, ": HTTP ", patched->code, ": ", patched->body.dump()));
  }
  return absl::OkStatus();
}

}  // namespace topologyd::testing::kube
