#include "lib/shim/admission_plan.h"

#include <algorithm>

#include "fmt/format.h"

namespace topologyd::shim {

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
