#include "tools/topoctl/support_picture.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"

namespace topoctl {
namespace picture = topologyd::picture;

namespace {

absl::StatusOr<topologyd::CpuSet> CpuList(const std::string& text, const std::string& what) {
  absl::StatusOr<topologyd::CpuSet> cpus = topologyd::CpuSet::Parse(text);
  if (!cpus.ok()) {
    return absl::InvalidArgumentError(what + ": " + std::string(cpus.status().message()));
  }
  return cpus;
}

}  // namespace

absl::StatusOr<picture::AllocationsDrawing> DrawingOfAllocations(
    const topologyd::v1::ListAllocationsResponse& reply) {
  picture::AllocationsDrawing drawing;
  absl::StatusOr<topologyd::CpuSet> reserved = CpuList(reply.reserved(), "reserved CPUs");
  if (!reserved.ok()) return reserved.status();
  absl::StatusOr<topologyd::CpuSet> shared = CpuList(reply.shared_pool(), "shared pool");
  if (!shared.ok()) return shared.status();
  drawing.reserved = *reserved;
  drawing.shared_pool = *shared;
  for (const topologyd::v1::PodAllocation& p : reply.pods()) {
    picture::PodDrawing pod{.uid = p.uid(), .namespace_name = p.namespace_(), .name = p.name()};
    for (const topologyd::v1::ContainerAllocation& c : p.containers()) {
      picture::ContainerDrawing container{.name = c.name()};
      if (c.exclusive()) {
        absl::StatusOr<topologyd::CpuSet> cpus =
            CpuList(c.cpus(), "pod " + p.uid() + " container " + c.name());
        if (!cpus.ok()) return cpus.status();
        container.exclusive_cpus = *cpus;
      }
      container.memory_numa.assign(c.memory_numa().begin(), c.memory_numa().end());
      for (const auto& [resource, ids] : c.devices()) {
        for (const std::string& id : ids.ids()) container.devices.emplace_back(resource, id);
      }
      // A proto map has no order; the legend should not change from one call to the next.
      std::sort(container.devices.begin(), container.devices.end());
      pod.containers.push_back(std::move(container));
    }
    drawing.pods.push_back(std::move(pod));
  }
  return drawing;
}

}  // namespace topoctl
