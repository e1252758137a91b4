#include "lib/placement/placement_target.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <string_view>
#include <tuple>

#include "fmt/format.h"

#include "lib/placement/node_offer_config.h"

namespace topologyd::placement {

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

absl::StatusOr<PlacementOptions> PlacementOptionsFromConfig(
    const config::PlacementConfig& placement) {
  PlacementOptions options;
  options.node_name = placement.node_name.empty() ? HostName() : placement.node_name;
  if (!placement.root_provider_uuid.empty()) {
    options.root_provider_uuid = placement.root_provider_uuid;
  }
  if (!placement.shared_cpus.empty()) {
    absl::StatusOr<CpuSet> shared = CpuSet::Parse(placement.shared_cpus);
    if (!shared.ok()) {
      return absl::InvalidArgumentError("placement.sharedCPUs: " +
                                        std::string(shared.status().message()));
    }
    options.shared_cpus = *shared;
  }
  options.vcpu_allocation_ratio = placement.vcpu_allocation_ratio;
  options.base_page_kib = placement.base_page_kib;
  return options;
}

namespace {

// A token or PEM file is a few KiB; this only bounds a wrong path (a device, a log).
constexpr std::streamsize kMaxCredentialFileBytes = 1 << 20;

// The text of the file `path` that `key` (placement.tokenFile, ...) names; errors name both.
absl::StatusOr<std::string> ReadCredentialFile(std::string_view key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        fmt::format("{}: cannot read {}: {}", key, path, std::strerror(errno)));
  }
  std::string text(static_cast<size_t>(kMaxCredentialFileBytes) + 1, '\0');
  in.read(text.data(), kMaxCredentialFileBytes + 1);
  if (in.bad()) {
    return absl::FailedPreconditionError(fmt::format("{}: cannot read {}", key, path));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxCredentialFileBytes)) {
    return absl::FailedPreconditionError(
        fmt::format("{}: {} is larger than {} bytes", key, path, kMaxCredentialFileBytes));
  }
  return text;
}

absl::StatusOr<std::string> ReadPemFile(std::string_view key, const std::string& path) {
  absl::StatusOr<std::string> text = ReadCredentialFile(key, path);
  if (!text.ok()) return text.status();
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::FailedPreconditionError(
        fmt::format("{}: {} holds no PEM block (-----BEGIN ...)", key, path));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> token = ReadCredentialFile("placement.tokenFile", path);
  if (!token.ok()) return token.status();
  const size_t first = token->find_first_not_of(" \t\r\n");
  const size_t last = token->find_last_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return absl::FailedPreconditionError(fmt::format("placement.tokenFile: {} is empty", path));
  }
  return token->substr(first, last - first + 1);
}

absl::StatusOr<curl_easy::TlsOptions> ReadTlsFiles(const config::PlacementConfig& placement) {
  curl_easy::TlsOptions tls;
  const std::tuple<const char*, const std::string&, std::string*> files[] = {
      {"placement.caFile", placement.ca_file, &tls.ca_pem},
      {"placement.clientCertFile", placement.client_cert_file, &tls.client_certificate_pem},
      {"placement.clientKeyFile", placement.client_key_file, &tls.client_key_pem}};
  for (const auto& [key, path, pem] : files) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> text = ReadPemFile(key, path);
    if (!text.ok()) return text.status();
    *pem = *std::move(text);
  }
  return tls;
}

absl::StatusOr<SyncTarget> SyncTargetFromConfig(const config::Config& config,
                                                const topology::Topology& machine) {
  const config::PlacementConfig& placement = *config.placement;
  absl::StatusOr<PlacementOptions> options = PlacementOptionsFromConfig(placement);
  if (!options.ok()) return options.status();
  absl::StatusOr<NodeOffer> offer = NodeOfferFromConfig(config, machine);
  if (!offer.ok()) return offer.status();
  absl::StatusOr<ProviderTree> tree = BuildProviderTree(machine, *offer, *options);
  if (!tree.ok()) return tree.status();
  SyncTarget target{.tree = *std::move(tree), .url = placement.endpoint, .token = "", .tls = {}};
  if (!placement.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(placement.token_file);
    if (!token.ok()) return token.status();
    target.token = *std::move(token);
  }
  absl::StatusOr<curl_easy::TlsOptions> tls = ReadTlsFiles(placement);
  if (!tls.ok()) return tls.status();
  target.tls = *std::move(tls);
  return target;
}

}  // namespace topologyd::placement
