// MachineDescription <-> bytes, so that a forked child can load a topology file with hwloc and
// hand its description to the parent (hwloc_reader.cc): the parent then never runs hwloc on
// a file that might crash it, and does not load the file a second time.
//
// Both ends are the same binary, so the format is private and unversioned: fixed-width
// integers in host byte order, strings and CPU lists (Linux list syntax) length-prefixed.
// DecodeMachine() still checks every length and value, and refuses trailing bytes, so a short
// or damaged message is an error rather than a wrong machine.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/topology/topology_builder.h"

namespace topologyd::topology {

std::string EncodeMachine(const MachineDescription& machine);

// INTERNAL, naming what was cut short or invalid, when `bytes` is not an EncodeMachine() output.
absl::StatusOr<MachineDescription> DecodeMachine(std::string_view bytes);

// A load's result as the loader child sends it: the description, or the status (code and
// message) of a load that failed.
std::string EncodeLoadResult(const absl::StatusOr<MachineDescription>& result);

// The result EncodeLoadResult() encoded. INTERNAL "the process loading WHAT gave no result"
// when `bytes` hold neither (a child that died before it wrote, or was cut short), and
// "reading WHAT: ..." when a description is damaged.
absl::StatusOr<MachineDescription> DecodeLoadResult(std::string_view bytes, std::string_view what);

}  // namespace topologyd::topology
