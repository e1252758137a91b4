// The three providers of lib/admission/provider.h over the pure device, CPU and memory
// policies.
#include <utility>

#include "lib/admission/provider.h"
#include "lib/cpu/cpu_hints.h"
#include "lib/device/device_allocator.h"
#include "lib/device/device_hints.h"
#include "lib/device/device_state.h"
#include "lib/memory/memory_policy.h"

namespace topologyd::admission {
namespace {

ProviderFailure Unexpected(const absl::Status& status) {
  return ProviderFailure{.reason = std::string(cpu::kUnexpectedAdmissionErrorReason),
                         .message = std::string(status.message()),
                         .message_is_reason = false};
}

class DeviceProvider final : public Provider {
 public:
  std::string_view name() const override { return "devices"; }
  std::string_view manager() const override { return "device"; }
  bool Pins(const NodePolicy&, const ContainerContext&) const override { return false; }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    return device::GetContainerTopologyHints(node.devices, state.devices, c.pod, *c.container.spec);
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    return device::GetPodTopologyHints(node.devices, state.devices, pod.pod);
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    absl::StatusOr<device::DeviceState> devices =
        device::Allocate(node.devices, std::move(state.devices), c.pod, *c.container.spec, hint);
    if (!devices.ok()) return Unexpected(devices.status());
    state.devices = *std::move(devices);
    return std::nullopt;
  }
  void Release(const NodePolicy&, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    state.devices = container
                        ? device::ReleaseContainer(std::move(state.devices), pod_uid, *container)
                        : device::ReleasePod(std::move(state.devices), pod_uid);
  }
};

cpu::ContainerRequest CpuRequest(const pod::Pod& pod, const pod::OrderedContainer& c,
                                 bool guaranteed) {
  int64_t millis = 0;
  if (auto it = c.spec->requests.find(pod::kResourceCpu); it != c.spec->requests.end()) {
    millis = it->second.MilliValue();
  }
  cpu::ContainerKind kind = cpu::ContainerKind::kApp;
  if (c.role == pod::ContainerRole::kInit) kind = cpu::ContainerKind::kInit;
  if (c.role == pod::ContainerRole::kSidecar) kind = cpu::ContainerKind::kRestartableInit;
  return cpu::ContainerRequest{.pod_uid = pod.uid,
                               .name = c.spec->name,
                               .kind = kind,
                               .exclusive_cpus = cpu::GuaranteedCpus(guaranteed, millis),
                               .held_alongside = {}};
}

cpu::ContainerRequest CpuRequest(const ContainerContext& c) {
  cpu::ContainerRequest request = CpuRequest(c.pod, c.container, c.guaranteed);
  request.held_alongside = c.held_alongside;
  return request;
}

class CpuProvider final : public Provider {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view manager() const override { return "cpu"; }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    if (!node.cpu.has_value()) return hints::ProviderHints();
    return cpu::GetTopologyHints(*node.cpu, state.cpu, CpuRequest(c));
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    if (!node.cpu.has_value()) return hints::ProviderHints();
    std::vector<cpu::ContainerRequest> requests;
    for (const pod::OrderedContainer& c : pod.order) {
      requests.push_back(CpuRequest(pod.pod, c, pod.guaranteed));
    }
    return cpu::GetPodTopologyHints(*node.cpu, state.cpu, pod.pod.uid, requests);
  }
  bool Pins(const NodePolicy& node, const ContainerContext& c) const override {
    return node.cpu.has_value() && CpuRequest(c).exclusive_cpus > 0;
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    if (!node.cpu.has_value()) return std::nullopt;
    absl::StatusOr<cpu::Allocation> cpus =
        node.cpu->Allocate(std::move(state.cpu), CpuRequest(c), hint.affinity);
    if (!cpus.ok()) {
      ProviderFailure failure = Unexpected(cpus.status());
      failure.reason = cpu::RejectionReason(cpus.status());
      // The CPU manager's own error type: kubelet uses its text as the message.
      failure.message_is_reason = failure.reason == cpu::kSmtAlignmentErrorReason;
      return failure;
    }
    state.cpu = std::move(cpus->state);
    return std::nullopt;
  }
  void Release(const NodePolicy& node, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    if (!container) state.cpu.cpus_to_reuse.erase(pod_uid);
    if (!node.cpu.has_value()) return;
    if (container) {
      state.cpu = node.cpu->RemoveContainer(state.cpu, pod_uid, *container);
      return;
    }
    std::vector<std::string> names;
    if (auto it = state.cpu.assignments.find(pod_uid); it != state.cpu.assignments.end()) {
      for (const auto& [name, cpus] : it->second) names.push_back(name);
    }
    for (const std::string& name : names) {
      state.cpu = node.cpu->RemoveContainer(state.cpu, pod_uid, name);
    }
  }
};

class MemoryProvider final : public Provider {
 public:
  std::string_view name() const override { return "memory"; }
  std::string_view manager() const override { return "memory"; }

  absl::StatusOr<hints::ProviderHints> ContainerHints(const NodePolicy& node,
                                                      const AllocationState& state,
                                                      const ContainerContext& c) const override {
    if (!node.memory_static) return hints::ProviderHints();
    return memory::GetContainerTopologyHints(state.memory, c.pod, c.container, c.guaranteed);
  }
  absl::StatusOr<hints::ProviderHints> PodHints(const NodePolicy& node,
                                                const AllocationState& state,
                                                const PodContext& pod) const override {
    if (!node.memory_static) return hints::ProviderHints();
    return memory::GetPodTopologyHints(state.memory, pod.pod);
  }
  bool Pins(const NodePolicy& node, const ContainerContext& c) const override {
    return node.memory_static && c.guaranteed;
  }
  std::optional<ProviderFailure> Allocate(const NodePolicy& node, AllocationState& state,
                                          const ContainerContext& c,
                                          const hints::TopologyHint& hint) const override {
    if (!node.memory_static) return std::nullopt;
    absl::StatusOr<memory::MemoryState> memory =
        memory::Allocate(std::move(state.memory), c.pod, c.container, c.guaranteed, hint);
    if (!memory.ok()) return Unexpected(memory.status());
    state.memory = *std::move(memory);
    return std::nullopt;
  }
  void Release(const NodePolicy&, AllocationState& state, const std::string& pod_uid,
               const std::optional<std::string>& container) const override {
    state.memory = container ? memory::RemoveContainer(std::move(state.memory), pod_uid, *container)
                             : memory::RemovePod(std::move(state.memory), pod_uid);
  }
  void InitContainersFinished(const NodePolicy& node, AllocationState& state,
                              const std::string& pod_uid,
                              const std::vector<std::string>& finished) const override {
    if (!node.memory_static) return;
    for (const std::string& name : finished) {
      state.memory = memory::RemoveContainer(std::move(state.memory), pod_uid, name);
    }
  }
};

}  // namespace

const std::vector<const Provider*>& Providers() {
  static const auto* const providers =
      new std::vector<const Provider*>{new DeviceProvider, new CpuProvider, new MemoryProvider};
  return *providers;
}

}  // namespace topologyd::admission
