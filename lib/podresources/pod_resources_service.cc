#include "lib/podresources/pod_resources_service.h"

#include <optional>
#include <string>

#include "fmt/format.h"

#include "lib/config/pod_resources_config.h"
#include "lib/podresources/pod_resources.h"

namespace topologyd::podresources {
namespace {

void SetTopology(int numa, ::v1::TopologyInfo* out) { out->add_nodes()->set_id(numa); }

void AddDevices(const std::vector<DeviceEntry>& devices,
                google::protobuf::RepeatedPtrField<::v1::ContainerDevices>* out) {
  for (const DeviceEntry& d : devices) {
    ::v1::ContainerDevices* entry = out->Add();
    entry->set_resource_name(d.resource_name);
    entry->add_device_ids(d.device_id);
    if (d.numa_node) SetTopology(*d.numa_node, entry->mutable_topology());
  }
}

void AddMemory(const std::vector<MemoryBlock>& blocks,
               google::protobuf::RepeatedPtrField<::v1::ContainerMemory>* out) {
  for (const MemoryBlock& b : blocks) {
    ::v1::ContainerMemory* entry = out->Add();
    entry->set_memory_type(b.type);
    entry->set_size(b.size);
    // The kubelet always sets the topology of a block, even one without nodes.
    ::v1::TopologyInfo* topology = entry->mutable_topology();
    for (int numa : b.numa_nodes) topology->add_nodes()->set_id(numa);
  }
}

void PodToProto(const PodResources& pod, ::v1::PodResources* out) {
  out->set_name(pod.name);
  out->set_namespace_(pod.namespace_name);
  for (const ContainerResources& c : pod.containers) {
    ::v1::ContainerResources* container = out->add_containers();
    container->set_name(c.name);
    AddDevices(c.devices, container->mutable_devices());
    for (int64_t cpu : c.cpu_ids) container->add_cpu_ids(cpu);
    AddMemory(c.memory, container->mutable_memory());
  }
}

}  // namespace

PodResourcesService::PodResourcesService(engine::Engine* engine, const rpc::PeerRegistry* peers,
                                         uid_t daemon_uid, const os::Clock* clock)
    : engine_(engine),
      peers_(peers),
      daemon_uid_(daemon_uid),
      clock_(clock),
      limit_(kCallsPerSecond, kBurstCalls, clock->Now()) {}

grpc::Status PodResourcesService::Check(const grpc::ServerContextBase& context) {
  std::optional<rpc::PeerRegistry::Peer> peer = peers_->Lookup(context.peer());
  if (!peer) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "caller credentials unknown; connect over the PodResources Unix socket");
  }
  if (!peer->refused.empty()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, peer->refused);
  }
  std::shared_ptr<const config::Config> config = engine_->config();
  if (!rpc::IsPeerAllowed(config::PodResourcesPeers(*config), peer->creds, daemon_uid_)) {
    const char* key =
        config->pod_resources->allowed_peers ? "podResources.allowedPeers" : "allowedPeers";
    return grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        fmt::format("uid {} gid {} is not in {}", peer->creds.uid, peer->creds.gid, key));
  }
  absl::MutexLock lock(&limit_mu_);
  if (!limit_.Take(clock_->Now())) {
    // The kubelet's words, which its clients may look for.
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit");
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PodResourcesService::Answer(grpc::CallbackServerContext* context,
                                                      const std::function<grpc::Status()>& reply) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status allowed = Check(*context);
  reactor->Finish(allowed.ok() ? reply() : allowed);
  return reactor;
}

grpc::ServerUnaryReactor* PodResourcesService::List(grpc::CallbackServerContext* context,
                                                    const ::v1::ListPodResourcesRequest*,
                                                    ::v1::ListPodResourcesResponse* response) {
  return Answer(context, [&] {
    // The allocations first: a reload may add device pools but never removes one a record
    // holds, so the policy read after them knows every device they name.
    const ledger::Allocations allocations = engine_->ListAllocations();
    const std::shared_ptr<const admission::NodePolicy> policy = engine_->policy();
    for (const PodResources& pod : ListPods(allocations, *policy)) {
      PodToProto(pod, response->add_pod_resources());
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* PodResourcesService::Get(grpc::CallbackServerContext* context,
                                                   const ::v1::GetPodResourcesRequest* request,
                                                   ::v1::GetPodResourcesResponse* response) {
  return Answer(context, [&] {
    const ledger::Allocations allocations = engine_->ListAllocations();
    const std::shared_ptr<const admission::NodePolicy> policy = engine_->policy();
    std::optional<PodResources> pod =
        FindPod(allocations, *policy, request->pod_namespace(), request->pod_name());
    if (!pod) {
      // The kubelet answers with a plain error, which gRPC sends as UNKNOWN.
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          PodNotFoundMessage(request->pod_namespace(), request->pod_name()));
    }
    PodToProto(*pod, response->mutable_pod_resources());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* PodResourcesService::GetAllocatableResources(
    grpc::CallbackServerContext* context, const ::v1::AllocatableResourcesRequest*,
    ::v1::AllocatableResourcesResponse* response) {
  return Answer(context, [&] {
    const AllocatableResources allocatable = Allocatable(*engine_->policy());
    AddDevices(allocatable.devices, response->mutable_devices());
    for (int64_t cpu : allocatable.cpu_ids) response->add_cpu_ids(cpu);
    AddMemory(allocatable.memory, response->mutable_memory());
    return grpc::Status::OK;
  });
}

}  // namespace topologyd::podresources
