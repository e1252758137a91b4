#include "lib/topology/sriov_sysfs.h"

#include <unistd.h>

#include <array>
#include <string_view>

#include "lib/common/pci_bus_id.h"

namespace topologyd::topology {

std::optional<std::string> SriovPhysicalFunction(const std::string& sysfs_root,
                                                 const std::string& busid) {
  // The bus id comes from hwloc; checking its shape keeps the path inside the devices dir.
  if (!IsPciBusId(busid)) return std::nullopt;
  std::string root = sysfs_root;
  while (!root.empty() && root.back() == '/') root.pop_back();
  const std::string link = root + "/sys/bus/pci/devices/" + busid + "/physfn";
  std::array<char, 4096> target{};
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n <= 0) return std::nullopt;  // not a VF (ENOENT), or not a link (EINVAL)
  // The link is relative, e.g. "../0000:3b:00.0"; its last component is the PF.
  std::string_view path(target.data(), static_cast<size_t>(n));
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  std::string_view parent = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!IsPciBusId(parent)) return std::nullopt;
  return std::string(parent);
}

}  // namespace topologyd::topology
