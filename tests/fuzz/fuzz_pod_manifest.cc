// ParsePodManifest on arbitrary YAML or JSON: no crash, no escaping exception, it ends (see
// lib/config/yaml_documents.h), and accepted pods go through the Pod model's helpers.
#include <cstdint>
#include <string_view>

#include "lib/pod/pod.h"
#include "lib/pod/pod_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto pod = topologyd::pod::ParsePodManifest(text);
  if (!pod.ok()) return 0;
  (void)topologyd::pod::ComputeQos(*pod);
  (void)topologyd::pod::EffectivePodRequests(*pod);
  (void)topologyd::pod::EffectivePodLimits(*pod);
  return 0;
}
