#include "lib/rpc/pod_proto.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/pod/validate.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;

absl::Status FieldError(std::string_view path, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", path, message));
}

// `status` (a reason from lib/pod/validate.h) prefixed with the field path; OK stays OK.
absl::Status AtField(std::string_view path, const absl::Status& status) {
  return status.ok() ? status : FieldError(path, std::string(status.message()));
}

// Protobuf maps iterate in no particular order; sorting the keys makes the first error
// reported (and so every message) deterministic.
template <typename Map>
std::vector<std::string> SortedKeys(const Map& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& [key, value] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

absl::StatusOr<pod::ResourceList> ResourcesFromProto(
    const google::protobuf::Map<std::string, std::string>& in, std::string_view container,
    const std::string& path) {
  pod::ResourceList out;
  for (const std::string& name : SortedKeys(in)) {
    const std::string field = fmt::format("{}[{}]", path, QuoteForMessage(name));
    TOPOLOGYD_RETURN_IF_ERROR(AtField(field, pod::ValidateContainerResourceName(container, name)));
    auto q = pod::Quantity::Parse(in.at(name));
    if (!q.ok()) return FieldError(field, std::string(q.status().message()));
    if (absl::Status s = pod::ValidateResourceQuantity(name, *q); !s.ok()) {
      return FieldError(field, std::string(s.message()));
    }
    out.emplace(name, *q);
  }
  return out;
}

// The API server's request/limit rules that kubelet's managers rely on (as in
// lib/pod/pod_manifest.cc), checked before requests are defaulted from limits.
absl::Status ValidateRequestsAgainstLimits(const pod::Container& c, const std::string& path) {
  for (const auto& [name, limit] : c.limits) {
    auto request = c.requests.find(name);
    if (request == c.requests.end()) continue;
    const std::string field = fmt::format("{}.requests[{}]", path, QuoteForMessage(name));
    const bool must_equal = pod::IsHugePageResourceName(name) || pod::IsExtendedResourceName(name);
    if (must_equal && request->second != limit) {
      return FieldError(field,
                        fmt::format("must be equal to {} limit of {}", name, limit.ToString()));
    }
    if (limit < request->second) {
      return FieldError(field, fmt::format("must be less than or equal to {} limit of {}", name,
                                           limit.ToString()));
    }
  }
  for (const auto& [name, request] : c.requests) {
    const bool must_equal = pod::IsHugePageResourceName(name) || pod::IsExtendedResourceName(name);
    if (must_equal && !c.limits.contains(name)) {
      return FieldError(fmt::format("{}.requests[{}]", path, QuoteForMessage(name)),
                        "a limit equal to the request is required for this resource");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<pod::Container> ContainerFromProto(const v1::Container& in, const std::string& path,
                                                  bool init) {
  pod::Container c;
  TOPOLOGYD_RETURN_IF_ERROR(AtField(path + ".name", pod::ValidateContainerName(in.name())));
  c.name = in.name();
  const std::string& policy = in.restart_policy();
  if (!policy.empty() && policy != "Always" && policy != "Never" && policy != "OnFailure") {
    return FieldError(path + ".restart_policy",
                      fmt::format("unsupported value {}: expected Always, Never or OnFailure",
                                  QuoteForMessage(policy)));
  }
  c.restart_always = init && policy == "Always";
  TOPOLOGYD_ASSIGN_OR_RETURN(c.requests,
                             ResourcesFromProto(in.requests(), c.name, path + ".requests"));
  TOPOLOGYD_ASSIGN_OR_RETURN(c.limits, ResourcesFromProto(in.limits(), c.name, path + ".limits"));
  TOPOLOGYD_RETURN_IF_ERROR(ValidateRequestsAgainstLimits(c, path));
  return c;
}

absl::StatusOr<std::vector<pod::Container>> ContainersFromProto(
    const google::protobuf::RepeatedPtrField<v1::Container>& in, std::string_view key, bool init,
    std::set<std::string>& names) {
  std::vector<pod::Container> out;
  for (int i = 0; i < in.size(); ++i) {
    const std::string path = fmt::format("pod.{}[{}]", key, i);
    TOPOLOGYD_ASSIGN_OR_RETURN(pod::Container c, ContainerFromProto(in.Get(i), path, init));
    if (!names.insert(c.name).second) {
      return FieldError(path + ".name",
                        fmt::format("duplicate container name {}", QuoteForMessage(c.name)));
    }
    out.push_back(std::move(c));
  }
  return out;
}

void ContainerToProto(const pod::Container& in, bool init, v1::Container* out) {
  out->set_name(in.name);
  for (const auto& [name, q] : in.requests) (*out->mutable_requests())[name] = q.ToString();
  for (const auto& [name, q] : in.limits) (*out->mutable_limits())[name] = q.ToString();
  if (init && in.restart_always) out->set_restart_policy("Always");
}

}  // namespace

void PodToProto(const pod::Pod& in, v1::Pod* out) {
  out->Clear();
  out->set_uid(in.uid);
  out->set_namespace_(in.namespace_name);
  out->set_name(in.name);
  for (const auto& [key, value] : in.annotations) (*out->mutable_annotations())[key] = value;
  for (const pod::Container& c : in.init_containers) {
    ContainerToProto(c, /*init=*/true, out->add_init_containers());
  }
  for (const pod::Container& c : in.containers) {
    ContainerToProto(c, /*init=*/false, out->add_containers());
  }
}

absl::StatusOr<pod::Pod> PodFromProto(const v1::Pod& in, size_t max_containers) {
  pod::Pod out;
  // First, so an oversized pod costs no more than counting.
  TOPOLOGYD_RETURN_IF_ERROR(AtField(
      "pod.containers", pod::ValidateContainerCount(static_cast<size_t>(in.init_containers_size()) +
                                                        static_cast<size_t>(in.containers_size()),
                                                    max_containers)));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("pod.uid", pod::ValidatePodUid(in.uid())));
  out.uid = in.uid();
  TOPOLOGYD_RETURN_IF_ERROR(AtField("pod.name", pod::ValidatePodName(in.name())));
  out.name = in.name();
  out.namespace_name = in.namespace_().empty() ? "default" : in.namespace_();
  TOPOLOGYD_RETURN_IF_ERROR(AtField("pod.namespace", pod::ValidateNamespace(out.namespace_name)));
  for (const std::string& key : SortedKeys(in.annotations())) {
    TOPOLOGYD_RETURN_IF_ERROR(AtField(fmt::format("pod.annotations[{}]", QuoteForMessage(key)),
                                      pod::ValidateAnnotationKey(key)));
    out.annotations.emplace(key, in.annotations().at(key));
  }
  TOPOLOGYD_RETURN_IF_ERROR(
      AtField("pod.annotations", pod::ValidateAnnotationsSize(out.annotations)));
  std::set<std::string> names;
  TOPOLOGYD_ASSIGN_OR_RETURN(
      out.init_containers,
      ContainersFromProto(in.init_containers(), "init_containers", /*init=*/true, names));
  TOPOLOGYD_ASSIGN_OR_RETURN(
      out.containers, ContainersFromProto(in.containers(), "containers", /*init=*/false, names));
  if (out.containers.empty())
    return FieldError("pod.containers", "at least one container is required");
  pod::ApplyRequestDefaults(out);
  return out;
}

}  // namespace topologyd::rpc
