// SR-IOV parents from sysfs: hwloc reports virtual functions as ordinary PCI devices, and
// device pools with `virtualFunctions: true` need to know which devices are VFs. The kernel
// links a VF's directory to its physical function: /sys/bus/pci/devices/<vf>/physfn.
#pragma once

#include <optional>
#include <string>

namespace topologyd::topology {

// The bus id of the physical function `busid` is a virtual function of, read from the
// `physfn` link under `sysfs_root` (the machine's root directory: "" or "/" for the live
// machine, a fake tree in tests; the same root hwloc reads through HWLOC_FSROOT). nullopt
// when there is no such link (not a VF, or no sysfs entry) or it does not name a bus id.
std::optional<std::string> SriovPhysicalFunction(const std::string& sysfs_root,
                                                 const std::string& busid);

}  // namespace topologyd::topology
