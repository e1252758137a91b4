// CriCall: one intercepted CRI call, from before the runtime has it until after it answered,
// as an Envoy filter keeps per-stream state: the request decoded once (and edited in place),
// and what the step before the runtime learnt for the step after it.
//
// Owned by the call's filter; its steps run one after the other, never at once.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <variant>

#include "lib/shim/pod_book.h"

#include "cri/v1/runtime.pb.h"
#include "shim/durability_wait.h"

namespace topologyd::shim {

struct CriCall {
  using Deadline = std::chrono::system_clock::time_point;

  // kubelet's deadline; nullopt when the caller set none.
  std::optional<Deadline> deadline;
  // The request as it goes to the runtime; monostate when it could not be decoded.
  std::variant<std::monostate, runtime::v1::RunPodSandboxRequest,
               runtime::v1::CreateContainerRequest, runtime::v1::StartContainerRequest,
               runtime::v1::RemoveContainerRequest, runtime::v1::StopPodSandboxRequest,
               runtime::v1::RemovePodSandboxRequest, runtime::v1::UpdateContainerResourcesRequest>
      request;
  // Set by a step that changed `request`: it is encoded again; otherwise the caller's bytes go.
  bool edited = false;
  // RunPodSandbox and CreateContainer: the pod's sandbox, from the config the request carries
  // (its id is the runtime's answer for RunPodSandbox).
  SandboxRecord sandbox;
  // CreateContainer placed on a decision topologyd had not yet written: kubelet hears of the
  // container only once this settles OK.
  std::shared_ptr<DurabilityWait> durability;
};

}  // namespace topologyd::shim
