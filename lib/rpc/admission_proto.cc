#include "lib/rpc/admission_proto.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"

#include "lib/admission/cpu_quota.h"
#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"

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

// --- reading an explanation back ---------------------------------------------------------

// The reply speaks OS ids: mask positions are over the ascending ids it mentions.
hints::NumaIndex NumaOf(const v1::ExplainResponse& in) {
  std::vector<int> ids;
  auto add = [&ids](const v1::Hint& h) {
    ids.insert(ids.end(), h.numa_nodes().begin(), h.numa_nodes().end());
  };
  for (const v1::ContainerExplanation& e : in.containers()) {
    add(e.merged());
    for (const v1::ResourceHints& r : e.hints()) {
      ids.insert(ids.end(), r.universe().begin(), r.universe().end());
      for (const v1::Hint& h : r.hints()) add(h);
    }
  }
  return hints::NumaIndex(std::move(ids));
}

hints::NumaMask MaskOf(const hints::NumaIndex& numa,
                       const google::protobuf::RepeatedField<int32_t>& ids) {
  return numa.Mask(std::vector<int>(ids.begin(), ids.end()));
}

hints::TopologyHint HintOf(const hints::NumaIndex& numa, const v1::Hint& h) {
  hints::TopologyHint out{.preferred = h.preferred()};
  if (!h.any_numa()) out.affinity = MaskOf(numa, h.numa_nodes());
  return out;
}

// The provider entries of one merge: consecutive ResourceHints of a provider form its map; a
// provider-level entry (empty resource) is no map (no_preference) or an empty one.
std::vector<admission::ProviderHintsEntry> ProvidersFromProto(
    const google::protobuf::RepeatedPtrField<v1::ResourceHints>& in, const hints::NumaIndex& numa) {
  std::vector<admission::ProviderHintsEntry> out;
  for (const v1::ResourceHints& r : in) {
    if (out.empty() || out.back().provider != r.provider()) {
      out.push_back({.provider = r.provider(), .hints = std::nullopt});
    }
    hints::ProviderHints& entry = out.back().hints;
    if (r.resource().empty()) {
      if (!r.no_preference()) entry.emplace();
      continue;
    }
    if (!entry.has_value()) entry.emplace();
    hints::HintList& list = (*entry)[r.resource()];
    if (r.no_preference()) continue;
    list.emplace();
    list->upward_closed = r.upward_closed();
    if (r.upward_closed()) list->universe = MaskOf(numa, r.universe());
    for (const v1::Hint& h : r.hints()) list->hints.push_back(HintOf(numa, h));
  }
  return out;
}

absl::StatusOr<state::ContainerRecord> ContainerFromProto(const v1::ContainerAllocation& in) {
  absl::StatusOr<CpuSet> cpus = CpuSet::Parse(in.cpus());
  if (!cpus.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("container \"{}\": cpus: {}", in.name(), cpus.status().message()));
  }
  state::ContainerRecord out;
  out.name = in.name();
  out.cpus = *std::move(cpus);
  out.exclusive = in.exclusive();
  out.numa_affinity = {in.numa_affinity().begin(), in.numa_affinity().end()};
  // The reply names the memory nodes only, not the bytes on each.
  for (int id : in.memory_numa()) out.memory[id];
  for (const auto& [resource, ids] : in.devices()) {
    out.devices[resource] = {ids.ids().begin(), ids.ids().end()};
  }
  return out;
}

// What a container holds, without its runtime binding.
void HoldingsToProto(const state::ContainerRecord& in, const FeatureGates& gates,
                     v1::ContainerAllocation* out) {
  out->set_name(in.name);
  out->set_cpus(in.cpus.ToString());
  out->set_exclusive(in.exclusive);
  for (int id : in.numa_affinity) out->add_numa_affinity(id);
  for (int id : state::MemoryNodes(in)) out->add_memory_numa(id);
  DevicesToProto(in.devices, out);
  out->set_cpu_quota_unlimited(
      admission::CpuQuotaUnlimited(gates.disable_cpu_quota_with_exclusive_cpus, in));
}

}  // namespace

void ContainerToProto(const state::ContainerRecord& in, const FeatureGates& gates,
                      v1::ContainerAllocation* out) {
  HoldingsToProto(in, gates, out);
  out->set_container_id(in.container_id);
  out->set_cgroup(in.cgroup);
}

void AdmitReplyToProto(const engine::AdmitReply& in, const FeatureGates& gates,
                       v1::AdmitResponse* out) {
  out->set_admitted(in.admitted);
  out->set_reason(in.reason);
  out->set_message(in.message);
  for (const auto& c : in.containers) ContainerToProto(c, gates, out->add_containers());
  out->set_state_generation(in.generation);
  out->set_not_yet_durable(!in.durable);
}

