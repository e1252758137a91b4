#include "lib/ledger/bindings.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "fmt/format.h"

#include "lib/cgroup/naming.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/pod/names.h"

namespace topologyd::ledger {

bool NestedPaths(std::string_view a, std::string_view b) {
  return a == b || cgroup::IsCgroupAncestor(a, b) || cgroup::IsCgroupAncestor(b, a);
}

absl::Status ValidateBindings(const state::State& state) {
  // Every binding seen so far: cgroup path or container id -> "pod U container C".
  std::map<std::string, std::string> cgroups;
  std::map<std::string, std::string> ids;
  for (const auto& [uid, pod] : state.pods) {
    if (!pod::IsApiPodUid(uid)) {
      return absl::FailedPreconditionError(
          fmt::format("pod uid {} is not 1 to 64 of [A-Za-z0-9-]", QuoteForMessage(uid)));
    }
    for (const state::ContainerRecord& c : pod.containers) {
      const std::string who = fmt::format("pod {} container {}", uid, EscapeForMessage(c.name));
      if (!c.container_id.empty()) {
        if (absl::Status s = cgroup::ValidateContainerId(c.container_id); !s.ok()) {
          return absl::FailedPreconditionError(fmt::format("{}: {}", who, s.message()));
        }
        if (auto [it, fresh] = ids.emplace(c.container_id, who); !fresh) {
          return absl::FailedPreconditionError(fmt::format(
              "{} and {} are bound to the same container id {}", it->second, who, c.container_id));
        }
      }
      if (c.cgroup.empty()) continue;
      if (absl::Status s = cgroup::ValidateRelativeCgroupPath(c.cgroup); !s.ok()) {
        return absl::FailedPreconditionError(fmt::format("{}: cgroup: {}", who, s.message()));
      }
      if (auto [it, fresh] = cgroups.emplace(c.cgroup, who); !fresh) {
        return absl::FailedPreconditionError(
            fmt::format("{} and {} are bound to the same cgroup {}", it->second, who, c.cgroup));
      }
    }
  }
  // Nested: some proper ancestor of a bound path is bound too (depth x log n per path).
  for (const auto& [path, who] : cgroups) {
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      if (auto above = cgroups.find(path.substr(0, slash)); above != cgroups.end()) {
        return absl::FailedPreconditionError(
            fmt::format("{} is bound to cgroup {}, inside the cgroup {} of {}", who, path,
                        above->first, above->second));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateBindingRequest(std::string_view container_id, std::string_view cgroup) {
  if (absl::Status s = cgroup::ValidateContainerId(container_id); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("container_id: {}", s.message()));
  }
  if (!cgroup.empty()) {
    if (absl::Status s = cgroup::ValidateRelativeCgroupPath(cgroup); !s.ok()) {
      return absl::InvalidArgumentError(fmt::format("cgroup: {}", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFreeBinding(const state::State& state, std::string_view uid,
                              std::string_view container, std::string_view container_id,
                              std::string_view cgroup) {
  for (const auto& [other_uid, other_pod] : state.pods) {
    for (const state::ContainerRecord& other : other_pod.containers) {
      if (other_uid == uid && other.name == container) continue;
      // A cgroup above or below another container's would have this container's cpuset
      // written over (or under) that container's.
      if (!other.cgroup.empty() && NestedPaths(other.cgroup, cgroup)) {
        return absl::InvalidArgumentError(
            fmt::format("cgroup: {} is {} pod {} container {}", cgroup,
                        other.cgroup == cgroup ? "already bound to" : "nested with the cgroup of",
                        other_uid, other.name));
      }
      if (other.container_id == container_id) {
        return absl::InvalidArgumentError(
            fmt::format("container_id: {} is already bound to pod {} container {}", container_id,
                        other_uid, other.name));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::ledger
