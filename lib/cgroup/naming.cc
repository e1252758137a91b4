#include "lib/cgroup/naming.h"

#include <algorithm>
#include <vector>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::cgroup {
namespace {

constexpr size_t kMaxContainerIdLength = 200;

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsIdChar(char c) { return IsAsciiAlnum(c) || c == '.' || c == ':' || c == '-'; }

// Components additionally allow '_' (systemd-escaped pod uids) and '@' (systemd template
// instances such as user@1000.service), which appear in real cgroup paths.
bool IsComponentChar(char c) { return IsIdChar(c) || c == '_' || c == '@'; }

absl::Status ValidateComponent(std::string_view component, std::string_view whole) {
  if (component.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("cgroup path {} has an empty component", QuoteForMessage(whole)));
  }
  if (component == "." || component == "..") {
    return absl::InvalidArgumentError(
        fmt::format("cgroup path {} has a {} component", QuoteForMessage(whole), component));
  }
  if (component.size() > kMaxComponentLength) {
    return absl::InvalidArgumentError(
        fmt::format("cgroup path {} has a component longer than {} bytes", QuoteForMessage(whole),
                    kMaxComponentLength));
  }
  for (char c : component) {
    if (!IsComponentChar(c)) {
      return absl::InvalidArgumentError(fmt::format(
          "cgroup path {} contains a byte outside [A-Za-z0-9._:@-]", QuoteForMessage(whole)));
    }
  }
  return absl::OkStatus();
}

std::string SystemdEscapedUid(std::string_view uid) {
  std::string out(uid);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::string_view QosName(QosClass qos) {
  return qos == QosClass::kBurstable ? "burstable" : "besteffort";
}

}  // namespace

absl::Status ValidateContainerId(std::string_view id) {
  if (id.empty() || id.size() > kMaxContainerIdLength) {
    return absl::InvalidArgumentError(fmt::format("container id {} must have 1 to {} characters",
                                                  QuoteForMessage(id), kMaxContainerIdLength));
  }
  if (id == "." || id == "..") {
    return absl::InvalidArgumentError(
        fmt::format("container id {} is not a name", QuoteForMessage(id)));
  }
  if (!std::all_of(id.begin(), id.end(), IsIdChar)) {
    return absl::InvalidArgumentError(fmt::format(
        "container id {} contains a byte outside [A-Za-z0-9._:-]", QuoteForMessage(id)));
  }
  return absl::OkStatus();
}

absl::Status ValidatePodUid(std::string_view uid) {
  bool ok = false;
  if (uid.size() == 36) {
    ok = true;
    for (size_t i = 0; i < uid.size(); ++i) {
      const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
      ok = ok && (dash_position ? uid[i] == '-' : IsHex(uid[i]));
    }
  } else if (uid.size() == 32) {
    ok = std::all_of(uid.begin(), uid.end(), IsHex);
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        fmt::format("pod uid {} is neither a UUID nor 32 hex digits", QuoteForMessage(uid)));
  }
  return absl::OkStatus();
}

absl::Status ValidateRelativeCgroupPath(std::string_view path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("cgroup path is empty (the hierarchy root is never written)");
  }
  if (path.size() > kMaxCgroupPathLength) {
    return absl::InvalidArgumentError(
        fmt::format("cgroup path is longer than {} bytes", kMaxCgroupPathLength));
  }
  if (path.front() == '/') {
    return absl::InvalidArgumentError(
        fmt::format("cgroup path {} is absolute; it must be relative to the cgroup root",
                    QuoteForMessage(path)));
  }
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string_view component = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (absl::Status s = ValidateComponent(component, path); !s.ok()) return s;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return absl::OkStatus();
}

absl::Status ValidateCgroupFileName(std::string_view name) {
  if (name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        fmt::format("cgroup file name {} contains '/'", QuoteForMessage(name)));
  }
  return ValidateComponent(name, name);
}

absl::StatusOr<std::string> PodCgroupPath(CgroupDriver driver, QosClass qos,
                                          std::string_view pod_uid) {
  if (absl::Status s = ValidatePodUid(pod_uid); !s.ok()) return s;
  if (driver == CgroupDriver::kCgroupfs) {
    if (qos == QosClass::kGuaranteed) return fmt::format("kubepods/pod{}", pod_uid);
    return fmt::format("kubepods/{}/pod{}", QosName(qos), pod_uid);
  }
  // systemd expands a slice name "a-b-c.slice" into the nested path
  // a.slice/a-b.slice/a-b-c.slice, which is why the uid's dashes must be escaped.
  const std::string uid = SystemdEscapedUid(pod_uid);
  if (qos == QosClass::kGuaranteed) {
    return fmt::format("kubepods.slice/kubepods-pod{}.slice", uid);
  }
  const std::string_view q = QosName(qos);
  return fmt::format("kubepods.slice/kubepods-{0}.slice/kubepods-{0}-pod{1}.slice", q, uid);
}

absl::StatusOr<std::string> ContainerCgroupPath(CgroupDriver driver, QosClass qos,
                                                std::string_view pod_uid,
                                                std::string_view container_id, Runtime runtime) {
  if (absl::Status s = ValidateContainerId(container_id); !s.ok()) return s;
  absl::StatusOr<std::string> pod = PodCgroupPath(driver, qos, pod_uid);
  if (!pod.ok()) return pod.status();
  std::string leaf;
  if (driver == CgroupDriver::kCgroupfs) {
    leaf = runtime == Runtime::kCrio ? fmt::format("crio-{}", container_id)
                                     : std::string(container_id);
  } else {
    leaf = runtime == Runtime::kCrio ? fmt::format("crio-{}.scope", container_id)
                                     : fmt::format("cri-containerd-{}.scope", container_id);
  }
  std::string path = fmt::format("{}/{}", *pod, leaf);
  // Re-validate the assembled path: cheap, and it keeps the guarantee local to this function.
  if (absl::Status s = ValidateRelativeCgroupPath(path); !s.ok()) return s;
  return path;
}

std::vector<std::string> CgroupAncestors(std::string_view path) {
  std::vector<std::string> out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '/') out.emplace_back(path.substr(0, i));
  }
  return out;
}

bool IsCgroupAncestor(std::string_view ancestor, std::string_view path) {
  return path.size() > ancestor.size() && path.substr(0, ancestor.size()) == ancestor &&
         path[ancestor.size()] == '/';
}

int CgroupDepth(std::string_view path) {
  if (path.empty()) return 0;
  return 1 + static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

}  // namespace topologyd::cgroup
