#include "lib/placement/placement_target.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

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

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::FailedPreconditionError(
        fmt::format("placement.tokenFile: cannot read {}: {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const size_t first = token.find_first_not_of(" \t\r\n");
  const size_t last = token.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return absl::FailedPreconditionError(fmt::format("placement.tokenFile: {} is empty", path));
  }
  return token.substr(first, last - first + 1);
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
  SyncTarget target{.tree = *std::move(tree), .url = placement.endpoint, .token = ""};
  if (!placement.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(placement.token_file);
    if (!token.ok()) return token.status();
    target.token = *std::move(token);
  }
  return target;
}

}  // namespace topologyd::placement
