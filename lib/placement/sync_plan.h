// The sync planner: what a Placement service holds for this node (ObservedState, as read) and
// the desired ProviderTree in, the ordered list of writes that makes the first equal to the
// second out. Pure; sync.h reads the state, runs the plan and re-plans one provider after a
// generation conflict.
//
// Order: missing custom resource classes and traits; then per desired provider, parents first,
// its creation (or re-parenting), inventories and traits, each written only when it differs;
// last the providers of the tree no longer wanted, deepest first. A converged node plans
// nothing, so a second sync changes no generation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

#include "lib/placement/provider_tree.h"

namespace topologyd::placement {

struct ObservedProvider {
  std::string uuid;
  std::string name;
  std::optional<std::string> parent_uuid;
  int64_t generation = 0;
  std::map<std::string, Inventory> inventories;
  std::set<std::string> traits;
  // Some usage above zero: read only for providers that are no longer wanted.
  bool has_allocations = false;
};

struct ObservedState {
  std::set<std::string> resource_classes;   // the custom ones that exist
  std::set<std::string> traits;             // the custom ones that exist
  std::vector<ObservedProvider> providers;  // the root's tree as listed (?in_tree=root)
  const ObservedProvider* Find(const std::string& uuid) const;
};

enum class CallKind {
  kCreateResourceClass,  // PUT /resource_classes/{name}
  kCreateTrait,          // PUT /traits/{name}
  kCreateProvider,       // POST /resource_providers
  kUpdateProvider,       // PUT /resource_providers/{uuid}: name and parent
  kSetInventories,       // PUT /resource_providers/{uuid}/inventories
  kSetTraits,            // PUT /resource_providers/{uuid}/traits
  kDeleteProvider,       // DELETE /resource_providers/{uuid}
};

struct PlannedCall {
  CallKind kind = CallKind::kCreateProvider;
  std::string target;                            // class or trait name, else the provider's uuid
  std::string provider_name;                     // for messages
  std::optional<std::string> parent_uuid;        // kCreateProvider, kUpdateProvider
  std::map<std::string, Inventory> inventories;  // kSetInventories: the whole desired set
  std::set<std::string> traits;                  // kSetTraits: the whole desired set
  std::string why;                               // what differs, for people
  friend bool operator==(const PlannedCall&, const PlannedCall&) = default;
};

struct SyncPlan {
  std::vector<PlannedCall> calls;
  // Providers no longer wanted that hold allocations (or have such a descendant), so stay.
  std::vector<std::string> kept;
};

SyncPlan PlanSync(const ObservedState& observed, const ProviderTree& desired);

// The writes that bring one provider (nullptr when it does not exist) to `desired`.
std::vector<PlannedCall> PlanProvider(const ObservedProvider* current, const Provider& desired);

// Inventories equal as Placement compares them (the ratio is a float there).
bool SameInventories(const std::map<std::string, Inventory>& a,
                     const std::map<std::string, Inventory>& b);

struct HttpRequest {
  std::string method;
  std::string path;
  std::optional<nlohmann::json> body;
  friend bool operator==(const HttpRequest&, const HttpRequest&) = default;
};

// The request of `call`, writing against `generation` (inventories and traits only).
HttpRequest RequestFor(const PlannedCall& call, int64_t generation);

// "PUT /resource_providers/UUID/inventories  H_NUMA0: PCPU total 10 -> 12".
std::string DescribeCall(const PlannedCall& call);

}  // namespace topologyd::placement
