// PodBook: what the shim remembers of the runtime's sandboxes and containers — the pod each
// belongs to, the cgroup parent kubelet gave it and each container's CRI resources (what
// topologyd estimates a pod without a spec from) — and the pods whose pod cgroup quota it lifted.
// It is a cache: a restarted shim rebuilds it from the runtime (resync), so nothing in it must
// outlive the process.
//
// A plain value; the shim serialises access.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/podspec/cri_estimate.h"

namespace topologyd::shim {

struct SandboxRecord {
  std::string id;  // the runtime's sandbox id
  std::string pod_uid;
  std::string namespace_name;
  std::string pod_name;
  std::map<std::string, std::string> annotations;
  std::string cgroup_parent;
  uint32_t attempt = 0;
};

struct ContainerRecord {
  std::string id;  // the runtime's container id
  std::string sandbox_id;
  std::string pod_uid;
  std::string name;
  uint32_t attempt = 0;
  // The Linux resources the runtime was asked to create the container with; nullopt when
  // unknown (the runtime did not say).
  std::optional<podspec::CriResources> resources;
};

class PodBook {
 public:
  void PutSandbox(SandboxRecord sandbox);
  const SandboxRecord* Sandbox(const std::string& id) const;
  // The newest sandbox of the pod (the highest attempt), if any.
  const SandboxRecord* SandboxOfPod(const std::string& pod_uid) const;
  // Forgets the sandbox and every container in it.
  void ForgetSandbox(const std::string& id);

  void PutContainer(ContainerRecord container);
  const ContainerRecord* Container(const std::string& id) const;
  void ForgetContainer(const std::string& id);
  // The ids of every container it knows.
  std::set<std::string> ContainerIds() const;
  // The pod's containers, oldest first.
  std::vector<const ContainerRecord*> ContainersOfPod(const std::string& pod_uid) const;

  // The pod's containers with known resources, in the order they were first created, each
  // with its newest instance's (a restarted container replaces its earlier instance).
  std::vector<std::pair<std::string, podspec::CriResources>> Resources(
      const std::string& pod_uid) const;

  // True the first time for a pod: the shim lifts a pod cgroup's CFS quota once per pod, not
  // once per container. Forgotten with the pod's last sandbox.
  bool MarkPodQuotaLifted(const std::string& pod_uid);

  size_t sandbox_count() const { return sandboxes_.size(); }
  size_t container_count() const { return containers_.size(); }

 private:
  struct Entry {
    uint64_t sequence;  // creation order
    ContainerRecord record;
  };
  std::map<std::string, SandboxRecord> sandboxes_;
  std::map<std::string, Entry> containers_;
  uint64_t next_sequence_ = 0;
  std::set<std::string> quota_lifted_pods_;
};

}  // namespace topologyd::shim
