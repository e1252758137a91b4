// Config: the typed form of topologyd's YAML configuration (docs/configuration.md lists
// every key). Keys that exist in kubelet's KubeletConfiguration keep kubelet's names and
// value syntax so operators can copy them.
//
// A Config is a plain value: the loader (config_loader.h) builds it from YAML and rejects
// unknown keys, wrong types and bad values with a message naming the key, file and line.
// Semantic checks that need the policy modules (option names and compatibility, quantities,
// what the machine has) happen when the node policy is built from it (node_policy_config.h:
// ParseNodeSpec, BuildNodePolicy), also for `--check-config`. The engine holds the current
// value as `std::shared_ptr<const Config>`; a reload replaces it (config_diff.h says which
// keys are live).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/cgroup/types.h"

namespace topologyd::config {

struct SocketConfig {
  uint32_t mode = 0660;        // permission bits of the listening socket
  std::string group = "root";  // group owning the socket; "" = the daemon's own (no chown)
  // Connections one peer uid may hold open at once; more are refused (RESOURCE_EXHAUSTED).
  uint32_t max_connections_per_uid = 128;
  friend bool operator==(const SocketConfig&, const SocketConfig&) = default;
};

struct AllowedPeers {
  std::vector<uint32_t> uids = {0};  // peers (SO_PEERCRED) allowed to call the API
  std::vector<uint32_t> gids;
  bool same_user = false;  // also allow peers running as the daemon's own uid (dev setups)
  friend bool operator==(const AllowedPeers&, const AllowedPeers&) = default;
};

struct TopologySourceConfig {
  enum class Kind { kLive, kXml, kSynthetic };
  Kind source = Kind::kLive;
  std::string path;         // kXml: hwloc XML export
  std::string description;  // kSynthetic: hwloc synthetic string, e.g. "pack:2 numa:2 core:4 pu:2"
  friend bool operator==(const TopologySourceConfig&, const TopologySourceConfig&) = default;
};

struct ReservedMemoryConfig {
  int numa_node = 0;
  std::map<std::string, std::string> limits;  // resource -> Kubernetes quantity text
  friend bool operator==(const ReservedMemoryConfig&, const ReservedMemoryConfig&) = default;
};

struct DevicePciMatch {
  std::optional<uint16_t> vendor;
  std::optional<uint16_t> device;
  std::optional<uint16_t> class_id;
  bool virtual_functions = false;  // match SR-IOV virtual functions instead of physical ones
  friend bool operator==(const DevicePciMatch&, const DevicePciMatch&) = default;
};

struct ExplicitDeviceConfig {
  std::string id;
  std::vector<int> numa_nodes;  // OS ids; empty = no locality
  friend bool operator==(const ExplicitDeviceConfig&, const ExplicitDeviceConfig&) = default;
};

struct DevicePoolConfig {
  std::string resource_name;
  std::optional<DevicePciMatch> pci;
  std::vector<ExplicitDeviceConfig> devices;
  friend bool operator==(const DevicePoolConfig&, const DevicePoolConfig&) = default;
};

struct CgroupConfig {
  std::string root = "/sys/fs/cgroup";
  // Parsed at load so that deriving a container's cgroup (on every Allocate) parses nothing.
  cgroup::CgroupDriver driver = cgroup::CgroupDriver::kSystemd;
  // The container runtime, whose naming a derived container cgroup follows.
  cgroup::Runtime runtime = cgroup::Runtime::kContainerd;
  std::string version = "auto";  // auto | v1 | v2
  bool apply = true;             // false: dry run, log the writes only
  std::chrono::milliseconds release_grace{std::chrono::minutes(5)};
  friend bool operator==(const CgroupConfig&, const CgroupConfig&) = default;
};

// Bounds on what one request may ask of the daemon (docs/api.md, "Validation and limits").
struct LimitsConfig {
  // Init and app containers of one pod; admission work grows with the count. Live.
  uint32_t containers_per_pod = 256;
  // gRPC's receive limit, bytes of one request; set when the server starts. Restart.
  uint32_t request_bytes = 1024 * 1024;
  friend bool operator==(const LimitsConfig&, const LimitsConfig&) = default;
};

struct LogConfig {
  std::string level = "info";   // trace | debug | info | warn | error | critical | off
  std::string format = "text";  // text | json
  friend bool operator==(const LogConfig&, const LogConfig&) = default;
};

// podResources: the kubelet's PodResources v1 API on a socket of its own (docs/api.md,
// "PodResources"; lib/config/pod_resources_config.h reads it).
struct PodResourcesConfig {
  std::string listen;                         // unix://PATH
  std::optional<SocketConfig> socket;         // unset: the top-level `socket`
  std::optional<AllowedPeers> allowed_peers;  // unset: the top-level `allowedPeers`
  std::string SocketPath() const {
    return listen.rfind("unix://", 0) == 0 ? listen.substr(7) : listen;
  }
  friend bool operator==(const PodResourcesConfig&, const PodResourcesConfig&) = default;
};

// `kubeconfig` naming the in-cluster service account instead of a file.
inline constexpr std::string_view kInCluster = "in-cluster";

// `nrt.apiServer`: the object published to the Kubernetes API server (docs/cluster.md).
// Restart-only.
struct NrtApiServerConfig {
  std::string kubeconfig;  // absolute path, or kInCluster
  std::chrono::milliseconds resync_period{std::chrono::minutes(1)};
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};  // per request
  friend bool operator==(const NrtApiServerConfig&, const NrtApiServerConfig&) = default;
};

