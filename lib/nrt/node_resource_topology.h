// The node's NodeResourceTopology object (topology.node.k8s.io/v1alpha2), as NFD's
// topology-updater would publish it for a kubelet making topologyd's decisions: one zone per
// NUMA node (`node-<id>`, type `Node`), its `costs` from the NUMA distances, per zone
// `cpu`, `memory`, each `hugepages-<size>` and each device pool with capacity, allocatable
// and available; the topology manager's policy and scope and the pods fingerprint as
// attributes; the deprecated `topologyPolicies`. docs/operations.md, "Publishing
// NodeResourceTopology", states what each number means.
//
// BuildNodeResourceTopology is pure: the node policy and one snapshot of the records in, the
// object out. The daemon (its RPC and its NRT file) and `topoctl nrt` offline all call it.
//
// Thread-safety: plain values and a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/admission/node_policy.h"
#include "lib/state/state.h"

namespace topologyd::nrt {

inline constexpr std::string_view kApiVersion = "topology.node.k8s.io/v1alpha2";
inline constexpr std::string_view kKind = "NodeResourceTopology";
inline constexpr std::string_view kZoneTypeNode = "Node";

// Quantities are plain integers (CPUs, bytes, devices), as NFD writes them.
struct ResourceInfo {
  std::string name;
  int64_t capacity = 0;
  int64_t allocatable = 0;
  int64_t available = 0;
  friend bool operator==(const ResourceInfo&, const ResourceInfo&) = default;
};

struct CostInfo {
  std::string name;  // the other zone
  int64_t value = 0;
  friend bool operator==(const CostInfo&, const CostInfo&) = default;
};

struct AttributeInfo {
  std::string name;
  std::string value;
  friend bool operator==(const AttributeInfo&, const AttributeInfo&) = default;
};

struct Zone {
  std::string name;             // "node-<NUMA id>"
  std::string type;             // "Node"
  std::vector<CostInfo> costs;  // one per NUMA node, itself included; empty without distances
  std::vector<ResourceInfo> resources;
  friend bool operator==(const Zone&, const Zone&) = default;
};

struct NodeResourceTopology {
  std::string name;                            // the node's name: the object's metadata.name
  std::vector<std::string> topology_policies;  // deprecated, one entry as NFD writes it
  std::vector<AttributeInfo> attributes;
  std::vector<Zone> zones;  // ascending NUMA id
  friend bool operator==(const NodeResourceTopology&, const NodeResourceTopology&) = default;
};

// The object for node `node_name` under `policy`, with what `records` hold taken away.
NodeResourceTopology BuildNodeResourceTopology(const admission::NodePolicy& policy,
                                               const state::State& records,
                                               const std::string& node_name);

// NFD's deprecated `topologyPolicies` value for a policy and scope, e.g.
// "SingleNUMANodePodLevel"; "None" for policy none.
std::string DeprecatedTopologyPolicy(hints::Policy policy, admission::Scope scope);

}  // namespace topologyd::nrt
