// Helpers shared by the online pod commands (admit, explain, allocate, allocations):
// reading a Pod manifest into a request, and rendering allocations and admission decisions
// in the JSON shapes of docs/cli.md (`admit`, `allocations`) and as table cells.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

#include "topologyd/v1/topologyd.pb.h"

namespace topoctl {

// Reads `file` ("-" = stdin), parses it as a Kubernetes Pod manifest (YAML or JSON) and
// returns the request form, checked as the daemon will check it (lib/rpc/pod_proto.h), so
// that mistakes are reported against the file before anything is sent; all but the container
// count, which the daemon bounds by its own configuration (limits.containersPerPod), unknown
// here. An empty metadata.uid is replaced by `default_uid` when that is non-empty, else refused.
// INVALID_ARGUMENT (or the reason it cannot be read: NOT_FOUND, ...) with a message starting
// with the file.
absl::StatusOr<topologyd::v1::Pod> LoadPodRequest(const std::string& file,
                                                  const std::string& default_uid = "");

// What an Admit answer shows the daemon did not admit from `request`: the daemon answers a
// pod it already holds (by uid) with the allocation it holds, whatever the manifest now says.
// One line per difference ("container app asks 4 CPUs, holds 2", "container db is not in the
// admitted pod"); empty when the answer fits the request (or it was refused).
std::vector<std::string> DifferencesFromHeld(const topologyd::v1::Pod& request,
                                             const topologyd::v1::AdmitResponse& response);

// {"name", "cpus", "exclusive", "numa_affinity", "memory_numa", "devices"}, plus
// "container_id" and "cgroup" when `with_binding`.
nlohmann::json AllocationToJson(const topologyd::v1::ContainerAllocation& c, bool with_binding);

// {"admitted", "reason", "message", "containers": [AllocationToJson(c, false)...]}.
nlohmann::json DecisionToJson(const topologyd::v1::AdmitResponse& r);

// Table cells of one allocation JSON (as AllocationToJson makes it):
// cpus, exclusive ("yes"/"no"), NUMA affinity, memory nodes, devices ("-" when empty).
std::vector<std::string> AllocationCells(const nlohmann::json& c);

// "0,1" for [0,1]; "-" for an empty list.
std::string IdList(const nlohmann::json& ids);

// What the CONTAINER column adds to a container's name: " (init)" for an init container,
// " (sidecar)" for a restartable one; nothing for the others.
using ContainerMarks = std::map<std::string, std::string>;

// The marks of the containers of a Pod request.
ContainerMarks MarksOf(const topologyd::v1::Pod& pod);

// Prints a decision as a table (a summary line, then one row per container).
void PrintDecisionTable(const nlohmann::json& decision, const ContainerMarks& marks = {});

}  // namespace topoctl
