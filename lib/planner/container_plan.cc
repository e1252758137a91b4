#include "lib/planner/container_plan.h"

#include <algorithm>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/podspec/resources_annotation.h"

namespace topologyd::planner {
namespace {

// The containers seen so far plus `container`, one entry per name (the newest resources), in
// the order each name was first seen.
std::vector<RuntimeContainer> KnownWith(const RuntimePod& pod, const RuntimeContainer& container) {
  std::vector<RuntimeContainer> known;
  auto put = [&](const RuntimeContainer& c) {
    auto same = std::find_if(known.begin(), known.end(),
                             [&](const RuntimeContainer& k) { return k.name == c.name; });
    if (same == known.end()) {
      known.push_back(c);
    } else {
      *same = c;
    }
  };
  for (const RuntimeContainer& c : pod.containers) put(c);
  put(container);
  return known;
}

absl::StatusOr<ResolvedSpec> Estimated(const RuntimePod& pod, const RuntimeContainer& container,
                                       size_t max_containers) {
  const std::optional<pod::QosClass> qos = podspec::QosFromCgroupParent(pod.cgroup_parent);
  if (!qos) {
    return absl::FailedPreconditionError(fmt::format(
        "pod {}/{} has no spec source and its cgroup parent {} does not name a QoS class "
        "(kubelet's cgroupsPerQOS is off?); give it the {} annotation or enable the apiServer "
        "source",
        pod.namespace_name, pod.name, QuoteForMessage(pod.cgroup_parent),
        podspec::kResourcesAnnotation));
  }
  ResolvedSpec spec;
  spec.source = "estimate";
  spec.pod.uid = pod.uid;
  spec.pod.namespace_name = pod.namespace_name;
  spec.pod.name = pod.name;
  spec.pod.annotations = pod.annotations;
  for (const RuntimeContainer& c : KnownWith(pod, container)) {
    podspec::Estimate estimate = podspec::EstimateContainer(c.name, c.resources, *qos);
    if (c.name == container.name) spec.unknown = std::move(estimate.unknown);
    spec.pod.containers.push_back(std::move(estimate.container));
  }
  if (spec.pod.containers.size() > max_containers) {
    return absl::InvalidArgumentError(
        fmt::format("pod {}/{}: {} containers, more than the {} allowed", pod.namespace_name,
                    pod.name, spec.pod.containers.size(), max_containers));
  }
  return spec;
}

}  // namespace

std::optional<SpecSource> ParseSpecSource(std::string_view word) {
  if (word == "annotation") return SpecSource::kAnnotation;
  if (word == "estimate") return SpecSource::kEstimate;
  return std::nullopt;
}

std::string_view ToString(SpecSource source) {
  return source == SpecSource::kAnnotation ? "annotation" : "estimate";
}

absl::StatusOr<std::optional<ResolvedSpec>> FullSpec(const RuntimePod& pod,
                                                     const std::optional<pod::Pod>& given,
                                                     const std::vector<SpecSource>& sources,
                                                     size_t max_containers) {
  if (given) return ResolvedSpec{*given, "request", {}};
  for (SpecSource source : sources) {
    if (source == SpecSource::kEstimate) break;
    absl::StatusOr<std::optional<pod::Pod>> annotated = podspec::PodFromResourcesAnnotation(
        pod.uid, pod.namespace_name, pod.name, pod.annotations, max_containers);
    if (!annotated.ok()) {
      // The parser's message names the annotation (or the metadata field) already.
      return absl::InvalidArgumentError(
          fmt::format("pod {}/{}: {}", pod.namespace_name, pod.name, annotated.status().message()));
    }
    if (*annotated) return ResolvedSpec{std::move(**annotated), "annotation", {}};
  }
  return std::nullopt;
}

absl::StatusOr<ResolvedSpec> ResolveSpec(const RuntimePod& pod, const RuntimeContainer& container,
                                         const std::optional<pod::Pod>& given,
                                         const std::vector<SpecSource>& sources,
                                         size_t max_containers) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::optional<ResolvedSpec> full,
                             FullSpec(pod, given, sources, max_containers));
  if (full) return std::move(*full);
  if (std::find(sources.begin(), sources.end(), SpecSource::kEstimate) != sources.end()) {
    return Estimated(pod, container, max_containers);
  }
  std::vector<std::string_view> tried;
  for (SpecSource source : sources) tried.push_back(ToString(source));
  return absl::FailedPreconditionError(
      fmt::format("pod {}/{} (uid {}) has no spec from the configured sources ({}); give it the {} "
                  "annotation, or add the estimate source",
                  pod.namespace_name, pod.name, pod.uid,
                  tried.empty() ? std::string("none") : fmt::format("{}", fmt::join(tried, ", ")),
                  podspec::kResourcesAnnotation));
}

absl::StatusOr<pod::Pod> PodToAdmit(const pod::Pod& spec, const std::set<std::string>& held,
                                    std::string_view container) {
  if (pod::FindContainer(spec, container) == nullptr) {
    return absl::NotFoundError(fmt::format("pod {}/{} (uid {}) has no container \"{}\" in its spec",
                                           spec.namespace_name, spec.name, spec.uid, container));
  }
  if (held.empty()) return spec;
  pod::Pod request = spec;
  auto keep = [&](const pod::Container& c) { return c.name == container || held.contains(c.name); };
  std::erase_if(request.init_containers, [&](const pod::Container& c) { return !keep(c); });
  std::erase_if(request.containers, [&](const pod::Container& c) { return !keep(c); });
  return request;
}

}  // namespace topologyd::planner
