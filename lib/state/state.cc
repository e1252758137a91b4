#include "lib/state/state.h"

#include <set>
#include <utility>

#include "fmt/format.h"

namespace topologyd::state {

CpuSet ExclusiveCpus(const State& state) {
  CpuSet all;
  for (const auto& [uid, pod] : state.pods) {
    for (const ContainerRecord& c : pod.containers) {
      if (c.exclusive) all.AddAll(c.cpus);
    }
  }
  return all;
}

const ContainerRecord* FindContainer(const State& state, const std::string& uid,
                                     const std::string& container) {
  auto it = state.pods.find(uid);
  if (it == state.pods.end()) return nullptr;
  for (const ContainerRecord& c : it->second.containers) {
    if (c.name == container) return &c;
  }
  return nullptr;
}

std::map<int, std::map<std::string, uint64_t>> MemoryInUse(const State& state) {
  std::map<int, std::map<std::string, uint64_t>> total;
  for (const auto& [uid, pod] : state.pods) {
    for (const ContainerRecord& c : pod.containers) {
      for (const auto& [node, resources] : c.memory) {
        for (const auto& [resource, bytes] : resources) total[node][resource] += bytes;
      }
    }
  }
  return total;
}

namespace {

std::string Holder(const PodRecord& pod, const ContainerRecord& c) {
  return fmt::format("container \"{}\" of pod {}", c.name, pod.uid);
}

// Kubelet hands an init container's exclusive CPUs (and devices) on to the pod's later
// containers, and state imported from kubelet does not say which containers were init
// containers, so overlaps within one pod are not conflicts.
bool MayShare(const PodRecord& pod_a, const PodRecord& pod_b) { return pod_a.uid == pod_b.uid; }

}  // namespace

absl::Status Validate(const State& state) {
  struct Ref {
    const PodRecord* pod;
    const ContainerRecord* container;
  };
  std::vector<Ref> exclusive;
  std::map<std::pair<std::string, std::string>, Ref> device_holder;
  for (const auto& [uid, pod] : state.pods) {
    if (uid != pod.uid) {
      return absl::InvalidArgumentError(
          fmt::format("pod keyed \"{}\" has uid \"{}\"", uid, pod.uid));
    }
    std::set<std::string> names;
    for (const ContainerRecord& c : pod.containers) {
      if (!names.insert(c.name).second) {
        return absl::InvalidArgumentError(
            fmt::format("pod {} lists container \"{}\" twice", uid, c.name));
      }
      if (c.exclusive) {
        for (const Ref& other : exclusive) {
          if (!MayShare(*other.pod, pod) && other.container->cpus.Intersects(c.cpus)) {
            return absl::FailedPreconditionError(
                fmt::format("CPUs {} are held exclusively by both {} and {}",
                            other.container->cpus.Intersection(c.cpus).ToString(),
                            Holder(*other.pod, *other.container), Holder(pod, c)));
          }
        }
        exclusive.push_back({&pod, &c});
      }
      for (const auto& [resource, ids] : c.devices) {
        for (const std::string& id : ids) {
          auto [it, inserted] = device_holder.try_emplace({resource, id}, Ref{&pod, &c});
          if (!inserted && !MayShare(*it->second.pod, pod)) {
            return absl::FailedPreconditionError(
                fmt::format("device {} \"{}\" is held by both {} and {}", resource, id,
                            Holder(*it->second.pod, *it->second.container), Holder(pod, c)));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::state
