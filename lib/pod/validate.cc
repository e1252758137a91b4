#include "lib/pod/validate.h"

#include <algorithm>

#include "fmt/format.h"

#include "lib/common/quote.h"
#include "lib/pod/names.h"

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
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (!IsQualifiedName(lower)) {
    return absl::InvalidArgumentError(
        "invalid annotation key: must be a qualified name ([prefix/]name)");
  }
  return absl::OkStatus();
}

absl::Status ValidateAnnotationsSize(const std::map<std::string, std::string>& annotations) {
  size_t total = 0;
  for (const auto& [key, value] : annotations) total += key.size() + value.size();
  if (total > kMaxAnnotationsBytes) {
    return absl::InvalidArgumentError(
        fmt::format("annotations total {} bytes (keys and values); the API server allows at "
                    "most {} (256 KiB)",
                    total, kMaxAnnotationsBytes));
  }
  return absl::OkStatus();
}

absl::Status ValidateContainerResourceName(std::string_view container, std::string_view name) {
  auto invalid = [&](std::string_view rule) {
    return absl::InvalidArgumentError(fmt::format("invalid resource name {} of container {}: {}",
                                                  QuoteForMessage(name), QuoteForMessage(container),
                                                  rule));
  };
  if (!IsQualifiedName(name)) return invalid("must be a qualified name ([prefix/]name)");
  if (name.find('/') == std::string_view::npos) {
    const bool standard = name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
                          name.starts_with("hugepages-");
    if (standard) return absl::OkStatus();
    return invalid(
        "must be a standard container resource (cpu, memory, ephemeral-storage, "
        "hugepages-<size>) or an extended resource <domain>/<name>");
  }
  // The API server's IsNativeResource: any name containing "kubernetes.io/" is native and
  // needs no further check.
  if (name.find("kubernetes.io/") != std::string_view::npos) return absl::OkStatus();
  if (!IsDevicePluginResourceName(name)) {
    return invalid(
        "not an extended resource name: it must not start with \"requests.\", and "
        "\"requests.<name>\" must be a qualified name too (a domain of at most 244 "
        "characters)");
  }
  return absl::OkStatus();
}

absl::Status ValidateContainerCount(size_t count, size_t max) {
  if (count > max) {
    return absl::InvalidArgumentError(
        fmt::format("{} containers (init and app); this node admits at most {} per pod "
                    "(limits.containersPerPod)",
                    count, max));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequestsAgainstLimits(const ResourceList& requests, const ResourceList& limits,
                                           std::string_view requests_path) {
  for (const auto& entry : requests) {
    // Named, not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const Quantity& request = entry.second;
    auto limit = limits.find(name);
    auto error = [&](std::string_view reason) {
      return absl::InvalidArgumentError(fmt::format("{}.{}: {}", requests_path, name, reason));
    };
    const bool must_equal = IsHugePageResourceName(name) || IsExtendedResourceName(name);
    if (limit == limits.end()) {
      if (must_equal) return error("a limit equal to the request is required for this resource");
      continue;
    }
    if (must_equal && limit->second != request) {
      return error(fmt::format("must be equal to {} limit of {}", name, limit->second.ToString()));
    }
    if (limit->second < request) {
      return error(fmt::format("must be less than or equal to {} limit of {}", name,
                               limit->second.ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::pod
