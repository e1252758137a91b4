#include "lib/rpc/topology_proto.h"

#include "lib/common/status_macros.h"

namespace topologyd::rpc {
namespace {

namespace v1 = ::topologyd::v1;
using topology::DeviceKind;

v1::DeviceKind KindToProto(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return v1::DEVICE_KIND_GPU;
    case DeviceKind::kNetwork:
      return v1::DEVICE_KIND_NETWORK;
    case DeviceKind::kStorage:
      return v1::DEVICE_KIND_STORAGE;
    case DeviceKind::kAccelerator:
      return v1::DEVICE_KIND_ACCELERATOR;
    case DeviceKind::kOther:
      return v1::DEVICE_KIND_OTHER;
  }
  return v1::DEVICE_KIND_OTHER;
}

DeviceKind KindFromProto(v1::DeviceKind kind) {
  switch (kind) {
    case v1::DEVICE_KIND_GPU:
      return DeviceKind::kGpu;
    case v1::DEVICE_KIND_NETWORK:
      return DeviceKind::kNetwork;
    case v1::DEVICE_KIND_STORAGE:
      return DeviceKind::kStorage;
    case v1::DEVICE_KIND_ACCELERATOR:
      return DeviceKind::kAccelerator;
    default:
      return DeviceKind::kOther;
  }
}

}  // namespace

void TopologyToProto(const topology::Topology& in, v1::Topology* out) {
  out->Clear();
  for (const auto& p : in.packages) {
    auto* m = out->add_packages();
    m->set_id(p.id);
    m->set_cpus(p.cpus.ToString());
  }
  for (const auto& d : in.dies) {
    auto* m = out->add_dies();
    m->set_id(d.id);
    m->set_package_id(d.package_id);
    m->set_cpus(d.cpus.ToString());
  }
  for (const auto& n : in.numa_nodes) {
    auto* m = out->add_numa_nodes();
    m->set_id(n.id);
    m->set_cpus(n.cpus.ToString());
    m->set_memory_bytes(n.memory_bytes);
    for (const auto& h : n.hugepages) {
      auto* hp = m->add_hugepages();
      hp->set_size_kib(h.size_kib);
      hp->set_count(h.count);
    }
    for (uint32_t d : n.distances) m->add_distances(d);
  }
  for (const auto& c : in.cores) {
    auto* m = out->add_cores();
    m->set_id(c.id);
    m->set_package_id(c.package_id);
    m->set_cpus(c.cpus.ToString());
  }
  for (const auto& c : in.cpus) {
    auto* m = out->add_cpus();
    m->set_id(c.id);
    m->set_core_id(c.core_id);
    m->set_package_id(c.package_id);
    m->set_die_id(c.die_id);
    m->set_numa_id(c.numa_id);
    m->set_l3_id(c.l3_id);
  }
  for (const auto& l : in.l3_groups) {
    auto* m = out->add_l3_groups();
    m->set_id(l.id);
    m->set_cpus(l.cpus.ToString());
  }
  for (const auto& d : in.pci_devices) {
    auto* m = out->add_pci_devices();
    m->set_busid(d.busid);
    m->set_vendor_id(d.vendor_id);
    m->set_device_id(d.device_id);
    m->set_class_id(d.class_id);
    m->set_kind(KindToProto(d.kind));
    for (int n : d.numa_nodes) m->add_numa_nodes(n);
    if (d.physfn_busid) m->set_physfn_busid(*d.physfn_busid);
  }
  out->set_kubelet_test_map(in.kubelet_test_map);
}

absl::StatusOr<topology::Topology> TopologyFromProto(const v1::Topology& in) {
  topology::Topology t;
  for (const auto& m : in.packages()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CpuSet cpus, CpuSet::Parse(m.cpus()));
    t.packages.push_back({.id = m.id(), .cpus = cpus});
  }
  for (const auto& m : in.dies()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CpuSet cpus, CpuSet::Parse(m.cpus()));
    t.dies.push_back({.id = m.id(), .package_id = m.package_id(), .cpus = cpus});
  }
  for (const auto& m : in.numa_nodes()) {
    topology::NumaNode n;
    n.id = m.id();
    TOPOLOGYD_ASSIGN_OR_RETURN(n.cpus, CpuSet::Parse(m.cpus()));
    n.memory_bytes = m.memory_bytes();
    for (const auto& h : m.hugepages()) n.hugepages.push_back({h.size_kib(), h.count()});
    n.distances.assign(m.distances().begin(), m.distances().end());
    t.numa_nodes.push_back(std::move(n));
  }
  for (const auto& m : in.cores()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CpuSet cpus, CpuSet::Parse(m.cpus()));
    t.cores.push_back({.id = m.id(), .package_id = m.package_id(), .cpus = cpus});
  }
  for (const auto& m : in.cpus()) {
    t.cpus.push_back({.id = m.id(),
                      .core_id = m.core_id(),
                      .package_id = m.package_id(),
                      .die_id = m.die_id(),
                      .numa_id = m.numa_id(),
                      .l3_id = m.l3_id()});
  }
  for (const auto& m : in.l3_groups()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(CpuSet cpus, CpuSet::Parse(m.cpus()));
    t.l3_groups.push_back({.id = m.id(), .cpus = cpus});
  }
  for (const auto& m : in.pci_devices()) {
    topology::PciDevice d;
    d.busid = m.busid();
    d.vendor_id = static_cast<uint16_t>(m.vendor_id());
    d.device_id = static_cast<uint16_t>(m.device_id());
    d.class_id = static_cast<uint16_t>(m.class_id());
    d.kind = KindFromProto(m.kind());
    d.numa_nodes.assign(m.numa_nodes().begin(), m.numa_nodes().end());
    if (!m.physfn_busid().empty()) d.physfn_busid = m.physfn_busid();
    t.pci_devices.push_back(std::move(d));
  }
  t.kubelet_test_map = in.kubelet_test_map();
  return t;
}

}  // namespace topologyd::rpc
