// What the daemon's `placement` block asks to publish: the Placement-only settings of the
// provider tree (shared with `topoctl placement --config`), this host's name as the default
// node name, the token file, and the whole SyncTarget of a configuration on a machine.
#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "lib/config/config.h"
#include "lib/placement/mapping.h"
#include "lib/placement/placement_syncer.h"
#include "lib/topology/topology.h"

namespace topologyd::placement {

// This host's name (gethostname), the node name when none is configured; "" when unknown.
std::string HostName();

// The PlacementOptions of a `placement` block (the loader has checked its values). An empty
// nodeName is this host's name.
[[nodiscard]] absl::StatusOr<PlacementOptions> PlacementOptionsFromConfig(
    const config::PlacementConfig& placement);

// The token in `path` without surrounding whitespace (a trailing newline is usual). The error
// names the key: "placement.tokenFile: cannot read ...".
[[nodiscard]] absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// The PEM files of placement.caFile, clientCertFile and clientKeyFile, read now (unset ones
// stay empty). The error names the key and the file: "placement.caFile: cannot read ...",
// "... holds no PEM block".
[[nodiscard]] absl::StatusOr<curl_easy::TlsOptions> ReadTlsFiles(
    const config::PlacementConfig& placement);

// The tree and endpoint of `config` (which must have `placement`) on `machine`: the node
// offer as NodeOfferFromConfig() builds it, the token and TLS files read afresh.
[[nodiscard]] absl::StatusOr<SyncTarget> SyncTargetFromConfig(const config::Config& config,
                                                              const topology::Topology& machine);

}  // namespace topologyd::placement
