#include "lib/placement/tree_json.h"

#include "fmt/format.h"

namespace topologyd::placement {
namespace {

absl::StatusOr<int64_t> IntField(const nlohmann::json& record, const std::string& resource_class,
                                 const char* field) {
  auto it = record.find(field);
  if (it == record.end() || !it->is_number_integer()) {
    return absl::InvalidArgumentError(
        fmt::format("inventory of {}: field {} missing or not an integer", resource_class, field));
  }
  return it->get<int64_t>();
}

}  // namespace

nlohmann::json InventoryToJson(const Inventory& inventory) {
  return {{"total", inventory.total},         {"reserved", inventory.reserved},
          {"min_unit", inventory.min_unit},   {"max_unit", inventory.max_unit},
          {"step_size", inventory.step_size}, {"allocation_ratio", inventory.allocation_ratio}};
}

nlohmann::json InventoriesToJson(const std::map<std::string, Inventory>& inventories) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [resource_class, inventory] : inventories) {
    out[resource_class] = InventoryToJson(inventory);
  }
  return out;
}

absl::StatusOr<std::map<std::string, Inventory>> InventoriesFromJson(
    const nlohmann::json& inventories) {
  if (!inventories.is_object()) {
    return absl::InvalidArgumentError("inventories: not an object");
  }
  std::map<std::string, Inventory> out;
  for (const auto& [resource_class, record] : inventories.items()) {
    if (!record.is_object()) {
      return absl::InvalidArgumentError(
          fmt::format("inventory of {}: not an object", resource_class));
    }
    Inventory inv;
    int64_t* fields[] = {&inv.total, &inv.reserved, &inv.min_unit, &inv.max_unit, &inv.step_size};
    const char* names[] = {"total", "reserved", "min_unit", "max_unit", "step_size"};
    for (size_t i = 0; i < std::size(fields); ++i) {
      absl::StatusOr<int64_t> value = IntField(record, resource_class, names[i]);
      if (!value.ok()) return value.status();
      *fields[i] = *value;
    }
    auto ratio = record.find("allocation_ratio");
    if (ratio == record.end() || !ratio->is_number()) {
      return absl::InvalidArgumentError(fmt::format(
          "inventory of {}: field allocation_ratio missing or not a number", resource_class));
    }
    inv.allocation_ratio = ratio->get<double>();
    out[resource_class] = inv;
  }
  return out;
}

nlohmann::json TreeToJson(const ProviderTree& tree) {
  nlohmann::json providers = nlohmann::json::array();
  for (const Provider& p : tree.providers) {
    providers.push_back({{"name", p.name},
                         {"uuid", p.uuid},
                         {"parent_provider_uuid",
                          p.parent_uuid ? nlohmann::json(*p.parent_uuid) : nlohmann::json(nullptr)},
                         {"inventories", InventoriesToJson(p.inventories)},
                         {"traits", p.traits}});
  }
  return {{"root_provider_uuid", tree.providers.empty() ? "" : tree.root().uuid},
          {"custom_resource_classes", tree.custom_resource_classes},
          {"custom_traits", tree.custom_traits},
          {"resource_providers", std::move(providers)}};
}

std::string InventoryText(const std::string& resource_class, const Inventory& inventory) {
  return fmt::format("{} {} (reserved {}, unit {}-{} step {}, ratio {})", resource_class,
                     inventory.total, inventory.reserved, inventory.min_unit, inventory.max_unit,
                     inventory.step_size, inventory.allocation_ratio);
}

}  // namespace topologyd::placement
