#include "lib/shim/cri_methods.h"

#include <algorithm>
#include <iterator>

namespace topologyd::shim {
namespace {

constexpr std::string_view kRuntimeService = "/runtime.v1.RuntimeService/";
constexpr std::string_view kImageService = "/runtime.v1.ImageService/";

constexpr std::string_view kRuntimeMethods[] = {
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
    "GetContainerEvents",  // server-streaming
    "ListMetricDescriptors",
    "ListPodSandboxMetrics",
    "RuntimeConfig",
    "UpdatePodSandboxResources",
    "StreamPodSandboxes",  // server-streaming, like the other Stream* methods
    "StreamContainers",
    "StreamContainerStats",
    "StreamPodSandboxStats",
    "StreamPodSandboxMetrics",
};

constexpr std::string_view kImageMethods[] = {
    "ListImages", "ImageStatus", "PullImage", "RemoveImage", "ImageFsInfo", "StreamImages",
};

template <size_t N>
bool Lists(const std::string_view (&methods)[N], std::string_view name) {
  return std::find(std::begin(methods), std::end(methods), name) != std::end(methods);
}

}  // namespace

bool IsKnownCriMethod(std::string_view method) {
  if (method.starts_with(kRuntimeService)) {
    return Lists(kRuntimeMethods, method.substr(kRuntimeService.size()));
  }
  if (method.starts_with(kImageService)) {
    return Lists(kImageMethods, method.substr(kImageService.size()));
  }
  return false;
}

}  // namespace topologyd::shim
