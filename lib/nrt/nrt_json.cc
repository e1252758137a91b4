#include "lib/nrt/nrt_json.h"

namespace topologyd::nrt {
namespace {

nlohmann::json AttributesJson(const std::vector<AttributeInfo>& attributes) {
  nlohmann::json out = nlohmann::json::array();
  for (const AttributeInfo& a : attributes) out.push_back({{"name", a.name}, {"value", a.value}});
  return out;
}

nlohmann::json ZoneJson(const Zone& zone) {
  nlohmann::json z = {{"name", zone.name}, {"type", zone.type}};
  if (!zone.costs.empty()) {
    nlohmann::json costs = nlohmann::json::array();
    for (const CostInfo& c : zone.costs) costs.push_back({{"name", c.name}, {"value", c.value}});
    z["costs"] = std::move(costs);
  }
  nlohmann::json resources = nlohmann::json::array();
  for (const ResourceInfo& r : zone.resources) {
    resources.push_back({{"name", r.name},
                         {"capacity", std::to_string(r.capacity)},
                         {"allocatable", std::to_string(r.allocatable)},
                         {"available", std::to_string(r.available)}});
  }
  z["resources"] = std::move(resources);
  return z;
}

}  // namespace

nlohmann::json ToJson(const NodeResourceTopology& nrt) {
  nlohmann::json zones = nlohmann::json::array();
  for (const Zone& zone : nrt.zones) zones.push_back(ZoneJson(zone));
  return {{"apiVersion", kApiVersion},
          {"kind", kKind},
          {"metadata", {{"name", nrt.name}}},
          {"topologyPolicies", nrt.topology_policies},
          {"attributes", AttributesJson(nrt.attributes)},
          {"zones", std::move(zones)}};
}

nlohmann::json ToApplyJson(const NodeResourceTopology& nrt, const std::string& node_uid) {
  nlohmann::json object = ToJson(nrt);
  object["metadata"]["ownerReferences"] = nlohmann::json::array(
      {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", nrt.name}, {"uid", node_uid}}});
  return object;
}

}  // namespace topologyd::nrt