void ExplainReplyToProto(const engine::ExplainReply& in, const FeatureGates& gates,
                         v1::ExplainResponse* out) {
  const admission::AdmissionResult& result = in.result;
  const hints::NumaIndex& numa = in.policy->numa;
  v1::AdmitResponse* decision = out->mutable_decision();
  decision->set_admitted(result.admitted);
  decision->set_reason(result.reason);
  decision->set_message(result.message);
  for (const state::ContainerRecord& c : result.containers) {
    HoldingsToProto(c, gates, decision->add_containers());
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
  if (explanation.numa_split.has_value()) {
    v1::NumaSplit* split = out->mutable_numa_split();
    split->set_placed_by_pod(explanation.numa_split->placed_by_pod);
    for (const admission::NumaCell& cell : explanation.numa_split->cells) {
      v1::NumaCell* c = split->add_cells();
      c->set_numa_node(cell.numa_node);
      c->set_cpus(cell.cpus);
      c->set_memory_bytes(cell.memory);
      c->set_cpu_set(cell.cpu_set.ToString());
    }
  }
}

absl::StatusOr<ExplainedResult> ExplainResponseToResult(const v1::ExplainResponse& in) {
  hints::NumaIndex numa = NumaOf(in);
  if (numa.ids().size() > static_cast<size_t>(hints::NumaMask::kMaxNodes)) {
    return absl::InvalidArgumentError(fmt::format("the reply names {} NUMA nodes; a mask holds {}",
                                                  numa.ids().size(), hints::NumaMask::kMaxNodes));
  }
  ExplainedResult out{.result = {}, .numa = std::move(numa)};
  admission::AdmissionResult& result = out.result;
  const v1::AdmitResponse& decision = in.decision();
  result.admitted = decision.admitted();
  result.reason = decision.reason();
  result.message = decision.message();
  for (const v1::ContainerAllocation& c : decision.containers()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(state::ContainerRecord container, ContainerFromProto(c));
    result.containers.push_back(std::move(container));
  }
  admission::Explanation& explanation = result.explanation;
  TOPOLOGYD_ASSIGN_OR_RETURN(explanation.policy, hints::ParsePolicy(in.policy()));
  if (in.scope() != admission::ScopeName(admission::Scope::kContainer) &&
      in.scope() != admission::ScopeName(admission::Scope::kPod)) {
    return absl::InvalidArgumentError(fmt::format("unknown scope \"{}\"", in.scope()));
  }
  explanation.scope = in.scope() == admission::ScopeName(admission::Scope::kPod)
                          ? admission::Scope::kPod
                          : admission::Scope::kContainer;
  explanation.notes = {in.notes().begin(), in.notes().end()};
  for (const v1::ContainerExplanation& e : in.containers()) {
    admission::MergeStep step{.providers = ProvidersFromProto(e.hints(), out.numa),
                              .merged = {.hint = HintOf(out.numa, e.merged()), .admit = e.admit()},
                              .limit_error = e.limit_error()};
    if (!e.name().empty()) step.container = e.name();
    explanation.merges.push_back(std::move(step));
  }
  if (in.has_numa_split()) {
    admission::NumaSplit split{.placed_by_pod = in.numa_split().placed_by_pod(), .cells = {}};
    for (const v1::NumaCell& c : in.numa_split().cells()) {
      absl::StatusOr<CpuSet> cpus = CpuSet::Parse(c.cpu_set());
      if (!cpus.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("numa_split: cpu_set: {}", cpus.status().message()));
      }
      split.cells.push_back(admission::NumaCell{.numa_node = c.numa_node(),
                                                .cpus = c.cpus(),
                                                .memory = c.memory_bytes(),
                                                .cpu_set = *std::move(cpus)});
    }
    explanation.numa_split = std::move(split);
  }
  return out;
}

void AllocationsToProto(const engine::AllocationsView& in, const FeatureGates& gates,
                        v1::ListAllocationsResponse* out) {
  out->set_reserved(in.reserved.ToString());
  out->set_shared_pool(in.shared_pool.ToString());
  out->set_state_generation(in.state.generation);
  for (const auto& [uid, pod] : in.state.pods) {
    v1::PodAllocation* p = out->add_pods();
    p->set_uid(pod.uid);
    p->set_namespace_(pod.namespace_name);
    p->set_name(pod.name);
    for (const auto& c : pod.containers) ContainerToProto(c, gates, p->add_containers());
  }
}

}  // namespace topologyd::rpc
