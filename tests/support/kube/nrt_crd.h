// The NodeResourceTopology CustomResourceDefinition of the API's own release
// (noderesourcetopology-api, pinned in tests/e2e/nrt/go.mod; tools/nrt-crd.sh fetches it),
// applied to a test's API server.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

#include "tests/support/kube/control_plane.h"

namespace topologyd::testing::kube {

// The CRD file tools/nrt-crd.sh prints; UNAVAILABLE with its output when it fails (no Go, no
// module proxy): a missing component.
absl::StatusOr<std::string> NrtCrdPath();

// Creates the CRD from `crd_path` and returns once the API server serves it (Established).
absl::Status ApplyNrtCrd(const ControlPlane& control_plane, const std::string& crd_path);

// A YAML document as JSON, with YAML 1.2's core types for plain scalars (true/false, integers,
// null); quoted scalars stay strings.
nlohmann::json YamlToJson(const YAML::Node& node);

}  // namespace topologyd::testing::kube
