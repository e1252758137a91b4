#include "lib/placement/sync.h"

#include <cstdio>
#include <map>
#include <set>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/placement/tree_json.h"

namespace topologyd::placement {
namespace {

using nlohmann::json;

constexpr char kConcurrentUpdate[] = "placement.concurrent_update";
constexpr char kProviderInUse[] = "placement.resource_provider.inuse";

// The parsed body of a 2xx answer to a read; UNAVAILABLE for an error status.
absl::StatusOr<json> Read(PlacementTransport& transport, const std::string& path,
                          const std::string& microversion) {
  absl::StatusOr<HttpResponse> r = transport.Send({"GET", path, std::nullopt}, microversion);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return absl::UnavailableError(
        fmt::format("GET {}: HTTP {}: {}", path, r->status, ErrorText(*r)));
  }
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return absl::InvalidArgumentError(fmt::format("GET {}: the answer is not a JSON object", path));
  }
  return body;
}

absl::StatusOr<int64_t> Generation(const json& body, const std::string& what) {
  auto it = body.find("resource_provider_generation");
  if (it == body.end()) it = body.find("generation");
  if (it == body.end() || !it->is_number_integer()) {
    return absl::InvalidArgumentError(what + ": no generation in the answer");
  }
  return it->get<int64_t>();
}

// Inventories, traits and generation of one provider; `p` has uuid, name and parent set.
absl::Status ReadProviderDetails(PlacementTransport& transport, const std::string& microversion,
                                 ObservedProvider* p) {
  const std::string base = "/resource_providers/" + p->uuid;
  absl::StatusOr<json> inv = Read(transport, base + "/inventories", microversion);
  if (!inv.ok()) return inv.status();
  absl::StatusOr<std::map<std::string, Inventory>> inventories =
      InventoriesFromJson(inv->value("inventories", json::object()));
  if (!inventories.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("GET {}/inventories: {}", base, std::string(inventories.status().message())));
  }
  p->inventories = *std::move(inventories);
  absl::StatusOr<json> traits = Read(transport, base + "/traits", microversion);
  if (!traits.ok()) return traits.status();
  if (!traits->contains("traits") || !(*traits)["traits"].is_array()) {
    return absl::InvalidArgumentError(fmt::format("GET {}/traits: no traits list", base));
  }
  p->traits.clear();
  for (const json& t : (*traits)["traits"]) {
    if (t.is_string()) p->traits.insert(t.get<std::string>());
  }
  // The later of the two reads: a write between them must still conflict.
  absl::StatusOr<int64_t> generation = Generation(*traits, "GET " + base + "/traits");
  if (!generation.ok()) return generation.status();
  p->generation = *generation;
  return absl::OkStatus();
}

absl::StatusOr<ObservedProvider> ProviderFromJson(const json& rp) {
  if (!rp.is_object() || !rp.contains("uuid") || !rp["uuid"].is_string() || !rp.contains("name") ||
      !rp["name"].is_string()) {
    return absl::InvalidArgumentError("a resource provider without uuid or name");
  }
  ObservedProvider p;
  p.uuid = rp["uuid"].get<std::string>();
  p.name = rp["name"].get<std::string>();
  auto parent = rp.find("parent_provider_uuid");
  if (parent != rp.end() && parent->is_string()) p.parent_uuid = parent->get<std::string>();
  absl::StatusOr<int64_t> generation = Generation(rp, "resource provider " + p.uuid);
  if (!generation.ok()) return generation.status();
  p.generation = *generation;
  return p;
}

// Re-reads one provider after a conflict; nullopt inside when it no longer exists.
absl::StatusOr<std::optional<ObservedProvider>> Reread(PlacementTransport& transport,
                                                       const std::string& microversion,
                                                       const std::string& uuid) {
  const std::string path = "/resource_providers/" + uuid;
  absl::StatusOr<HttpResponse> r = transport.Send({"GET", path, std::nullopt}, microversion);
  if (!r.ok()) return r.status();
  if (r->status == 404) return std::optional<ObservedProvider>();
  if (r->status != 200) {
    return absl::UnavailableError(
        fmt::format("GET {}: HTTP {}: {}", path, r->status, ErrorText(*r)));
  }
  json body = json::parse(r->body, nullptr, false);
  absl::StatusOr<ObservedProvider> p = ProviderFromJson(body);
  if (!p.ok()) return p.status();
  if (absl::Status s = ReadProviderDetails(transport, microversion, &*p); !s.ok()) return s;
  return std::optional<ObservedProvider>(*std::move(p));
}

// Runs a plan, tracking each provider's generation from the answers.
class Executor {
 public:
  Executor(PlacementTransport& transport, const ProviderTree& desired, const SyncOptions& options,
           const ObservedState& observed, SyncReport* report)
      : transport_(transport), desired_(desired), options_(options), report_(report) {
    for (const ObservedProvider& p : observed.providers) generation_[p.uuid] = p.generation;
  }

