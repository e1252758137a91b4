#include "tools/topoctl/support_replay.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"

#include "lib/common/status_macros.h"
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
  // A memory block spans its NUMA affinity; the record splits it per node, a node of the
  // affinity possibly holding 0 bytes of it. kubelet reports the affinity and the block's size.
  std::set<int> memory_numa;
  std::map<std::string, uint64_t> memory;
  for (const auto& [node, bytes] : c.memory) {
    memory_numa.insert(node);
    for (const auto& [resource, amount] : bytes) memory[resource] += amount;
  }
  if (!memory_numa.empty()) {
    out["memory_numa"] = memory_numa;
    out["memory"] = memory;
  }
  if (!c.devices.empty()) {
    json devices = json::object();
    for (const auto& [resource, ids] : c.devices) {
      devices[resource] = std::set<std::string>(ids.begin(), ids.end());
    }
    out["devices"] = std::move(devices);
  }
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
    // The containers start in order, as kubelet runs them after admission.
    for (const tl::state::ContainerRecord& c : outcome->containers) {
      TOPOLOGYD_RETURN_IF_ERROR(ledger.ContainerStarted(pod->uid, c.name));
    }
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
