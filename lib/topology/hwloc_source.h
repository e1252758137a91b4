// LoadTopology(): discovers a machine with hwloc and returns the Topology model.
//
// Three sources, as in the daemon config's `topology:` key:
//   - kLive: this machine. Every online CPU is included, also those outside the calling
//     process's cpuset (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), because the daemon places
//     other processes than itself. hwloc's usual environment (HWLOC_FSROOT, HWLOC_XMLFILE,
//     ...) still applies, which is how tests point it at a fake sysfs; an XML file or
//     synthetic description named there gets the checks of the kinds below.
//   - kXml: an hwloc XML export (`lstopo --of xml`, v1 or v2 format), read from `path`.
//   - kSynthetic: an hwloc synthetic description in `description`, e.g.
//     "pack:2 numa:2 core:4 pu:2". One hwloc would take long to build is refused first
//     (synthetic_precheck.h).
// PCI devices that hwloc deems important (GPUs, NICs, storage, accelerators) are kept; on the
// live machine, SR-IOV virtual functions also get their physical function from sysfs
// (sriov_sysfs.h), which hwloc does not report.
//
// Errors are returned, never fatal: NOT_FOUND for a missing XML file, INVALID_ARGUMENT for
// an XML or synthetic description hwloc refuses (hwloc may also print its own parse
// diagnostics on stderr), DEADLINE_EXCEEDED for an XML file hwloc did not finish reading in
// time (hwloc_reader.h), INTERNAL when hwloc itself fails. Each message names the source.
//
// Thread-safety: LoadTopology() may be called concurrently; each call owns its hwloc
// topology and destroys it before returning.
#pragma once

#include <string>
#include <utility>

#include "absl/status/statusor.h"

#include "lib/topology/topology.h"

namespace topologyd::topology {

struct TopologySource {
  enum class Kind { kLive, kXml, kSynthetic };
  Kind kind = Kind::kLive;
  std::string path;         // kXml: the XML file
  std::string description;  // kSynthetic: the synthetic description

  static TopologySource Live() { return TopologySource{}; }
  static TopologySource Xml(std::string xml_path) {
    return TopologySource{.kind = Kind::kXml, .path = std::move(xml_path)};
  }
  static TopologySource Synthetic(std::string synthetic) {
    return TopologySource{.kind = Kind::kSynthetic, .description = std::move(synthetic)};
  }
};

// "the live machine", "hwloc XML file PATH" or "hwloc synthetic topology \"DESC\"": the
// phrase error messages use for `source` (PATH with control bytes escaped, DESC quoted and cut
// after 256 bytes).
std::string DescribeSource(const TopologySource& source);

// Loads `source` with hwloc and builds the model (see topology.h for the id rules).
absl::StatusOr<Topology> LoadTopology(const TopologySource& source);

}  // namespace topologyd::topology