// `nrt`: the node's NodeResourceTopology object kept current in a file for a node-local
// publisher (docs/operations.md, "Publishing NodeResourceTopology") and in the API server.
// Each is off until configured.
struct NrtConfig {
  std::string file;       // absolute path, rewritten atomically; restart-only
  std::string node_name;  // the object's name; empty = this host's name, lowercased (live)
  std::optional<NrtApiServerConfig> api_server;
  friend bool operator==(const NrtConfig&, const NrtConfig&) = default;
};

// The Prometheus endpoint (docs/configuration.md, `metrics`). Restart-only.
struct MetricsConfig {
  // "HOST:PORT" (HOST an IPv4 address) serving /metrics over HTTP; empty = no endpoint.
  std::string listen;
  friend bool operator==(const MetricsConfig&, const MetricsConfig&) = default;
};

// `placement`: the node's provider tree kept in an OpenStack Placement service
// (docs/placement.md, "The daemon's sync"; lib/config/placement_config.h reads it). Every key is
// live: the next sync uses it; adding or removing the block takes a restart.
struct PlacementConfig {
  std::string endpoint;    // http:// or https:// base URL
  std::string token_file;  // holds the X-Auth-Token, re-read at every sync; empty = no token
  // TLS towards an https:// endpoint, PEM files re-read at every sync. Empty: the system's CAs,
  // no client certificate.
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
  std::string node_name;  // the root provider's name; empty = this host's name
  std::chrono::milliseconds sync_period{std::chrono::minutes(5)};
  std::string shared_cpus;  // CPU list reported as VCPU; empty = none
  double vcpu_allocation_ratio = 1.0;
  uint64_t base_page_kib = 4;
  std::string root_provider_uuid;  // empty = derived from the node name
  friend bool operator==(const PlacementConfig&, const PlacementConfig&) = default;
};

// Where a file sets its keys: a note on the text, not part of the configuration's value, so
// two configurations that differ only in layout compare equal.
struct KeyLines {
  std::map<std::string, int> lines;
  friend bool operator==(const KeyLines&, const KeyLines&) { return true; }
};

struct Config {
  std::string listen = "unix:///run/topologyd/topologyd.sock";
  SocketConfig socket;
  AllowedPeers allowed_peers;
  std::string state_dir = "/var/lib/topologyd";
  TopologySourceConfig topology;

  std::string cpu_manager_policy = "none";  // none | static
  std::map<std::string, std::string> cpu_manager_policy_options;
  // kubelet's featureGates that topologyd honours, with kubelet v1.34's defaults: the maturity
  // gates of the CPU Manager's policy options (alpha off, beta on), and whether a container
  // with exclusive CPUs runs without a CFS quota (Beta, on).
  struct FeatureGates {
    bool cpu_manager_policy_alpha_options = false;
    bool cpu_manager_policy_beta_options = true;
    bool disable_cpu_quota_with_exclusive_cpus = true;
    friend bool operator==(const FeatureGates&, const FeatureGates&) = default;
  } feature_gates;
  std::optional<std::string> reserved_system_cpus;  // CPU list
  std::optional<int> cpu_reserved_count;

  std::string topology_manager_policy =
      "none";  // none | best-effort | restricted | single-numa-node
  std::string topology_manager_scope = "container";  // container | pod
  std::map<std::string, std::string> topology_manager_policy_options;

  std::string memory_manager_policy = "None";  // None | Static
  std::vector<ReservedMemoryConfig> reserved_memory;
  // kubelet's Node Allocatable settings, resource (or eviction signal) -> quantity text. Used
  // only to check `reserved_memory` against them as kubelet does; unset = not checked.
  std::optional<std::map<std::string, std::string>> kube_reserved;
  std::optional<std::map<std::string, std::string>> system_reserved;
  std::optional<std::map<std::string, std::string>> eviction_hard;

  bool pod_policy_override = false;
  std::vector<DevicePoolConfig> devices;
  CgroupConfig cgroup;
  std::chrono::milliseconds reconcile_period{std::chrono::seconds(10)};
  LimitsConfig limits;
  LogConfig log;
  std::optional<PodResourcesConfig> pod_resources;  // unset: not served
  NrtConfig nrt;
  MetricsConfig metrics;
  std::optional<PlacementConfig> placement;  // unset: nothing published

  // Where this value was loaded from, for messages and `topoctl status`.
  std::string source_file;
  // The line of every key in source_file, by its path ("cgroup.root", "devices[1].pci"), so
  // that an error found later (on the machine: config::LocateKeyErrors) names its line too.
  KeyLines key_lines;

  // The socket path of `listen` (which is always unix://...).
  std::string SocketPath() const;

  friend bool operator==(const Config&, const Config&) = default;
};

}  // namespace topologyd::config
