#include "lib/rpc/admission_proto.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;

// NUMA masks are over positions; the API speaks OS ids.
void MaskToHint(const std::optional<hints::NumaMask>& affinity, bool preferred,
                const hints::NumaIndex& numa, v1::Hint* out) {
  out->set_preferred(preferred);
  if (!affinity) {
    out->set_any_numa(true);
    return;
  }
  for (int id : numa.Ids(*affinity)) out->add_numa_nodes(id);
}

void DevicesToProto(const std::map<std::string, std::vector<std::string>>& devices,
                    v1::ContainerAllocation* out) {
  for (const auto& [resource, ids] : devices) {
    v1::DeviceIds& list = (*out->mutable_devices())[resource];
    for (const auto& id : ids) list.add_ids(id);
  }
}

void ProviderHintsToProto(const admission::ProviderHintsEntry& entry, const hints::NumaIndex& numa,
                          v1::ContainerExplanation* out) {
  if (!entry.hints || entry.hints->empty()) {
    // A provider-level entry (empty resource): no map at all (no preference), or an empty
    // map, which kubelet's merge treats the same way but an explanation shows as such.
    v1::ResourceHints* r = out->add_hints();
    r->set_provider(entry.provider);
    r->set_no_preference(!entry.hints.has_value());
    return;
  }
  for (const auto& [resource, list] : *entry.hints) {
    v1::ResourceHints* r = out->add_hints();
    r->set_provider(entry.provider);
    r->set_resource(resource);
    if (!list) {
      r->set_no_preference(true);
      continue;
    }
    r->set_upward_closed(list->upward_closed);
    if (list->upward_closed) {
      for (int id : numa.Ids(list->universe)) r->add_universe(id);
    }
    for (const hints::TopologyHint& h : list->hints) {
      MaskToHint(h.affinity, h.preferred, numa, r->add_hints());
    }
  }
}

}  // namespace

void ContainerViewToProto(const engine::ContainerView& in, v1::ContainerAllocation* out) {
  out->set_name(in.name);
  out->set_cpus(in.cpus.ToString());
  out->set_exclusive(in.exclusive);
  for (int id : in.numa_affinity) out->add_numa_affinity(id);
  for (const auto& [numa, resources] : in.memory) out->add_memory_numa(numa);
  DevicesToProto(in.devices, out);
  out->set_container_id(in.container_id);
  out->set_cgroup(in.cgroup);
}

void AdmitReplyToProto(const engine::AdmitReply& in, v1::AdmitResponse* out) {
  out->set_admitted(in.admitted);
  out->set_reason(in.reason);
  out->set_message(in.message);
  for (const auto& c : in.containers) ContainerViewToProto(c, out->add_containers());
  out->set_state_generation(in.generation);
}

void ExplainReplyToProto(const engine::ExplainReply& in, v1::ExplainResponse* out) {
  const admission::AdmissionResult& result = in.result;
  const hints::NumaIndex& numa = in.policy->numa;
  v1::AdmitResponse* decision = out->mutable_decision();
  decision->set_admitted(result.admitted);
  decision->set_reason(result.reason);
  decision->set_message(result.message);
  for (const admission::ContainerAllocation& c : result.containers) {
    v1::ContainerAllocation* a = decision->add_containers();
    a->set_name(c.name);
    a->set_cpus(c.cpus.ToString());
    a->set_exclusive(c.exclusive);
    for (int id : c.numa_affinity) a->add_numa_affinity(id);
    for (int id : c.memory_numa) a->add_memory_numa(id);
    DevicesToProto(c.devices, a);
  }
  const admission::Explanation& explanation = result.explanation;
  for (const std::string& note : explanation.notes) out->add_notes(note);
  out->set_policy(std::string(hints::PolicyName(explanation.policy)));
  out->set_scope(std::string(admission::ScopeName(explanation.scope)));
  for (const admission::MergeStep& step : explanation.merges) {
    v1::ContainerExplanation* e = out->add_containers();
    e->set_name(step.container.value_or(""));
    for (const auto& entry : step.providers) ProviderHintsToProto(entry, numa, e);
    MaskToHint(step.merged.hint.affinity, step.merged.hint.preferred, numa, e->mutable_merged());
    e->set_admit(step.merged.admit);
    e->set_limit_error(step.limit_error);
    e->set_policy(std::string(hints::PolicyName(explanation.policy)));
    e->set_scope(std::string(admission::ScopeName(explanation.scope)));
  }
}

void AllocationsToProto(const engine::AllocationsView& in, v1::ListAllocationsResponse* out) {
  out->set_reserved(in.reserved.ToString());
  out->set_shared_pool(in.shared_pool.ToString());
  out->set_state_generation(in.state.generation);
  for (const auto& [uid, pod] : in.state.pods) {
    v1::PodAllocation* p = out->add_pods();
    p->set_uid(pod.uid);
    p->set_namespace_(pod.namespace_name);
    p->set_name(pod.name);
    for (const auto& c : pod.containers) ContainerViewToProto(c, p->add_containers());
  }
}

}  // namespace topologyd::rpc
