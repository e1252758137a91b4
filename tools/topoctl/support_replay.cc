#include "tools/topoctl/support_replay.h"

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"

#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/ledger/ledger.h"
#include "lib/pod/pod_manifest.h"
#include "lib/topology/topology_details_json.h"

namespace topoctl {
namespace {

using nlohmann::json;
namespace tl = topologyd;

json ContainerJson(const tl::state::ContainerRecord& c) {
  json out = {{"name", c.name}};
  if (c.init) out["init"] = true;
  if (c.exclusive) {
    out["exclusive"] = true;
    out["cpus"] = c.cpus.ToString();
  }
  if (!c.numa_affinity.empty())
    out["numa_affinity"] = std::set<int>(c.numa_affinity.begin(), c.numa_affinity.end());
  std::set<int> memory;
  for (const auto& [node, bytes] : c.memory) {
    for (const auto& [resource, amount] : bytes) {
      if (amount > 0) memory.insert(node);
    }
  }
  if (!memory.empty()) out["memory_numa"] = memory;
  return out;
}

absl::StatusOr<json> Admit(tl::ledger::Ledger& ledger, const json& manifest) {
  absl::StatusOr<tl::pod::Pod> pod = tl::pod::ParsePodManifest(manifest.dump());
  if (!pod.ok()) return pod.status();
  absl::StatusOr<tl::ledger::AdmitOutcome> outcome = ledger.Admit(*pod);
  if (!outcome.ok()) return outcome.status();
  json d = {{"op", "admit"}, {"pod", pod->uid}};
  if (outcome->admitted) {
    d["admitted"] = true;
    json containers = json::array();
    for (const tl::state::ContainerRecord& c : outcome->containers) {
      containers.push_back(ContainerJson(c));
    }
    d["containers"] = std::move(containers);
  } else {
    d["reason"] = outcome->reason;
    d["message"] = outcome->message;
  }
  d["shared_pool"] = ledger.shared_pool().ToString();
  return d;
}

}  // namespace

absl::StatusOr<json> ReplayCase(const json& parity_case) {
  if (!parity_case.is_object() || !parity_case.contains("machine") ||
      !parity_case.contains("operations") || !parity_case["operations"].is_array()) {
    return absl::InvalidArgumentError("a case has \"machine\", \"kubelet\" and \"operations\"");
  }
  absl::StatusOr<tl::topology::Topology> machine =
      tl::topology::TopologyFromDetailsJson(parity_case["machine"]);
  if (!machine.ok()) return machine.status();
  const json kubelet = parity_case.value("kubelet", json::object());
  json result = {{"decisions", json::array()}};
  absl::StatusOr<tl::config::Config> config = tl::config::ParseConfig(kubelet.dump(), "kubelet");
  if (!config.ok()) return config.status();
  absl::StatusOr<tl::admission::NodePolicy> policy = tl::config::BuildNodePolicy(*config, *machine);
  if (!policy.ok()) {
    result["setup_error"] = policy.status().message();
    return result;
  }
  absl::StatusOr<tl::ledger::Ledger> restored = tl::ledger::Ledger::Restore(
      std::make_shared<const tl::admission::NodePolicy>(*std::move(policy)), tl::state::State{},
      "(replay)", "(replay)");
  if (!restored.ok()) return restored.status();
  tl::ledger::Ledger ledger = *std::move(restored);
  for (const json& op : parity_case["operations"]) {
    if (op.contains("admit")) {
      absl::StatusOr<json> d = Admit(ledger, op["admit"]);
      if (!d.ok()) return d.status();
      result["decisions"].push_back(*std::move(d));
    } else if (op.contains("remove") && op["remove"].is_string()) {
      const std::string uid = op["remove"];
      // Deleting a refused pod releases nothing.
      if (absl::Status s = ledger.Release(uid, std::nullopt); !s.ok() && !absl::IsNotFound(s)) {
        return s;
      }
      result["decisions"].push_back(
          {{"op", "remove"}, {"pod", uid}, {"shared_pool", ledger.shared_pool().ToString()}});
    } else {
      return absl::InvalidArgumentError("an operation is {\"admit\": POD} or {\"remove\": UID}: " +
                                        op.dump());
    }
  }
  return result;
}

}  // namespace topoctl