  void Run(const std::vector<PlannedCall>& calls) {
    for (const PlannedCall& call : calls) {
      if (call.parent_uuid && failed_.contains(*call.parent_uuid) &&
          call.kind == CallKind::kCreateProvider) {
        failed_.insert(call.target);
        report_->errors.push_back(
            fmt::format("{}: not created, its parent could not be", call.provider_name));
        continue;
      }
      if (failed_.contains(call.target) && call.kind != CallKind::kCreateProvider) continue;
      RunOne(call);
    }
  }

 private:
  void RunOne(const PlannedCall& call) {
    const bool versioned =
        call.kind == CallKind::kSetInventories || call.kind == CallKind::kSetTraits;
    PlannedCall current = call;
    for (int attempt = 0;; ++attempt) {
      const HttpRequest request = RequestFor(current, generation_[current.target]);
      absl::StatusOr<HttpResponse> r = transport_.Send(request, report_->microversion);
      if (!r.ok()) {
        Fail(current, std::string(r.status().message()));
        return;
      }
      if (r->status >= 200 && r->status < 300) {
        Succeeded(current, *r);
        return;
      }
      const std::string code = ErrorCode(*r);
      if (current.kind == CallKind::kDeleteProvider && r->status == 409 && code == kProviderInUse) {
        report_->kept.push_back(
            fmt::format("{} ({}): holds allocations", current.provider_name, current.target));
        return;
      }
      if (current.kind == CallKind::kDeleteProvider && r->status == 404) return;  // gone already
      if (!versioned || r->status != 409 || code != kConcurrentUpdate) {
        Fail(current, fmt::format("HTTP {}: {}", r->status, ErrorText(*r)));
        return;
      }
      ++report_->conflicts;
      if (attempt >= options_.max_conflict_retries) {
        Fail(current,
             fmt::format("still conflicting after {} retries: {}", attempt, ErrorText(*r)));
        return;
      }
      if (options_.wait_before_retry) options_.wait_before_retry(attempt + 1);
      absl::StatusOr<std::optional<ObservedProvider>> fresh =
          Reread(transport_, report_->microversion, current.target);
      if (!fresh.ok()) {
        Fail(current, "re-reading after a conflict: " + std::string(fresh.status().message()));
        return;
      }
      const Provider* want = desired_.FindByUuid(current.target);
      if (!fresh->has_value() || want == nullptr) {
        Fail(current, "the provider disappeared during the sync");
        return;
      }
      generation_[current.target] = (*fresh)->generation;
      // Re-plan from what is there now: the other writer may have done this write already.
      bool again = false;
      for (const PlannedCall& c : PlanProvider(&**fresh, *want)) {
        if (c.kind == current.kind) {
          current = c;
          again = true;
        }
      }
      if (!again) return;
    }
  }

  void Succeeded(const PlannedCall& call, const HttpResponse& r) {
    report_->done.push_back(DescribeCall(call));
    if (call.kind == CallKind::kDeleteProvider) ++report_->deleted;
    if (call.kind == CallKind::kCreateResourceClass || call.kind == CallKind::kCreateTrait ||
        call.kind == CallKind::kDeleteProvider) {
      return;
    }
    report_->written.insert(call.target);
    json body = json::parse(r.body, nullptr, false);
    if (body.is_object()) {
      absl::StatusOr<int64_t> generation = Generation(body, call.provider_name);
      if (generation.ok()) {
        generation_[call.target] = *generation;
        return;
      }
    }
    // Placement before 1.20 answered a creation with 201 and no body: a new provider is at 0.
    if (call.kind == CallKind::kCreateProvider) generation_[call.target] = 0;
  }

  void Fail(const PlannedCall& call, const std::string& why) {
    if (call.kind == CallKind::kCreateProvider) failed_.insert(call.target);
    report_->errors.push_back(DescribeCall(call) + ": " + why);
  }

  PlacementTransport& transport_;
  const ProviderTree& desired_;
  const SyncOptions& options_;
  SyncReport* report_;
  std::map<std::string, int64_t> generation_;
  std::set<std::string> failed_;
};

}  // namespace

std::string ErrorCode(const HttpResponse& response) {
  json body = json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains("errors") || !body["errors"].is_array() ||
      body["errors"].empty() || !body["errors"][0].is_object()) {
    return "";
  }
  return body["errors"][0].value("code", "");
}

