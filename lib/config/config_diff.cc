#include "lib/config/config_diff.h"

#include <algorithm>

#include "lib/config/placement_config.h"
#include "lib/config/pod_resources_config.h"

namespace topologyd::config {
namespace {

template <typename T>
void Live(const T& old_value, const T& new_value, T* effective, const char* key, ReloadPlan* plan) {
  if (old_value == new_value) return;
  *effective = new_value;
  plan->applied.push_back(key);
}

template <typename T>
void RestartOnly(const T& old_value, const T& new_value, const char* key, ReloadPlan* plan) {
  if (!(old_value == new_value)) plan->refused.push_back(key);
}

}  // namespace

ReloadPlan PlanReload(const Config& old, const Config& next) {
  ReloadPlan plan;
  plan.effective = old;
  Config& e = plan.effective;
  e.source_file = next.source_file;

  Live(old.log.level, next.log.level, &e.log.level, "log.level", &plan);
  Live(old.log.format, next.log.format, &e.log.format, "log.format", &plan);
  Live(old.reconcile_period, next.reconcile_period, &e.reconcile_period, "reconcilePeriod", &plan);
  Live(old.allowed_peers, next.allowed_peers, &e.allowed_peers, "allowedPeers", &plan);
  Live(old.pod_policy_override, next.pod_policy_override, &e.pod_policy_override,
       "podPolicyOverride", &plan);
  Live(old.limits.containers_per_pod, next.limits.containers_per_pod, &e.limits.containers_per_pod,
       "limits.containersPerPod", &plan);
  Live(old.cgroup.release_grace, next.cgroup.release_grace, &e.cgroup.release_grace,
       "cgroup.releaseGracePeriod", &plan);

  // Devices: live only when every old pool is still there unchanged (new ones appended).
  bool old_pools_kept = std::all_of(old.devices.begin(), old.devices.end(), [&](const auto& pool) {
    return std::find(next.devices.begin(), next.devices.end(), pool) != next.devices.end();
  });
  if (old.devices != next.devices) {
    if (old_pools_kept) {
      e.devices = next.devices;
      plan.applied.push_back("devices");
    } else {
      plan.refused.push_back("devices");
    }
  }

  // The NRT file's writer starts with the daemon; the name it writes is read at every write.
  Live(old.nrt.node_name, next.nrt.node_name, &e.nrt.node_name, "nrt.nodeName", &plan);
  RestartOnly(old.nrt.file, next.nrt.file, "nrt.file", &plan);
  RestartOnly(old.nrt.api_server, next.nrt.api_server, "nrt.apiServer", &plan);
  RestartOnly(old.listen, next.listen, "listen", &plan);
  Live(old.socket.max_connections_per_uid, next.socket.max_connections_per_uid,
       &e.socket.max_connections_per_uid, "socket.maxConnectionsPerUid", &plan);
  SocketConfig next_socket = next.socket;  // the rest of `socket` binds the listener
  next_socket.max_connections_per_uid = old.socket.max_connections_per_uid;
  RestartOnly(old.socket, next_socket, "socket", &plan);
  RestartOnly(old.state_dir, next.state_dir, "stateDir", &plan);
  RestartOnly(old.topology, next.topology, "topology", &plan);
  RestartOnly(old.cpu_manager_policy, next.cpu_manager_policy, "cpuManagerPolicy", &plan);
  RestartOnly(old.cpu_manager_policy_options, next.cpu_manager_policy_options,
              "cpuManagerPolicyOptions", &plan);
  RestartOnly(old.feature_gates, next.feature_gates, "featureGates", &plan);
  RestartOnly(old.reserved_system_cpus, next.reserved_system_cpus, "reservedSystemCPUs", &plan);
  RestartOnly(old.cpu_reserved_count, next.cpu_reserved_count, "cpuReservedCount", &plan);
  RestartOnly(old.topology_manager_policy, next.topology_manager_policy, "topologyManagerPolicy",
              &plan);
  RestartOnly(old.topology_manager_scope, next.topology_manager_scope, "topologyManagerScope",
              &plan);
  RestartOnly(old.topology_manager_policy_options, next.topology_manager_policy_options,
              "topologyManagerPolicyOptions", &plan);
  RestartOnly(old.memory_manager_policy, next.memory_manager_policy, "memoryManagerPolicy", &plan);
  RestartOnly(old.reserved_memory, next.reserved_memory, "reservedMemory", &plan);
  RestartOnly(old.kube_reserved, next.kube_reserved, "kubeReserved", &plan);
  RestartOnly(old.system_reserved, next.system_reserved, "systemReserved", &plan);
  RestartOnly(old.eviction_hard, next.eviction_hard, "evictionHard", &plan);
  RestartOnly(old.cgroup.root, next.cgroup.root, "cgroup.root", &plan);
  RestartOnly(old.cgroup.driver, next.cgroup.driver, "cgroup.driver", &plan);
  RestartOnly(old.cgroup.runtime, next.cgroup.runtime, "cgroup.runtime", &plan);
  RestartOnly(old.cgroup.version, next.cgroup.version, "cgroup.version", &plan);
  RestartOnly(old.cgroup.apply, next.cgroup.apply, "cgroup.apply", &plan);
  RestartOnly(old.limits.request_bytes, next.limits.request_bytes, "limits.requestBytes", &plan);
  PlanPodResourcesReload(old, next, &plan);
  RestartOnly(old.metrics, next.metrics, "metrics", &plan);
  PlanPlacementReload(old, next, &plan);
  return plan;
}

}  // namespace topologyd::config
