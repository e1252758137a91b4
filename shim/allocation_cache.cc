#include "shim/allocation_cache.h"

#include <algorithm>

#include "fmt/format.h"

namespace topologyd::shim {

Placement PlacementOf(const v1::ContainerAllocation& allocation) {
  Placement p;
  p.cpus = allocation.cpus();
  p.mems = fmt::format("{}", fmt::join(allocation.memory_numa(), ","));
  p.exclusive = allocation.exclusive();
  p.cpu_quota_unlimited = allocation.cpu_quota_unlimited();
  p.container_id = allocation.container_id();
  return p;
}

void AllocationCache::Replace(const v1::ListAllocationsResponse& listing, bool fresh_stream) {
  absl::MutexLock lock(&mu_);
  if (!fresh_stream && listing.state_generation() < generation_) return;
  generation_ = listing.state_generation();
  shared_pool_ = listing.shared_pool();
  pods_.clear();
  for (const v1::PodAllocation& pod : listing.pods()) {
    auto& containers = pods_[pod.uid()];
    for (const v1::ContainerAllocation& c : pod.containers()) containers[c.name()] = PlacementOf(c);
  }
}

void AllocationCache::PutPod(const std::string& pod_uid, const v1::AdmitResponse& reply) {
  absl::MutexLock lock(&mu_);
  auto& containers = pods_[pod_uid];
  containers.clear();
  for (const v1::ContainerAllocation& c : reply.containers()) {
    containers[c.name()] = PlacementOf(c);
    if (!c.exclusive()) shared_pool_ = c.cpus();
  }
  if (reply.state_generation() > generation_) generation_ = reply.state_generation();
}

void AllocationCache::ErasePod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  pods_.erase(pod_uid);
}

void AllocationCache::EraseContainer(const std::string& pod_uid, const std::string& container) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return;
  it->second.erase(container);
  if (it->second.empty()) pods_.erase(it);
}

std::optional<Placement> AllocationCache::Find(const std::string& pod_uid,
                                               const std::string& container) const {
  absl::MutexLock lock(&mu_);
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return std::nullopt;
  auto c = pod->second.find(container);
  if (c == pod->second.end()) return std::nullopt;
  Placement p = c->second;
  if (!p.exclusive && !shared_pool_.empty()) p.cpus = shared_pool_;
  return p;
}

std::set<std::string> AllocationCache::HeldContainers(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> names;
  if (auto pod = pods_.find(pod_uid); pod != pods_.end()) {
    for (const auto& [name, placement] : pod->second) names.insert(name);
  }
  return names;
}

std::vector<std::pair<std::string, Placement>> AllocationCache::Bound() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, Placement>> bound;
  for (const auto& [uid, containers] : pods_) {
    for (const auto& [name, placement] : containers) {
      if (placement.container_id.empty()) continue;
      Placement p = placement;
      if (!p.exclusive && !shared_pool_.empty()) p.cpus = shared_pool_;
      bound.emplace_back(p.container_id, std::move(p));
    }
  }
  return bound;
}

bool AllocationCache::HoldsPod(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  return pods_.contains(pod_uid);
}

bool AllocationCache::PodCpuQuotaUnlimited(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return false;
  return std::any_of(pod->second.begin(), pod->second.end(),
                     [](const auto& entry) { return entry.second.cpu_quota_unlimited; });
}

std::string AllocationCache::shared_pool() const {
  absl::MutexLock lock(&mu_);
  return shared_pool_;
}

uint64_t AllocationCache::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

}  // namespace topologyd::shim
