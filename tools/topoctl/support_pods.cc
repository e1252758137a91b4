#include "tools/topoctl/support_pods.h"

#include <iostream>
#include <limits>
#include <map>
#include <set>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/cpuset/cpuset.h"
#include "lib/pod/pod_manifest.h"
#include "lib/pod/quantity.h"
#include "lib/rpc/pod_proto.h"
#include "tools/topoctl/support_errors.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {

absl::StatusOr<topologyd::v1::Pod> LoadPodRequest(const std::string& file,
                                                  const std::string& default_uid) {
  absl::StatusOr<std::string> text = ReadInputFile(file, "a Pod manifest");
  if (!text.ok()) return text.status();
  const std::string name = file == "-" ? "<stdin>" : file;
  // The daemon applies its configured container bound.
  constexpr size_t kNoContainerBound = std::numeric_limits<size_t>::max();
  auto pod = topologyd::pod::ParsePodManifest(*text, kNoContainerBound);
  if (!pod.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", name, pod.status().message()));
  }
  if (pod->uid.empty()) {
    if (default_uid.empty()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: metadata.uid: required (the daemon keys allocations by pod uid)", name));
    }
    pod->uid = default_uid;
  }
  topologyd::v1::Pod request;
  topologyd::rpc::PodToProto(*pod, &request);
  if (auto checked = topologyd::rpc::PodFromProto(request, kNoContainerBound); !checked.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", name, checked.status().message()));
  }
  return request;
}

std::vector<std::string> DifferencesFromHeld(const topologyd::v1::Pod& request,
                                             const topologyd::v1::AdmitResponse& response) {
  std::vector<std::string> differences;
  if (!response.admitted()) return differences;
  std::map<std::string, const topologyd::v1::ContainerAllocation*> held;
  for (const auto& c : response.containers()) held[c.name()] = &c;
  std::set<std::string> asked;
  for (const auto* list : {&request.init_containers(), &request.containers()}) {
    for (const topologyd::v1::Container& c : *list) {
      asked.insert(c.name());
      auto it = held.find(c.name());
      if (it == held.end()) {
        differences.push_back(fmt::format("container {} is not in the admitted pod", c.name()));
        continue;
      }
      // Exclusive CPUs are a whole CPU limit; the held count is what was admitted before.
      auto limit = c.limits().find("cpu");
      if (!it->second->exclusive() || limit == c.limits().end()) continue;
      absl::StatusOr<topologyd::pod::Quantity> cpus =
          topologyd::pod::Quantity::Parse(limit->second);
      absl::StatusOr<topologyd::CpuSet> holds = topologyd::CpuSet::Parse(it->second->cpus());
      if (!cpus.ok() || !holds.ok() || !cpus->AsInt64()) continue;
      if (*cpus->AsInt64() != holds->Size()) {
        differences.push_back(fmt::format("container {} asks {} CPUs, holds {} ({})", c.name(),
                                          *cpus->AsInt64(), holds->Size(), it->second->cpus()));
      }
    }
  }
  for (const auto& [name, allocation] : held) {
    if (!asked.contains(name)) {
      differences.push_back(
          fmt::format("the admitted pod has container {}, which this manifest "
                      "does not",
                      name));
    }
  }
  return differences;
}

nlohmann::json AllocationToJson(const topologyd::v1::ContainerAllocation& c, bool with_binding) {
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [resource, ids] : c.devices()) {
    devices[resource] = std::vector<std::string>(ids.ids().begin(), ids.ids().end());
  }
  nlohmann::json doc = {
      {"name", c.name()},
      {"cpus", c.cpus()},
      {"exclusive", c.exclusive()},
      {"numa_affinity", std::vector<int>(c.numa_affinity().begin(), c.numa_affinity().end())},
      {"memory_numa", std::vector<int>(c.memory_numa().begin(), c.memory_numa().end())},
      {"devices", devices},
  };
  if (with_binding) {
    doc["container_id"] = c.container_id();
    doc["cgroup"] = c.cgroup();
  }
  return doc;
}

nlohmann::json DecisionToJson(const topologyd::v1::AdmitResponse& r) {
  nlohmann::json containers = nlohmann::json::array();
  for (const auto& c : r.containers()) containers.push_back(AllocationToJson(c, false));
  return {{"admitted", r.admitted()},
          {"reason", r.reason()},
          {"message", r.message()},
          {"containers", containers}};
}

std::string IdList(const nlohmann::json& ids) {
  if (ids.empty()) return "-";
  std::string out;
  for (const auto& id : ids) {
    if (!out.empty()) out += ",";
    out += id.is_string() ? id.get<std::string>() : JsonText(id);
  }
  return out;
}

std::vector<std::string> AllocationCells(const nlohmann::json& c) {
  std::string devices;
  for (auto it = c["devices"].begin(); it != c["devices"].end(); ++it) {
    if (!devices.empty()) devices += " ";
    devices += it.key() + "=" + IdList(it.value());
  }
  const std::string cpus = c["cpus"].get<std::string>();
  return {cpus.empty() ? "-" : cpus, c["exclusive"].get<bool>() ? "yes" : "no",
          IdList(c["numa_affinity"]), IdList(c["memory_numa"]), devices.empty() ? "-" : devices};
}

ContainerMarks MarksOf(const topologyd::v1::Pod& pod) {
  ContainerMarks marks;
  for (const topologyd::v1::Container& c : pod.init_containers()) {
    marks[c.name()] = c.restart_policy() == "Always" ? " (sidecar)" : " (init)";
  }
  return marks;
}

void PrintDecisionTable(const nlohmann::json& decision, const ContainerMarks& marks) {
  if (decision["admitted"].get<bool>()) {
    std::cout << "admitted\n";
  } else {
    std::cout << "refused: " << decision["reason"].get<std::string>() << ": "
              << decision["message"].get<std::string>() << "\n";
  }
  if (decision["containers"].empty()) return;
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : decision["containers"]) {
    const std::string name = c["name"].get<std::string>();
    const auto mark = marks.find(name);
    std::vector<std::string> row = {name + (mark == marks.end() ? "" : mark->second)};
    for (std::string& cell : AllocationCells(c)) row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  std::cout << RenderTable({"CONTAINER", "CPUS", "EXCLUSIVE", "NUMA", "MEMS", "DEVICES"}, rows);
}

}  // namespace topoctl
