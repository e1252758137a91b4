#include "shim/intercepted_methods.h"

#include <algorithm>
#include <iterator>

namespace topologyd::shim {
namespace {

namespace cri = runtime::v1;

constexpr std::string_view kRuntimeService = "/runtime.v1.RuntimeService/";

template <typename Request>
bool Decode(const std::string& bytes, CriCall& call) {
  Request request;
  if (!request.ParseFromString(bytes)) return false;
  call.request = std::move(request);
  return true;
}

using H = CriHandlers;
constexpr InterceptedMethod kMethods[] = {
    {"RunPodSandbox", &Decode<cri::RunPodSandboxRequest>, &H::BeforeRunPodSandbox,
     &H::AfterRunPodSandbox, AfterWhen::kRuntimeOk, AfterThread::kRelay},
    {"CreateContainer", &Decode<cri::CreateContainerRequest>, &H::BeforeCreateContainer,
     &H::AfterCreateContainer, AfterWhen::kRuntimeOk, AfterThread::kRelay},
    {"StartContainer", &Decode<cri::StartContainerRequest>, nullptr, &H::AfterStartContainer,
     AfterWhen::kRuntimeOk, AfterThread::kWorker},
    {"RemoveContainer", &Decode<cri::RemoveContainerRequest>, nullptr, &H::AfterRemoveContainer,
     AfterWhen::kAlways, AfterThread::kWorker},
    {"StopPodSandbox", &Decode<cri::StopPodSandboxRequest>, nullptr, &H::AfterStopPodSandbox,
     AfterWhen::kRuntimeOk, AfterThread::kWorker},
    {"RemovePodSandbox", &Decode<cri::RemovePodSandboxRequest>, nullptr, &H::AfterRemovePodSandbox,
     AfterWhen::kAlways, AfterThread::kWorker},
    {"UpdateContainerResources", &Decode<cri::UpdateContainerResourcesRequest>,
     &H::BeforeUpdateContainerResources, nullptr, AfterWhen::kRuntimeOk, AfterThread::kRelay},
};

}  // namespace

const InterceptedMethod* FindInterceptedMethod(std::string_view full_method) {
  if (!full_method.starts_with(kRuntimeService)) return nullptr;
  const std::string_view name = full_method.substr(kRuntimeService.size());
  const auto* found = std::find_if(std::begin(kMethods), std::end(kMethods),
                                   [name](const InterceptedMethod& m) { return m.name == name; });
  return found == std::end(kMethods) ? nullptr : found;
}

std::string EncodeRequest(const CriCall& call) {
  return std::visit(
      [](const auto& request) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(request)>, std::monostate>) {
          return {};
        } else {
          return request.SerializeAsString();
        }
      },
      call.request);
}

}  // namespace topologyd::shim
