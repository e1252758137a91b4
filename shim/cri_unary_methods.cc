#include "shim/cri_unary_methods.h"

#include <string_view>

namespace topologyd::shim {

std::set<std::string, std::less<>> CriUnaryMethods() {
  // Left out because they stream: GetContainerEvents and the Stream* methods (v0.36).
  static constexpr std::string_view kRuntimeServiceMethods[] = {
      "Version",
      "RunPodSandbox",
      "StopPodSandbox",
      "RemovePodSandbox",
      "PodSandboxStatus",
      "ListPodSandbox",
      "CreateContainer",
      "StartContainer",
      "StopContainer",
      "RemoveContainer",
      "ListContainers",
      "ContainerStatus",
      "UpdateContainerResources",
      "ReopenContainerLog",
      "ExecSync",
      "Exec",
      "Attach",
      "PortForward",
      "ContainerStats",
      "ListContainerStats",
      "PodSandboxStats",
      "ListPodSandboxStats",
      "UpdateRuntimeConfig",
      "Status",
      "CheckpointContainer",
      "ListMetricDescriptors",
      "ListPodSandboxMetrics",
      "RuntimeConfig",
      "UpdatePodSandboxResources",
  };
  static constexpr std::string_view kImageServiceMethods[] = {
      "ListImages", "ImageStatus", "PullImage", "RemoveImage", "ImageFsInfo",
  };
  std::set<std::string, std::less<>> methods;
  for (std::string_view name : kRuntimeServiceMethods) {
    methods.insert("/runtime.v1.RuntimeService/" + std::string(name));
  }
  for (std::string_view name : kImageServiceMethods) {
    methods.insert("/runtime.v1.ImageService/" + std::string(name));
  }
  return methods;
}

}  // namespace topologyd::shim
