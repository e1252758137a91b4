// Pod: the parts of a Kubernetes Pod that topology admission reads — identity, annotations,
// init containers (including restartable "sidecar" init containers) and app containers with
// their resource requests and limits — plus kubelet's derived facts about them: the QoS class
// and the effective pod-level request per resource.
//
// Resource names are Kubernetes' (`cpu`, `memory`, `hugepages-2Mi`, `nvidia.com/gpu`, ...);
// values are exact Quantities (quantity.h). A Pod is a plain value built by the manifest parser
// (pod_manifest.h) or by hand in tests; nothing here does I/O.
//
// Requests defaulting: the API server sets a container's missing request to its limit
// (SetDefaults_Pod) before kubelet ever sees the pod. Pods built from raw manifests must go
// through ApplyRequestDefaults() so that QoS and request arithmetic match kubelet's; the
// manifest parser does it.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

#include "lib/pod/quantity.h"

namespace topologyd::pod {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kHugePagesPrefix = "hugepages-";

// Resource name -> quantity. Ordered, so iteration (and everything derived) is deterministic.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

struct Container {
  std::string name;
  // Only meaningful for init containers: restartPolicy "Always" makes it a sidecar, which
  // keeps running beside the app containers (KEP-753).
  bool restart_always = false;
  ResourceList requests;
  ResourceList limits;
  friend bool operator==(const Container&, const Container&) = default;
};

struct Pod {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> annotations;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  friend bool operator==(const Pod&, const Pod&) = default;
};

enum class QosClass { kGuaranteed, kBurstable, kBestEffort };

// "Guaranteed", "Burstable", "BestEffort" (kubelet's spelling).
std::string_view QosClassName(QosClass qos);

// `hugepages-<size>`.
bool IsHugePageResourceName(std::string_view name);
// cpu, memory, hugepages-*, ephemeral-storage, storage, and names in the kubernetes.io
// domain other than `requests.`-prefixed ones: what Kubernetes calls native resources.
bool IsNativeResourceName(std::string_view name);
// A fully-qualified name outside kubernetes.io that is not native (devices and other
// extended resources, e.g. `nvidia.com/gpu`, `intel.com/sriov_netdevice`).
bool IsExtendedResourceName(std::string_view name);

// The API server's checks of one request or limit value (ValidateResourceQuantityValue and the
// hugepages rule of ValidateResourceRequirements), shared by the manifest parser and the gRPC
// conversion: not negative; an extended resource a whole number (devices are not divisible);
// `hugepages-<size>` a multiple of its page size, which must be a valid positive integer
// quantity. INVALID_ARGUMENT with the reason only (e.g. "must be an integer (got 1500m)");
// callers prefix the field path.
absl::Status ValidateResourceQuantity(std::string_view name, const Quantity& value);

// For every container (init and app): a resource present in limits but not in requests gets
// the limit as its request, as the API server's defaulting does.
void ApplyRequestDefaults(Pod& pod);

// kubelet's QoS class (ComputePodQOS, without pod-level resources). Only `cpu` and `memory`
// count; zero quantities are ignored. Guaranteed iff every container (init and app) has
// non-zero cpu and memory limits and, summed over all containers, requests equal limits for
// each of the two; BestEffort iff no container has a non-zero cpu/memory request or limit.
QosClass ComputeQos(const Pod& pod);

// The init container named `name`, or the app container named `name` (init containers
// first, as kubelet looks them up); nullptr if none.
const Container* FindContainer(const Pod& pod, std::string_view name);
// True if `name` is an init container that is not restartable (its resources are freed when it
// exits, so app containers may reuse them).
bool IsRegularInitContainer(const Pod& pod, std::string_view name);
// True if `name` is an init container with restartPolicy Always.
bool IsSidecarContainer(const Pod& pod, std::string_view name);

// A container's role in kubelet's start order.
enum class ContainerRole {
  kInit,     // a regular init container: runs alone and exits before the next one starts
  kSidecar,  // an init container with restartPolicy Always: keeps running beside the rest
  kApp,
};

struct OrderedContainer {
  const Container* spec;
  ContainerRole role;
};

// kubelet's start order: init containers (sidecars included) in spec order, then app
// containers. Pointers into `pod`, which must outlive the result.
std::vector<OrderedContainer> StartOrder(const Pod& pod);

// Whether two containers of a pod can run at the same time, given the role of the one that
// starts first: only a regular init container has exited before the later one starts. So two
// app containers, a sidecar and any later container, can; a regular init container and any
// later container cannot (which is why the later one may reuse its CPUs and devices).
constexpr bool RunsAlongsideLater(ContainerRole earlier) { return earlier != ContainerRole::kInit; }

// The effective pod request per resource, as component-helpers' AggregateContainerRequests
// (pod overhead excluded):
//   max( sum(app containers) + sum(sidecars),
//        max over init containers i of (request_i + sum of sidecars declared before i),
//        max over sidecars j of (sum of sidecars up to and including j) )
// Every resource that any container names appears in the result.
ResourceList EffectivePodRequests(const Pod& pod);
// The same rule applied to limits (component-helpers' PodLimits): what the device manager
// uses as the pod's device count in pod scope.
ResourceList EffectivePodLimits(const Pod& pod);

}  // namespace topologyd::pod
