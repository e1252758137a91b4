#include "lib/config/placement_config.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "fmt/format.h"

#include "lib/common/quote.h"
#include "lib/cpuset/cpuset.h"

namespace topologyd::config {
namespace {

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" in either case, as Placement accepts a uuid.
bool IsUuidText(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool hyphen = i == 8 || i == 13 || i == 18 || i == 23;
    if (hyphen ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return true;
}

bool IsHttpUrl(const std::string& url) {
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (url.starts_with(scheme) && url.size() > scheme.size()) return true;
  }
  return false;
}

void ReadRatio(MapReader& r, const std::string& key, double* out) {
  std::string text;
  if (!r.Scalar(key, &text)) return;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      !std::isfinite(value) || value <= 0) {
    r.problems()->Add(r.Get(key), r.KeyPath(key),
                      fmt::format("expected a positive number, got {}", QuoteForMessage(text)));
    return;
  }
  *out = value;
}

}  // namespace

void ReadPlacement(MapReader& r, const std::function<std::string(const std::string&)>& resolve,
                   PlacementConfig* out) {
  if (!r.Get("endpoint").IsDefined()) {
    r.problems()->Add(r.KeyNode("endpoint"), r.KeyPath("endpoint"),
                      "required (e.g. http://placement.example:8778); leave placement out to "
                      "publish nothing");
  }
  r.String("endpoint", &out->endpoint);
  if (!out->endpoint.empty() && !IsHttpUrl(out->endpoint)) {
    r.problems()->Add(
        r.Get("endpoint"), r.KeyPath("endpoint"),
        fmt::format("must be an http:// or https:// URL, got {}", QuoteForMessage(out->endpoint)));
  }
  r.Path("tokenFile", &out->token_file);
  out->token_file = resolve(out->token_file);
  const std::pair<const char*, std::string*> tls_files[] = {
      {"caFile", &out->ca_file},
      {"clientCertFile", &out->client_cert_file},
      {"clientKeyFile", &out->client_key_file}};
  for (const auto& [key, path] : tls_files) {
    r.Path(key, path);
    *path = resolve(*path);
    if (!path->empty() && !out->endpoint.empty() && !out->endpoint.starts_with("https://")) {
      r.problems()->Add(r.Get(key), r.KeyPath(key),
                        fmt::format("is for an https:// endpoint, and the endpoint is {}",
                                    QuoteForMessage(out->endpoint)));
    }
  }
  if (out->client_cert_file.empty() != out->client_key_file.empty()) {
    const char* given = out->client_cert_file.empty() ? "clientKeyFile" : "clientCertFile";
    r.problems()->Add(r.Get(given), r.KeyPath(given),
                      "clientCertFile and clientKeyFile go together");
  }

  r.String("nodeName", &out->node_name);
  if (out->node_name.size() > kMaxPlacementNodeName) {
    r.problems()->Add(
        r.Get("nodeName"), r.KeyPath("nodeName"),
        fmt::format("is {} characters; at most {}", out->node_name.size(), kMaxPlacementNodeName));
  }
  r.Duration("syncPeriod", &out->sync_period);
  if (out->sync_period < kMinPlacementSyncPeriod) {
    r.problems()->Add(r.Get("syncPeriod"), r.KeyPath("syncPeriod"),
                      fmt::format("must be at least {}s", kMinPlacementSyncPeriod.count()));
  }
  if (r.Scalar("sharedCPUs", &out->shared_cpus)) {
    if (absl::StatusOr<CpuSet> cpus = CpuSet::Parse(out->shared_cpus); !cpus.ok()) {
      r.problems()->Add(r.Get("sharedCPUs"), r.KeyPath("sharedCPUs"),
                        std::string(cpus.status().message()));
    }
  }
  ReadRatio(r, "vcpuAllocationRatio", &out->vcpu_allocation_ratio);
  if (r.Integer("basePageKiB", &out->base_page_kib) &&
      (out->base_page_kib < 4 || (out->base_page_kib & (out->base_page_kib - 1)) != 0)) {
    r.problems()->Add(r.Get("basePageKiB"), r.KeyPath("basePageKiB"),
                      fmt::format("must be a power of two of at least 4 (4, or 64 on POWER and "
                                  "64K-page ARM kernels), got {}",
                                  out->base_page_kib));
  }
  r.String("rootProviderUUID", &out->root_provider_uuid);
  if (!out->root_provider_uuid.empty() && !IsUuidText(out->root_provider_uuid)) {
    r.problems()->Add(r.Get("rootProviderUUID"), r.KeyPath("rootProviderUUID"),
                      fmt::format("{} is not a uuid (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
                                  QuoteForMessage(out->root_provider_uuid)));
  }
}

void PlanPlacementReload(const Config& old, const Config& next, ReloadPlan* plan) {
  if (old.placement.has_value() != next.placement.has_value()) {
    plan->refused.push_back("placement");
    return;
  }
  if (!old.placement || *old.placement == *next.placement) return;
  const PlacementConfig& was = *old.placement;
  const PlacementConfig& now = *next.placement;
  const auto live = [&](bool changed, const char* key) {
    if (changed) plan->applied.push_back(key);
  };
  live(was.endpoint != now.endpoint, "placement.endpoint");
  live(was.token_file != now.token_file, "placement.tokenFile");
  live(was.ca_file != now.ca_file, "placement.caFile");
  live(was.client_cert_file != now.client_cert_file, "placement.clientCertFile");
  live(was.client_key_file != now.client_key_file, "placement.clientKeyFile");
  live(was.node_name != now.node_name, "placement.nodeName");
  live(was.sync_period != now.sync_period, "placement.syncPeriod");
  live(was.shared_cpus != now.shared_cpus, "placement.sharedCPUs");
  live(was.vcpu_allocation_ratio != now.vcpu_allocation_ratio, "placement.vcpuAllocationRatio");
  live(was.base_page_kib != now.base_page_kib, "placement.basePageKiB");
  live(was.root_provider_uuid != now.root_provider_uuid, "placement.rootProviderUUID");
  plan->effective.placement = now;
}

}  // namespace topologyd::config
