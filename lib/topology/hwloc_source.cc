#include "lib/topology/hwloc_source.h"

#include <cstdlib>

#include "fmt/format.h"

#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/topology/hwloc_reader.h"
#include "lib/topology/sriov_sysfs.h"
#include "lib/topology/synthetic_precheck.h"
#include "lib/topology/topology_builder.h"

namespace topologyd::topology {
namespace {

// Synthetic descriptions are short in practice; a longer one is cut in messages.
constexpr size_t kMaxShownSynthetic = 256;

}  // namespace

std::string DescribeSource(const TopologySource& source) {
  switch (source.kind) {
    case TopologySource::Kind::kLive:
      return "the live machine";
    case TopologySource::Kind::kXml:
      // A path is shown whole (the operator needs all of it), control bytes escaped.
      return fmt::format("hwloc XML file {}", EscapeForMessage(source.path));
    case TopologySource::Kind::kSynthetic:
      return fmt::format("hwloc synthetic topology {}",
                         QuoteForMessage(source.description, kMaxShownSynthetic));
  }
  return "an unknown topology source";
}

absl::StatusOr<Topology> LoadTopology(const TopologySource& source) {
  // hwloc builds whatever a synthetic description asks for before our checks can run. Such a
  // description may also come from hwloc's environment, which stands in for the live machine.
  if (source.kind == TopologySource::Kind::kSynthetic) {
    TOPOLOGYD_RETURN_IF_ERROR(
        PrecheckSyntheticDescription(source.description, DescribeSource(source)));
  }
  if (const char* synthetic = std::getenv("HWLOC_SYNTHETIC");
      source.kind == TopologySource::Kind::kLive && synthetic != nullptr && *synthetic != '\0') {
    TOPOLOGYD_RETURN_IF_ERROR(PrecheckSyntheticDescription(
        synthetic, fmt::format("{} (HWLOC_SYNTHETIC {})", DescribeSource(source),
                               QuoteForMessage(synthetic, kMaxShownSynthetic))));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(MachineDescription machine, ReadMachine(source));
  if (source.kind == TopologySource::Kind::kLive) {
    // hwloc does not tell virtual functions from other devices; sysfs does. Read it under
    // the root hwloc itself read (HWLOC_FSROOT), so a fake tree stays consistent.
    const char* fsroot = std::getenv("HWLOC_FSROOT");
    for (PciDescription& device : machine.pci_devices) {
      device.physfn_busid = SriovPhysicalFunction(fsroot ? fsroot : "", device.busid);
    }
  }
  absl::StatusOr<Topology> topology = BuildTopology(machine);
  if (!topology.ok()) {
    // Say which source was inconsistent; the builder only knows the objects.
    return absl::Status(
        topology.status().code(),
        fmt::format("{}: {}", DescribeSource(source), std::string(topology.status().message())));
  }
  return topology;
}

}  // namespace topologyd::topology
