#include "lib/placement/sync_plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "fmt/format.h"

#include "lib/placement/tree_json.h"

namespace topologyd::placement {
namespace {

bool SameInventory(const Inventory& a, const Inventory& b) {
  return a.total == b.total && a.reserved == b.reserved && a.min_unit == b.min_unit &&
         a.max_unit == b.max_unit && a.step_size == b.step_size &&
         std::fabs(a.allocation_ratio - b.allocation_ratio) < 1e-6;
}

std::string Join(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "-" : out;
}

// "PCPU total 10 -> 12, VCPU removed": what moves between two inventory sets.
std::string InventoryDiff(const std::map<std::string, Inventory>& from,
                          const std::map<std::string, Inventory>& to) {
  std::vector<std::string> parts;
  for (const auto& [rc, inv] : to) {
    auto it = from.find(rc);
    if (it == from.end()) {
      parts.push_back(InventoryText(rc, inv) + " added");
    } else if (!SameInventory(it->second, inv)) {
      parts.push_back(InventoryText(rc, it->second) + " -> " + InventoryText(rc, inv));
    }
  }
  for (const auto& [rc, inv] : from) {
    if (!to.contains(rc)) parts.push_back(rc + " removed");
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// Depth of `uuid` in the observed tree (root 0), for deleting deepest first.
int Depth(const ObservedState& observed, const std::string& uuid) {
  int depth = 0;
  const ObservedProvider* p = observed.Find(uuid);
  while (p != nullptr && p->parent_uuid.has_value() && depth <= 64) {
    ++depth;
    p = observed.Find(*p->parent_uuid);
  }
  return depth;
}

}  // namespace

const ObservedProvider* ObservedState::Find(const std::string& uuid) const {
  for (const ObservedProvider& p : providers) {
    if (p.uuid == uuid) return &p;
  }
  return nullptr;
}

bool SameInventories(const std::map<std::string, Inventory>& a,
                     const std::map<std::string, Inventory>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [rc, inv] : a) {
    auto it = b.find(rc);
    if (it == b.end() || !SameInventory(inv, it->second)) return false;
  }
  return true;
}

std::vector<PlannedCall> PlanProvider(const ObservedProvider* current, const Provider& desired) {
  std::vector<PlannedCall> calls;
  const auto call = [&desired](CallKind kind, std::string why) {
    return PlannedCall{.kind = kind,
                       .target = desired.uuid,
                       .provider_name = desired.name,
                       .parent_uuid = desired.parent_uuid,
                       .inventories = {},
                       .traits = {},
                       .why = std::move(why)};
  };
  static const std::map<std::string, Inventory> kNoInventories;
  static const std::set<std::string> kNoTraits;
  if (current == nullptr) {
    calls.push_back(call(CallKind::kCreateProvider, "missing"));
  } else if (current->name != desired.name || current->parent_uuid != desired.parent_uuid) {
    calls.push_back(call(CallKind::kUpdateProvider,
                         fmt::format("name {} parent {} -> name {} parent {}", current->name,
                                     current->parent_uuid.value_or("none"), desired.name,
                                     desired.parent_uuid.value_or("none"))));
  }
  const auto& inventories = current ? current->inventories : kNoInventories;
  if (!SameInventories(inventories, desired.inventories)) {
    PlannedCall c =
        call(CallKind::kSetInventories, InventoryDiff(inventories, desired.inventories));
    c.inventories = desired.inventories;
    calls.push_back(std::move(c));
  }
  const auto& traits = current ? current->traits : kNoTraits;
  if (traits != desired.traits) {
    PlannedCall c = call(CallKind::kSetTraits, Join(traits) + " -> " + Join(desired.traits));
    c.traits = desired.traits;
    calls.push_back(std::move(c));
  }
  return calls;
}

SyncPlan PlanSync(const ObservedState& observed, const ProviderTree& desired) {
  SyncPlan plan;
  for (const std::string& rc : desired.custom_resource_classes) {
    if (!observed.resource_classes.contains(rc)) {
      plan.calls.push_back(
          {.kind = CallKind::kCreateResourceClass, .target = rc, .why = "missing"});
    }
  }
  for (const std::string& trait : desired.custom_traits) {
    if (!observed.traits.contains(trait)) {
      plan.calls.push_back({.kind = CallKind::kCreateTrait, .target = trait, .why = "missing"});
    }
  }
  for (const Provider& p : desired.providers) {
    std::vector<PlannedCall> calls = PlanProvider(observed.Find(p.uuid), p);
    plan.calls.insert(plan.calls.end(), calls.begin(), calls.end());
  }

  // Unwanted providers: one with allocations stays, and so do its ancestors (Placement will
  // not delete a parent); the rest go, deepest first.
  std::set<std::string> kept;
  for (const ObservedProvider& p : observed.providers) {
    if (desired.FindByUuid(p.uuid) != nullptr || !p.has_allocations) continue;
    for (const ObservedProvider* q = &p; q != nullptr && desired.FindByUuid(q->uuid) == nullptr;
         q = q->parent_uuid ? observed.Find(*q->parent_uuid) : nullptr) {
      if (!kept.insert(q->uuid).second) break;
    }
  }
  std::vector<const ObservedProvider*> doomed;
  for (const ObservedProvider& p : observed.providers) {
    if (desired.FindByUuid(p.uuid) != nullptr) continue;
    if (kept.contains(p.uuid)) {
      plan.kept.push_back(fmt::format("{} ({})", p.name, p.uuid));
    } else {
      doomed.push_back(&p);
    }
  }
  std::stable_sort(doomed.begin(), doomed.end(),
                   [&observed](const ObservedProvider* a, const ObservedProvider* b) {
                     return Depth(observed, a->uuid) > Depth(observed, b->uuid);
                   });
  for (const ObservedProvider* p : doomed) {
    plan.calls.push_back({.kind = CallKind::kDeleteProvider,
                          .target = p->uuid,
                          .provider_name = p->name,
                          .why = "no longer wanted"});
  }
  return plan;
}

HttpRequest RequestFor(const PlannedCall& call, int64_t generation) {
  const std::string rp = "/resource_providers/" + call.target;
  const nlohmann::json parent =
      call.parent_uuid ? nlohmann::json(*call.parent_uuid) : nlohmann::json(nullptr);
  switch (call.kind) {
    case CallKind::kCreateResourceClass:
      return {"PUT", "/resource_classes/" + call.target, std::nullopt};
    case CallKind::kCreateTrait:
      return {"PUT", "/traits/" + call.target, std::nullopt};
    case CallKind::kCreateProvider:
      return {"POST", "/resource_providers",
              nlohmann::json{{"name", call.provider_name},
                             {"uuid", call.target},
                             {"parent_provider_uuid", parent}}};
    case CallKind::kUpdateProvider:
      return {"PUT", rp,
              nlohmann::json{{"name", call.provider_name}, {"parent_provider_uuid", parent}}};
    case CallKind::kSetInventories:
      return {"PUT", rp + "/inventories",
              nlohmann::json{{"resource_provider_generation", generation},
                             {"inventories", InventoriesToJson(call.inventories)}}};
    case CallKind::kSetTraits:
      return {
          "PUT", rp + "/traits",
          nlohmann::json{{"resource_provider_generation", generation}, {"traits", call.traits}}};
    case CallKind::kDeleteProvider:
      return {"DELETE", rp, std::nullopt};
  }
  return {};
}

std::string DescribeCall(const PlannedCall& call) {
  const HttpRequest request = RequestFor(call, 0);
  std::string text = request.method + " " + request.path;
  if (!call.provider_name.empty()) text += "  " + call.provider_name;
  if (!call.why.empty()) text += ": " + call.why;
  return text;
}

}  // namespace topologyd::placement
