#include "lib/podspec/resources_annotation.h"

#include <string>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/pod/pod_manifest.h"
#include "lib/pod/validate.h"

namespace topologyd::podspec {
namespace {

absl::Status AtField(std::string_view field, const absl::Status& status) {
  return status.ok() ? status
                     : absl::InvalidArgumentError(fmt::format("{}: {}", field, status.message()));
}

}  // namespace

absl::StatusOr<std::optional<pod::Pod>> PodFromResourcesAnnotation(
    std::string_view uid, std::string_view namespace_name, std::string_view name,
    const std::map<std::string, std::string>& annotations, size_t max_containers) {
  auto annotation = annotations.find(std::string(kResourcesAnnotation));
  if (annotation == annotations.end()) return std::nullopt;

  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.uid", pod::ValidatePodUid(uid)));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.namespace", pod::ValidateNamespace(namespace_name)));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.name", pod::ValidatePodName(name)));
  for (const auto& [key, value] : annotations) {
    TOPOLOGYD_RETURN_IF_ERROR(AtField(fmt::format("metadata.annotations[{}]", QuoteForMessage(key)),
                                      pod::ValidateAnnotationKey(key)));
  }
  TOPOLOGYD_RETURN_IF_ERROR(
      AtField("metadata.annotations", pod::ValidateAnnotationsSize(annotations)));
  pod::Pod identity;
  identity.uid = uid;
  identity.namespace_name = namespace_name;
  identity.name = name;
  identity.annotations = annotations;

  absl::StatusOr<pod::Pod> pod =
      pod::ParsePodSpec(annotation->second, std::move(identity), max_containers);
  if (!pod.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("annotation {}: {}", kResourcesAnnotation, pod.status().message()));
  }
  return *std::move(pod);
}

}  // namespace topologyd::podspec
