#include "tests/unit/placement/fake_placement.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace topologyd::placement::testing {
namespace {

using nlohmann::json;

HttpResponse Error(long status, const std::string& code) {
  return {status,
          json{{"errors",
                json::array({json{
                    {"status", status}, {"code", code}, {"title", "error"}, {"detail", code}}})}}
              .dump()};
}

HttpResponse Ok(long status, const json& body) { return {status, body.dump()}; }

}  // namespace

std::vector<HttpRequest> FakePlacement::Writes() const {
  std::vector<HttpRequest> out;
  for (const HttpRequest& r : requests) {
    if (r.method != "GET") out.push_back(r);
  }
  return out;
}

std::string FakePlacement::RootOf(const std::string& uuid) const {
  std::string at = uuid;
  for (int i = 0; i < 100; ++i) {
    auto it = providers.find(at);
    if (it == providers.end() || !it->second.parent) return at;
    at = *it->second.parent;
  }
  return at;
}

HttpResponse FakePlacement::ProviderJson(const std::string& uuid) const {
  const Rp& rp = providers.at(uuid);
  return Ok(200, json{{"uuid", uuid},
                      {"name", rp.name},
                      {"generation", rp.generation},
                      {"parent_provider_uuid", rp.parent ? json(*rp.parent) : json(nullptr)},
                      {"root_provider_uuid", RootOf(uuid)}});
}

absl::StatusOr<HttpResponse> FakePlacement::Send(const HttpRequest& request,
                                                 const std::string& microversion) {
  requests.push_back(request);
  for (const auto& [prefix, response] : overrides) {
    if (absl::StartsWith(request.path, prefix)) return response;
  }
  const std::string& m = request.method;
  const std::string& path = request.path;
  if (path == "/") {
    return Ok(200, json{{"versions", json::array({json{{"id", "v1.0"},
                                                       {"max_version", max_version},
                                                       {"min_version", "1.0"}}})}});
  }
  if (microversion.empty()) return Error(400, "placement.undefined_code");
  const std::vector<std::string> parts = absl::StrSplit(
      path.substr(1, path.find('?') == std::string::npos ? std::string::npos : path.find('?') - 1),
      '/');
  if (parts[0] == "resource_classes") {
    if (parts.size() == 1) {
      json list = json::array();
      for (const std::string& c : classes) list.push_back(json{{"name", c}});
      return Ok(200, json{{"resource_classes", list}});
    }
    if (!absl::StartsWith(parts[1], "CUSTOM_")) return Error(400, "placement.undefined_code");
    return HttpResponse{classes.insert(parts[1]).second ? 201 : 204, ""};
  }
  if (parts[0] == "traits") {
    if (parts.size() == 1) {
      json list = json::array();
      for (const std::string& t : traits) {
        if (absl::StartsWith(t, "CUSTOM_")) list.push_back(t);
      }
      return Ok(200, json{{"traits", list}});
    }
    if (!absl::StartsWith(parts[1], "CUSTOM_")) return Error(400, "placement.undefined_code");
    return HttpResponse{traits.insert(parts[1]).second ? 201 : 204, ""};
  }
  if (parts[0] != "resource_providers") return Error(404, "placement.undefined_code");
  if (parts.size() == 1 && m == "GET") {
    const std::string in_tree = path.substr(path.find("in_tree=") + 8);
    json list = json::array();
    if (providers.contains(in_tree)) {
      const std::string root = RootOf(in_tree);
      for (const auto& [uuid, rp] : providers) {
        if (RootOf(uuid) == root) list.push_back(json::parse(ProviderJson(uuid).body));
      }
    }
    return Ok(200, json{{"resource_providers", list}});
  }
  if (parts.size() == 1 && m == "POST") {
    const json& b = *request.body;
    const std::string uuid = b["uuid"];
    for (const auto& [u, rp] : providers) {
      if (rp.name == b["name"]) return Error(409, "placement.duplicate_name");
    }
    if (providers.contains(uuid)) return Error(409, "placement.duplicate_uuid");
    Rp rp;
    rp.name = b["name"];
    if (b["parent_provider_uuid"].is_string()) {
      if (!providers.contains(b["parent_provider_uuid"])) {
        return Error(400, "placement.undefined_code");
      }
      rp.parent = b["parent_provider_uuid"].get<std::string>();
    }
    providers[uuid] = rp;
    return ProviderJson(uuid);
  }
  const std::string uuid = parts[1];
  auto it = providers.find(uuid);
  if (it == providers.end()) return Error(404, "placement.undefined_code");
  Rp& rp = it->second;
  const std::string sub = parts.size() > 2 ? parts[2] : "";
  if (m == "GET") {
    if (sub.empty()) return ProviderJson(uuid);
    if (sub == "inventories") {
      return Ok(200, json{{"inventories", rp.inventories},
                          {"resource_provider_generation", rp.generation}});
    }
    if (sub == "traits") {
      return Ok(200, json{{"traits", rp.traits}, {"resource_provider_generation", rp.generation}});
    }
    if (sub == "usages") {
      return Ok(200, json{{"usages", rp.usages}, {"resource_provider_generation", rp.generation}});
    }
  }
  if (m == "DELETE") {
    for (const auto& [u, other] : providers) {
      if (other.parent == uuid)
        return Error(409, "placement.resource_provider.cannot_delete_parent");
    }
    for (const auto& [rc, used] : rp.usages) {
      if (used > 0) return Error(409, "placement.resource_provider.inuse");
    }
    providers.erase(it);
    return HttpResponse{204, ""};
  }
  if (m == "PUT" && sub.empty()) {
    rp.name = (*request.body)["name"];
    const json& parent = (*request.body)["parent_provider_uuid"];
    rp.parent =
        parent.is_string() ? std::optional<std::string>(parent.get<std::string>()) : std::nullopt;
    return ProviderJson(uuid);
  }
  if (m == "PUT" && (sub == "inventories" || sub == "traits")) {
    if (conflicts_to_inject > 0) {
      --conflicts_to_inject;
      ++rp.generation;
    }
    if ((*request.body)["resource_provider_generation"] != rp.generation) {
      return Error(409, "placement.concurrent_update");
    }
    if (sub == "inventories") {
      for (const auto& [rc, inv] : (*request.body)["inventories"].items()) {
        if (!classes.contains(rc)) return Error(400, "placement.undefined_code");
        if (inv["total"].get<int64_t>() < 1) return Error(400, "placement.undefined_code");
      }
      rp.inventories = (*request.body)["inventories"];
    } else {
      std::set<std::string> next;
      for (const json& t : (*request.body)["traits"]) {
        if (!traits.contains(t.get<std::string>())) return Error(400, "placement.undefined_code");
        next.insert(t.get<std::string>());
      }
      rp.traits = next;
    }
    ++rp.generation;
    return Ok(200, json{{"resource_provider_generation", rp.generation}});
  }
  return Error(405, "placement.undefined_code");
}

}  // namespace topologyd::placement::testing
