// A NodeResourceTopology object as the Kubernetes API reads it (JSON). Quantities are strings
// ("16"), as resource.Quantity serialises; `kubectl apply -f` takes the document as it is.
#pragma once

#include "nlohmann/json.hpp"

#include "lib/nrt/node_resource_topology.h"

namespace topologyd::nrt {

nlohmann::json ToJson(const NodeResourceTopology& nrt);

// The object as topologyd applies it to the API server: ToJson() owned by the Node of the same
// name (uid `node_uid`), so that the garbage collector removes it with the Node, as NFD's
// topology-updater does.
nlohmann::json ToApplyJson(const NodeResourceTopology& nrt, const std::string& node_uid);

}  // namespace topologyd::nrt
