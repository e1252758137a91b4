#include "lib/shim/admission_plan.h"

#include <algorithm>

#include "fmt/format.h"

namespace topologyd::shim {

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

bool NeedsPlacement(const pod::Pod& pod, std::string_view container) {
  if (pod::ComputeQos(pod) == pod::QosClass::kGuaranteed) return true;
  const pod::Container* c = pod::FindContainer(pod, container);
  if (c == nullptr) return false;
  auto extended = [](const pod::ResourceList& list) {
    return std::any_of(list.begin(), list.end(),
                       [](const auto& entry) { return pod::IsExtendedResourceName(entry.first); });
  };
  return extended(c->requests) || extended(c->limits);
}

absl::Status RefusalStatus(std::string_view reason, std::string_view message) {
  const std::string text = fmt::format("topologyd: {}: {}", reason, message);
  if (reason.starts_with("OutOf")) return absl::ResourceExhaustedError(text);
  return absl::FailedPreconditionError(text);
}

}  // namespace topologyd::shim
