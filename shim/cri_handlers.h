// CriHandlers: the shim's steps around the CRI calls it intercepts (the table of which step
// runs when is shim/intercepted_methods.cc; docs/shim.md says it in words).
//
//   RunPodSandbox            with a full spec: admit the whole pod before the sandbox exists
//   CreateContainer          place the container (admitting it if topologyd does not hold it)
//                            and put its CPUs and memory nodes into the forwarded request;
//                            kubelet's answer waits until topologyd has the placement on disk
//   (both)                   for a pod with exclusive CPUs, the CFS quota kubelet's static
//                            policy sets: none for the exclusive container, the sandbox and
//                            the pod cgroup
//   StartContainer           bind the new container id and cgroup in topologyd
//   RemoveContainer          release the container if this instance is the bound one
//   StopPodSandbox /
//   RemovePodSandbox         release the pod (its newest sandbox only)
//   UpdateContainerResources keep the cpuset topologyd decided in what reaches the runtime
//
// A step before the runtime edits call.request (setting call.edited) or returns the status
// to refuse the call with. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "absl/status/status.h"

#include "cri/v1/runtime.grpc.pb.h"
#include "shim/allocation_cache.h"
#include "shim/container_placer.h"
#include "shim/cri_call.h"
#include "shim/pod_spec_resolver.h"
#include "shim/runtime_book.h"

namespace topologyd::shim {

class CriHandlers {
 public:
  // `runtime_timeout`: for the calls the shim makes to the runtime itself.
  CriHandlers(ContainerPlacer* placer, RuntimeBook* book, AllocationCache* cache,
              PodSpecResolver* specs, runtime::v1::RuntimeService::StubInterface* runtime,
              std::chrono::milliseconds runtime_timeout)
      : placer_(placer),
        book_(book),
        cache_(cache),
        specs_(specs),
        runtime_(runtime),
        runtime_timeout_(runtime_timeout) {}

  absl::Status BeforeRunPodSandbox(CriCall& call);
  absl::Status BeforeCreateContainer(CriCall& call);
  absl::Status BeforeUpdateContainerResources(CriCall& call);

  void AfterRunPodSandbox(CriCall& call, const std::string& response);
  void AfterCreateContainer(CriCall& call, const std::string& response);
  void AfterStartContainer(CriCall& call, const std::string& response);
  void AfterRemoveContainer(CriCall& call, const std::string& response);
  void AfterStopPodSandbox(CriCall& call, const std::string& response);
  void AfterRemovePodSandbox(CriCall& call, const std::string& response);

  // A CreateContainer forwarded on a placement topologyd then could not make durable (`why`):
  // the container, when the runtime created it (`created`, `response`), is removed again so
  // that kubelet's retry can create it anew, and that retry asks topologyd again instead of
  // trusting the shim's copy. The status to answer kubelet with. Calls the runtime: a
  // worker's job.
  absl::Status AfterCreateNotDurable(const CriCall& call, bool created, const std::string& response,
                                     const absl::Status& why);

 private:
  void SandboxEnds(const std::string& sandbox_id, bool removed);

  ContainerPlacer* const placer_;
  RuntimeBook* const book_;
  AllocationCache* const cache_;
  PodSpecResolver* const specs_;
  runtime::v1::RuntimeService::StubInterface* const runtime_;
  const std::chrono::milliseconds runtime_timeout_;
  std::atomic<bool> warned_kubelet_cpuset_{false};
};

}  // namespace topologyd::shim
