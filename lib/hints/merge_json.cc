#include "lib/hints/merge_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace topologyd::hints {
namespace {

using Json = nlohmann::json;

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// A JSON integer (not 5.0) as int64.
std::optional<int64_t> AsInteger(const Json& j) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > uint64_t{INT64_MAX}) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

// kubelet's options are strings; JSON gives booleans and numbers for convenience.
absl::StatusOr<std::string> OptionText(const std::string& name, const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return std::string(j.get<bool>() ? "true" : "false");
  if (j.is_number()) return j.dump();
  return Invalid(fmt::format("options.{}: expected a string, boolean or number", name));
}

}  // namespace

absl::StatusOr<MergeRequest> ParseMergeRequest(std::string_view json_text) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Invalid("input is not valid JSON");
  if (!root.is_object()) return Invalid("input must be a JSON object");
  for (const auto& [key, value] : root.items()) {
    if (key != "numa_nodes" && key != "policy" && key != "options" && key != "distances" &&
        key != "providers") {
      return Invalid(fmt::format("unknown key \"{}\"", key));
    }
  }

  MergeRequest req;
  // numa_nodes
  if (!root.contains("numa_nodes") || !root["numa_nodes"].is_array()) {
    return Invalid("\"numa_nodes\" must be an array of NUMA node ids");
  }
  const Json& nodes = root["numa_nodes"];
  std::vector<int> given;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::optional<int64_t> id = AsInteger(nodes[i]);
    if (!id || *id < 0 || *id > INT32_MAX) {
      return Invalid(fmt::format("numa_nodes[{}]: expected a non-negative integer id", i));
    }
    given.push_back(static_cast<int>(*id));
  }
  if (given.empty()) return Invalid("\"numa_nodes\" must not be empty");
  if (given.size() > static_cast<size_t>(NumaMask::kMaxNodes)) {
    return Invalid(fmt::format("{} NUMA nodes given; at most {} are supported", given.size(),
                               NumaMask::kMaxNodes));
  }
  req.node_ids = given;
  std::sort(req.node_ids.begin(), req.node_ids.end());
  for (size_t i = 1; i < req.node_ids.size(); ++i) {
    if (req.node_ids[i] == req.node_ids[i - 1]) {
      return Invalid(fmt::format("NUMA node {} is listed twice in numa_nodes", req.node_ids[i]));
    }
  }
  std::map<int, int> position;
  for (size_t p = 0; p < req.node_ids.size(); ++p) position[req.node_ids[p]] = static_cast<int>(p);
  MergeInput& in = req.input;
  in.num_nodes = static_cast<int>(req.node_ids.size());

  // policy
  if (!root.contains("policy") || !root["policy"].is_string()) {
    return Invalid("\"policy\" must be a string");
  }
  absl::StatusOr<Policy> policy = ParsePolicy(root["policy"].get<std::string>());
  if (!policy.ok()) return policy.status();
  in.policy = *policy;

  // options: kubelet does not parse them for policy none.
  if (root.contains("options")) {
    const Json& options = root["options"];
    if (!options.is_object()) return Invalid("\"options\" must be an object");
    std::map<std::string, std::string> texts;
    for (const auto& [name, value] : options.items()) {
      absl::StatusOr<std::string> text = OptionText(name, value);
      if (!text.ok()) return text.status();
      texts[name] = *text;
    }
    if (in.policy != Policy::kNone) {
      absl::StatusOr<PolicyOptions> parsed = ParsePolicyOptions(texts);
      if (!parsed.ok()) return parsed.status();
      in.options = *parsed;
    }
  }

  // distances, rows and columns in the order of numa_nodes as given.
  if (root.contains("distances") && !root["distances"].is_null()) {
    const Json& d = root["distances"];
    if (!d.is_array()) return Invalid("\"distances\" must be an array of rows");
    if (!d.empty()) {
      if (d.size() != given.size()) {
        return Invalid(
            fmt::format("\"distances\" has {} rows for {} NUMA nodes", d.size(), given.size()));
      }
      in.distances.assign(given.size(), std::vector<double>(given.size(), 0));
      for (size_t i = 0; i < d.size(); ++i) {
        if (!d[i].is_array() || d[i].size() != given.size()) {
          return Invalid(
              fmt::format("distances[{}] must be an array of {} numbers", i, given.size()));
        }
        for (size_t j = 0; j < d[i].size(); ++j) {
          if (!d[i][j].is_number() || !std::isfinite(d[i][j].get<double>())) {
            return Invalid(fmt::format("distances[{}][{}] must be a number", i, j));
          }
          in.distances[static_cast<size_t>(position[given[i]])]
                      [static_cast<size_t>(position[given[j]])] = d[i][j].get<double>();
        }
      }
    }
  }

  // providers
  if (!root.contains("providers") || !root["providers"].is_array()) {
    return Invalid("\"providers\" must be an array");
  }
  const Json& providers = root["providers"];
  for (size_t p = 0; p < providers.size(); ++p) {
    const Json& provider = providers[p];
    if (provider.is_null()) {
      in.providers.emplace_back(std::nullopt);
      continue;
    }
    if (!provider.is_object()) {
      return Invalid(fmt::format("providers[{}] must be null or an object", p));
    }
    std::map<std::string, HintList> resources;
    for (const auto& [resource, list] : provider.items()) {
      const std::string where = fmt::format("providers[{}][\"{}\"]", p, resource);
      if (list.is_null()) {
        resources.emplace(resource, std::nullopt);
        continue;
      }
      if (!list.is_array()) return Invalid(where + " must be null or an array of hints");
      ResourceHints rh;
      for (size_t h = 0; h < list.size(); ++h) {
        const Json& hint = list[h];
        const std::string hwhere = fmt::format("{}[{}]", where, h);
        if (!hint.is_object()) return Invalid(hwhere + " must be an object");
        for (const auto& [key, value] : hint.items()) {
          if (key != "affinity" && key != "preferred") {
            return Invalid(fmt::format("{}: unknown key \"{}\"", hwhere, key));
          }
        }
        if (!hint.contains("affinity")) return Invalid(hwhere + ": \"affinity\" is missing");
        if (!hint.contains("preferred") || !hint["preferred"].is_boolean()) {
          return Invalid(hwhere + ": \"preferred\" must be a boolean");
        }
        TopologyHint th;
        th.preferred = hint["preferred"].get<bool>();
        const Json& affinity = hint["affinity"];
        if (!affinity.is_null()) {
          if (!affinity.is_array()) {
            return Invalid(hwhere + ": \"affinity\" must be null or an array of NUMA node ids");
          }
          uint64_t bits = 0;
          for (const Json& idj : affinity) {
            std::optional<int64_t> id = AsInteger(idj);
            if (!id) return Invalid(hwhere + ": affinity ids must be integers");
            auto it = *id >= 0 && *id <= INT32_MAX ? position.find(static_cast<int>(*id))
                                                   : position.end();
            if (it == position.end()) {
              return Invalid(fmt::format("{}: NUMA node {} is not in numa_nodes", hwhere, *id));
            }
            bits |= uint64_t{1} << it->second;
          }
          th.affinity = NumaMask(bits);
        }
        rh.hints.push_back(th);
      }
      resources.emplace(resource, std::move(rh));
    }
    in.providers.emplace_back(std::move(resources));
  }

  if (absl::Status s = ValidateMergeInput(in); !s.ok()) return s;
  if (absl::Status s = CheckNumaNodeLimit(in.num_nodes, in.policy, in.options); !s.ok()) return s;
  return req;
}

std::vector<int> AffinityIds(const TopologyHint& hint, const std::vector<int>& node_ids) {
  std::vector<int> ids;
  if (!hint.affinity) return ids;
  for (int p : hint.affinity->Ids()) {
    ids.push_back(static_cast<size_t>(p) < node_ids.size() ? node_ids[static_cast<size_t>(p)] : p);
  }
  return ids;
}

std::string MergeResultToJson(const MergeResult& result, const std::vector<int>& node_ids) {
  nlohmann::ordered_json out;
  if (result.hint.affinity) {
    out["affinity"] = AffinityIds(result.hint, node_ids);
  } else {
    out["affinity"] = nullptr;
  }
  out["preferred"] = result.hint.preferred;
  out["admit"] = result.admit;
  return out.dump();
}

}  // namespace topologyd::hints
