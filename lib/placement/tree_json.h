// ProviderTree as JSON: the document `topoctl placement tree -o json|yaml` prints, and the
// inventory records in the form Placement's REST API reads and writes them.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

#include "lib/placement/provider_tree.h"

namespace topologyd::placement {

// {"total":..,"reserved":..,"min_unit":..,"max_unit":..,"step_size":..,"allocation_ratio":..}
nlohmann::json InventoryToJson(const Inventory& inventory);
// {CLASS: record, ...}
nlohmann::json InventoriesToJson(const std::map<std::string, Inventory>& inventories);
// The inverse, for Placement's answers; INVALID_ARGUMENT naming the class and field when a
// record lacks one or has the wrong type.
[[nodiscard]] absl::StatusOr<std::map<std::string, Inventory>> InventoriesFromJson(
    const nlohmann::json& inventories);

// {"root_provider_uuid", "custom_resource_classes": [..], "custom_traits": [..],
//  "resource_providers": [{"name", "uuid", "parent_provider_uuid" (null for the root),
//  "inventories": {..}, "traits": [..]}, ...]} with providers in creation order.
nlohmann::json TreeToJson(const ProviderTree& tree);

// "PCPU 10 (reserved 2, unit 1-10 step 1, ratio 1)": one inventory record for people.
std::string InventoryText(const std::string& resource_class, const Inventory& inventory);

}  // namespace topologyd::placement
