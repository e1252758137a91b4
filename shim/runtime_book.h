// RuntimeBook: the shim's book of the runtime (PodBook: sandboxes, containers, lifted pod
// quotas) and, per container, the placement the runtime was last given, behind one lock. Each
// method is one step of the shim's bookkeeping, so no caller holds the lock across a call to
// topologyd or the runtime.
//
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "lib/shim/pod_book.h"

#include "shim/allocation_cache.h"
#include "shim/plan_request.h"

namespace topologyd::shim {

class RuntimeBook {
 public:
  void PutSandbox(SandboxRecord sandbox);
  // Books the sandbox unless it is known (a CreateContainer repeats its sandbox's config).
  void PutSandboxIfNew(const SandboxRecord& sandbox);
  bool HasSandbox(const std::string& id) const;
  std::optional<SandboxRecord> Sandbox(const std::string& id) const;

  // The pod's containers with known resources (PodBook::Resources), and whether it has any
  // container at all.
  KnownResources Resources(const std::string& pod_uid) const;
  bool HasContainers(const std::string& pod_uid) const;
  // PodBook::MarkPodQuotaLifted.
  bool MarkPodQuotaLifted(const std::string& pod_uid);

  // Books a container; `given`: the cpuset it was created with, when it was given one.
  void PutContainer(ContainerRecord container, std::optional<Placement> given);
  std::optional<ContainerRecord> Container(const std::string& id) const;
  std::set<std::string> ContainerIds() const;
  // Forgets the container and what it was given.
  void ForgetContainer(const std::string& id);

  struct Removed {
    ContainerRecord container;
    bool newer_instance = false;  // the pod has a later attempt of the same container
  };
  // Forgets a removed container; nullopt when it was not booked.
  std::optional<Removed> RemoveContainer(const std::string& id);

  // A sandbox stopped, or removed (then forgotten with its containers): the pod's uid when it
  // is the pod's newest sandbox, nullopt otherwise (also when unknown): a late stop of an
  // older sandbox must not release what the pod's new one holds.
  std::optional<std::string> EndSandbox(const std::string& id, bool removed);

  // Forgets the containers of `known_before` that the runtime no longer lists.
  void ForgetUnlisted(const std::set<std::string>& known_before,
                      const std::set<std::string>& listed);

  // The runtime was given `placement` for the container (kept unless `only_if_unknown` and the
  // book already has one).
  void RecordGiven(const std::string& id, const Placement& placement, bool only_if_unknown = false);
  // Of the bound containers, those whose placement differs from what the runtime was given.
  std::vector<std::pair<std::string, Placement>> PushesDue(
      std::vector<std::pair<std::string, Placement>> bound) const;
  // After pushing `placement`: recorded when the runtime took it, or when the container is gone
  // from the book (not tried again: topologyd releases it once its cgroup has stayed gone).
  void RecordPush(const std::string& id, const Placement& placement, bool taken);

 private:
  mutable absl::Mutex mu_;
  PodBook book_ ABSL_GUARDED_BY(mu_);
  // Per container id: the placement the runtime was last given.
  std::map<std::string, Placement> given_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topologyd::shim
