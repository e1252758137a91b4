// The offline machine of a command: `--input FILE.xml` (hwloc XML) or `--synthetic DESC` (an
// hwloc synthetic description), the same two flags on every command that takes one
// (docs/cli.md). `--topology`, the name some commands used for `--input`, still works, hidden.
#pragma once

#include <string>
#include <string_view>

#include "CLI/CLI.hpp"

#include "lib/topology/hwloc_source.h"

namespace topoctl {

struct MachineFlags {
  std::string input;
  std::string synthetic;

  bool given() const { return !input.empty() || !synthetic.empty(); }
  // The source given; only when given().
  topologyd::topology::TopologySource Source() const;
};

// Adds --input, --synthetic and the hidden --topology to `command`: mutually exclusive, none
// empty (CLI11 refuses both as bad usage). `of_what` ends their help ("of the node").
// Returns --input, for needs()/excludes() the caller adds.
CLI::Option* AddMachineFlags(CLI::App* command, MachineFlags* flags, std::string_view of_what);

}  // namespace topoctl
