// The inputs of `topoctl simulate` that come from files and flags: the workload's Pod
// manifests (files, YAML streams, directories) and the variants --compare asks for.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/config/config.h"
#include "lib/pod/pod.h"

namespace topoctl {

// The pods of `paths`, in order: a file holds one manifest or a YAML stream of them ("---"
// lines between documents; empty documents are skipped); a directory contributes its *.yaml,
// *.yml and *.json files (not its subdirectories) in name order. Each manifest is read by
// lib/pod's parser with `max_containers`. INVALID_ARGUMENT / NOT_FOUND naming the file (and
// the document, for streams); a path with no pod at all is an error too.
absl::StatusOr<std::vector<topologyd::pod::Pod>> LoadWorkload(const std::vector<std::string>& paths,
                                                              size_t max_containers);

// The manifests of one YAML stream's text, split at its "---" lines (what kubectl accepts).
std::vector<std::string> SplitYamlStream(const std::string& text);

struct SimulateVariant {
  std::string name;
  topologyd::config::Config config;
};

// The variants of `compare` over `base` (named `base_name`): each entry is one axis, KEY=V1,V2
// with KEY one of
//   policy  topologyManagerPolicy
//   scope   topologyManagerScope
//   option  a policy option NAME=VALUE (several for one variant joined by "+"; "-" for none):
//           prefer-closest-numa-nodes and max-allowable-numa-nodes go to
//           topologyManagerPolicyOptions, every other name to cpuManagerPolicyOptions
//   config  a whole configuration file instead of the base (applied before the other axes)
// and the variants are every combination of the axes' values, named by them ("policy=restricted
// scope=pod"). No axis: the base alone. INVALID_ARGUMENT for an unknown key, an empty value or
// an unreadable config file; the values themselves are checked when the node policy is built.
absl::StatusOr<std::vector<SimulateVariant>> BuildVariants(const topologyd::config::Config& base,
                                                           const std::string& base_name,
                                                           const std::vector<std::string>& compare);

}  // namespace topoctl
