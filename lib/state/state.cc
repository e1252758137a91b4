#include "lib/state/state.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

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

std::vector<int> MemoryNodes(const ContainerRecord& container) {
  std::vector<int> nodes;
  for (const auto& [node, resources] : container.memory) nodes.push_back(node);
  return nodes;
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

// A regular init container exits before the next container of its pod starts; every other
// container keeps running beside the pod's later ones.
bool RunsAlongsideLater(const ContainerRecord& c) { return !c.init || c.restartable; }

// A pod's containers in start order: init containers as recorded, then the others.
std::vector<const ContainerRecord*> StartOrder(const PodRecord& pod) {
  std::vector<const ContainerRecord*> order;
  for (const ContainerRecord& c : pod.containers) {
    if (c.init) order.push_back(&c);
  }
  for (const ContainerRecord& c : pod.containers) {
    if (!c.init) order.push_back(&c);
  }
  return order;
}

// Who holds one CPU or device, as the containers are visited in start order.
struct Claim {
  const PodRecord* pod;
  const ContainerRecord* first;
  // The first holder that keeps running beside later containers of the pod; none while every
  // holder so far is a finished init container.
  const ContainerRecord* running;
};

// Kubelet hands a finished init container's exclusive CPUs (and devices) on to the pod's later
// containers, so within a pod only containers that run at the same time conflict. Pods
// imported from kubelet's checkpoints (no QoS class recorded) do not say which containers were
// init containers: overlaps within them are not conflicts.
// Returns the earlier holder `c` conflicts with, or nullptr.
const ContainerRecord* Take(std::optional<Claim>& claim, const PodRecord& pod,
                            const ContainerRecord& c) {
  if (!claim.has_value()) {
    claim = Claim{&pod, &c, RunsAlongsideLater(c) ? &c : nullptr};
    return nullptr;
  }
  if (claim->pod != &pod) return claim->first;
  if (pod.qos.empty()) return nullptr;
  if (claim->running != nullptr) return claim->running;
  if (RunsAlongsideLater(c)) claim->running = &c;
  return nullptr;
}

}  // namespace

absl::Status Validate(const State& state) {
  std::map<int, std::optional<Claim>> cpus;
  std::map<std::pair<std::string, std::string>, std::optional<Claim>> devices;
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
    }
    for (const ContainerRecord* c : StartOrder(pod)) {
      if (c->exclusive) {
        for (int cpu : c->cpus) {
          std::optional<Claim>& claim = cpus[cpu];
          if (const ContainerRecord* other = Take(claim, pod, *c)) {
            return absl::FailedPreconditionError(fmt::format(
                "CPUs {} are held exclusively by both {} and {}{}",
                other->cpus.Intersection(c->cpus).ToString(), Holder(*claim->pod, *other),
                Holder(pod, *c), claim->pod == &pod ? ", which run at the same time" : ""));
          }
        }
      }
      for (const auto& [resource, ids] : c->devices) {
        for (const std::string& id : ids) {
          std::optional<Claim>& claim = devices[{resource, id}];
          if (const ContainerRecord* other = Take(claim, pod, *c)) {
            return absl::FailedPreconditionError(
                fmt::format("device {} \"{}\" is held by both {} and {}{}", resource, id,
                            Holder(*claim->pod, *other), Holder(pod, *c),
                            claim->pod == &pod ? ", which run at the same time" : ""));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace topologyd::state