std::string ErrorText(const HttpResponse& response) {
  json body = json::parse(response.body, nullptr, false);
  if (body.is_object() && body.contains("errors") && body["errors"].is_array() &&
      !body["errors"].empty() && body["errors"][0].is_object()) {
    const json& e = body["errors"][0];
    std::string detail = e.value("detail", e.value("title", ""));
    // Placement's details carry the WSGI status line and blank lines; one line is enough.
    for (char& c : detail) {
      if (c == '\n') c = ' ';
    }
    while (detail.find("  ") != std::string::npos) detail.erase(detail.find("  "), 1);
    return e.value("code", "") + ": " + detail;
  }
  std::string raw = response.body.substr(0, 200);
  for (char& c : raw) {
    if (c == '\n') c = ' ';
  }
  return raw;
}

absl::StatusOr<std::string> NegotiateMicroversion(const std::string& body) {
  json root = json::parse(body, nullptr, false);
  std::string max;
  if (root.is_object() && root.contains("versions") && root["versions"].is_array()) {
    for (const json& v : root["versions"]) {
      if (v.is_object() && v.contains("max_version") && v["max_version"].is_string()) {
        max = v["max_version"].get<std::string>();
      }
    }
  }
  int major = 0;
  int minor = 0;
  if (max.empty() || std::sscanf(max.c_str(), "%d.%d", &major, &minor) != 2) {
    return absl::InvalidArgumentError("GET /: no max_version in the version document");
  }
  if (major != 1 || minor < kMinimumMinorVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "Placement's newest microversion is {}; the NUMA tree needs 1.{} (Placement 2.0.0, "
        "Train) or later",
        max, kMinimumMinorVersion));
  }
  return minor >= 39 ? std::string(kNewestMicroversion) : fmt::format("1.{}", minor);
}

absl::StatusOr<ObservedState> ReadObservedState(PlacementTransport& transport,
                                                const ProviderTree& desired,
                                                const std::string& microversion) {
  ObservedState observed;
  absl::StatusOr<json> classes = Read(transport, "/resource_classes", microversion);
  if (!classes.ok()) return classes.status();
  for (const json& rc : classes->value("resource_classes", json::array())) {
    if (rc.is_object() && rc.contains("name") && rc["name"].is_string()) {
      observed.resource_classes.insert(rc["name"].get<std::string>());
    }
  }
  absl::StatusOr<json> traits = Read(transport, "/traits?name=startswith:CUSTOM_", microversion);
  if (!traits.ok()) return traits.status();
  for (const json& t : traits->value("traits", json::array())) {
    if (t.is_string()) observed.traits.insert(t.get<std::string>());
  }
  absl::StatusOr<json> tree =
      Read(transport, "/resource_providers?in_tree=" + desired.root().uuid, microversion);
  if (!tree.ok()) return tree.status();
  for (const json& rp : tree->value("resource_providers", json::array())) {
    absl::StatusOr<ObservedProvider> p = ProviderFromJson(rp);
    if (!p.ok())
      return absl::InvalidArgumentError("GET /resource_providers: " +
                                        std::string(p.status().message()));
    if (absl::Status s = ReadProviderDetails(transport, microversion, &*p); !s.ok()) return s;
    if (desired.FindByUuid(p->uuid) == nullptr) {
      const std::string path = "/resource_providers/" + p->uuid + "/usages";
      absl::StatusOr<json> usages = Read(transport, path, microversion);
      if (!usages.ok()) return usages.status();
      const json used_by_class = usages->value("usages", json::object());
      for (const auto& [rc, used] : used_by_class.items()) {
        if (used.is_number() && used.get<double>() > 0) p->has_allocations = true;
      }
    }
    observed.providers.push_back(*std::move(p));
  }
  return observed;
}

absl::StatusOr<SyncReport> SyncProviderTree(PlacementTransport& transport,
                                            const ProviderTree& desired,
                                            const SyncOptions& options) {
  if (desired.providers.empty()) return absl::InvalidArgumentError("an empty provider tree");
  absl::StatusOr<HttpResponse> root = transport.Send({"GET", "/", std::nullopt}, "");
  if (!root.ok()) return root.status();
  if (root->status != 200) {
    return absl::UnavailableError(
        fmt::format("GET /: HTTP {}: {}", root->status, ErrorText(*root)));
  }
  SyncReport report;
  absl::StatusOr<std::string> microversion = NegotiateMicroversion(root->body);
  if (!microversion.ok()) return microversion.status();
  report.microversion = *microversion;

  absl::StatusOr<ObservedState> observed =
      ReadObservedState(transport, desired, report.microversion);
  if (!observed.ok()) return observed.status();
  report.plan = PlanSync(*observed, desired);
  for (const std::string& k : report.plan.kept) report.kept.push_back(k + ": holds allocations");
  if (options.dry_run) return report;
  Executor(transport, desired, options, *observed, &report).Run(report.plan.calls);
  return report;
}

}  // namespace topologyd::placement
