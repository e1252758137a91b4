// What topologyd admits when a container runtime's front end (the CRI relay, the NRI plugin)
// is about to create a container. A runtime shows a pod one container at a time, with its
// sandbox's metadata, annotations and cgroup parent and each container's Linux resources; the
// pod's spec comes from the caller (an API server it asked), the topologyd.io/resources
// annotation, or an estimate from those resources, tried in the configured order.
//
// Pure functions apart from the annotation's parser; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/pod/pod.h"
#include "lib/podspec/cri_estimate.h"

namespace topologyd::planner {

// Where the planner may take a pod's spec from (besides the caller's own).
enum class SpecSource { kAnnotation, kEstimate };
// "annotation", "estimate"; nullopt for another word.
std::optional<SpecSource> ParseSpecSource(std::string_view word);
std::string_view ToString(SpecSource source);
inline const std::vector<SpecSource> kDefaultSpecSources = {SpecSource::kAnnotation,
                                                            SpecSource::kEstimate};

struct RuntimeContainer {
  std::string name;
  podspec::CriResources resources;
};

struct RuntimePod {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> annotations;
  std::string cgroup_parent;
  // Created so far, oldest first; the container being created may be among them.
  std::vector<RuntimeContainer> containers;
};

struct ResolvedSpec {
  pod::Pod pod;
  std::string source;                // "request", "annotation" or "estimate"
  std::vector<std::string> unknown;  // an estimate's gaps, for the log
};

// The pod's whole spec without estimating: `given` when set; else the annotation when it is
// listed in `sources` before the estimate and on the pod; else nullopt. INVALID_ARGUMENT for
// a resources annotation that is present but malformed (its author must fix it: guessing
// would place the pod differently from what it asks).
absl::StatusOr<std::optional<ResolvedSpec>> FullSpec(const RuntimePod& pod,
                                                     const std::optional<pod::Pod>& given,
                                                     const std::vector<SpecSource>& sources,
                                                     size_t max_containers);

// The pod's spec for creating `container`: FullSpec, else the estimate when listed. An
// estimate holds the pod's known containers and `container` (its resources replace an earlier
// instance's), each estimated under the QoS class of the cgroup parent. FAILED_PRECONDITION
// when no source has the spec, naming what to configure.
absl::StatusOr<ResolvedSpec> ResolveSpec(const RuntimePod& pod, const RuntimeContainer& container,
                                         const std::optional<pod::Pod>& given,
                                         const std::vector<SpecSource>& sources,
                                         size_t max_containers);

// The pod to send to admission before `container` is created.
//   `spec`: the whole pod, or the containers estimated so far (the newest one included).
//   `held`: the names of the pod's containers topologyd holds now; empty when it does not know
//     the pod.
// A pod topologyd does not know is admitted whole: kubelet decides all of a pod's containers
// together. A pod it knows is sent with the containers it holds plus `container`, in spec
// order: the held ones keep what they hold (admission is idempotent for them) and a container
// released since (an init container kubelet removed after it finished) is not allocated
// again. NOT_FOUND when `spec` has no container of that name.
absl::StatusOr<pod::Pod> PodToAdmit(const pod::Pod& spec, const std::set<std::string>& held,
                                    std::string_view container);

}  // namespace topologyd::planner
