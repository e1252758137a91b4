// AllocationCache: the shim's copy of what topologyd holds, kept current from Admit replies and
// from topologyd's WatchAllocations stream. It answers "does topologyd hold this container, and
// on which CPUs" without a call, so a restarted container is pinned where it was even while
// topologyd restarts, and it tells the pool follower which cpusets changed.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::shim {

// What one container is pinned to.
struct Placement {
  std::string cpus;  // exclusive CPUs, or the shared pool
  std::string mems;  // memory nodes; empty when topologyd does not pin memory
  bool exclusive = false;
  // kubelet's static policy would run it without a CFS quota (topologyd's word: docs/api.md).
  bool cpu_quota_unlimited = false;
  std::string container_id;  // the runtime instance topologyd has bound it to
  friend bool operator==(const Placement&, const Placement&) = default;
};

Placement PlacementOf(const v1::ContainerAllocation& allocation);

class AllocationCache {
 public:
  // A full listing (ListAllocations or a watch message); ignored when older than what the
  // cache has seen, unless `fresh_stream`: the first message of a new watch is topologyd's
  // state whatever came before (a daemon started on another state file counts afresh).
  void Replace(const v1::ListAllocationsResponse& listing, bool fresh_stream = false);
  // An admission's reply for one pod.
  void PutPod(const std::string& pod_uid, const v1::AdmitResponse& reply);
  // A release the shim made.
  void ErasePod(const std::string& pod_uid);
  void EraseContainer(const std::string& pod_uid, const std::string& container);

  std::optional<Placement> Find(const std::string& pod_uid, const std::string& container) const;
  std::set<std::string> HeldContainers(const std::string& pod_uid) const;
  // Every container bound to a runtime instance: its container id and placement.
  std::vector<std::pair<std::string, Placement>> Bound() const;
  bool HoldsPod(const std::string& pod_uid) const;
  // Whether a container of the pod runs without a CFS quota: then so do its sandbox and its pod
  // cgroup, as kubelet's PodHasExclusiveCPUs decides.
  bool PodCpuQuotaUnlimited(const std::string& pod_uid) const;
  std::string shared_pool() const;
  uint64_t generation() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, Placement>> pods_ ABSL_GUARDED_BY(mu_);
  std::string shared_pool_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace topologyd::shim
