#include "lib/pod/validate.h"

#include "lib/common/quote.h"
#include "lib/pod/names.h"

#include "fmt/format.h"

namespace topologyd::pod {
namespace {

constexpr std::string_view kDnsLabelRule =
    "must be a DNS label ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters)";

absl::Status Required() { return absl::InvalidArgumentError("required"); }

absl::Status Invalid(std::string_view what, std::string_view value, std::string_view rule) {
  return absl::InvalidArgumentError(
      fmt::format("invalid {} {}: {}", what, QuoteForMessage(value), rule));
}

}  // namespace

absl::Status ValidatePodUid(std::string_view uid) {
  if (uid.empty()) return Required();
  if (!IsApiPodUid(uid)) return Invalid("uid", uid, "expected 1 to 64 of [A-Za-z0-9-]");
  return absl::OkStatus();
}

absl::Status ValidatePodName(std::string_view name) {
  if (name.empty()) return Required();
  if (!IsDnsSubdomain(name)) {
    return Invalid("pod name", name,
                   "must be a DNS subdomain (lower-case alphanumerics, '-' and '.', at most 253 "
                   "characters)");
  }
  return absl::OkStatus();
}

absl::Status ValidateNamespace(std::string_view namespace_name) {
  if (namespace_name.empty()) return Required();
  if (!IsDnsLabel(namespace_name)) return Invalid("namespace", namespace_name, kDnsLabelRule);
  return absl::OkStatus();
}

absl::Status ValidateContainerName(std::string_view name) {
  if (name.empty()) return Required();
  if (!IsDnsLabel(name)) return Invalid("container name", name, kDnsLabelRule);
  return absl::OkStatus();
}

absl::Status ValidateAnnotationKey(std::string_view key) {
  if (!IsQualifiedName(key)) {
    return absl::InvalidArgumentError(
        "invalid annotation key: must be a qualified name ([prefix/]name)");
  }
  return absl::OkStatus();
}

absl::Status ValidateResourceName(std::string_view name) {
  if (!IsQualifiedName(name)) {
    return absl::InvalidArgumentError(
        "invalid resource name: must be a qualified name ([prefix/]name)");
  }
  return absl::OkStatus();
}

}  // namespace topologyd::pod
