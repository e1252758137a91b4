// A NodeResourceTopology object as the Kubernetes API reads it (JSON). Quantities are strings
// ("16"), as resource.Quantity serialises; `kubectl apply -f` takes the document as it is.
#pragma once

#include "nlohmann/json.hpp"

#include "lib/nrt/node_resource_topology.h"

namespace topologyd::nrt {

nlohmann::json ToJson(const NodeResourceTopology& nrt);

}  // namespace topologyd::nrt
