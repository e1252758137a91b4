#include "lib/picture/layout.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <utility>

#include "fmt/format.h"

namespace topologyd::picture {
namespace {

namespace topo = topology;

using Key = std::pair<int, int>;
using KeyOf = std::function<Key(const topo::Cpu&)>;

struct Level {
  BoxKind kind;
  KeyOf key;
};

Key PackageKey(const topo::Cpu& c) { return {c.package_id, 0}; }
Key DieKey(const topo::Cpu& c) { return {c.package_id, c.die_id}; }
Key NumaKey(const topo::Cpu& c) { return {c.numa_id, 0}; }
Key L3Key(const topo::Cpu& c) { return {c.l3_id, 0}; }
Key CoreKey(const topo::Cpu& c) { return {c.core_id, c.package_id}; }
Key CpuKey(const topo::Cpu& c) { return {c.id, 0}; }

// True when the CPUs of each `inner` group all share one `outer` group.
bool NestsIn(const std::vector<topo::Cpu>& cpus, const KeyOf& inner, const KeyOf& outer) {
  std::map<Key, Key> outer_of;
  for (const topo::Cpu& c : cpus) {
    auto [it, added] = outer_of.emplace(inner(c), outer(c));
    if (!added && it->second != outer(c)) return false;
  }
  return true;
}

// Which levels get boxes on this machine, outermost first (see layout.h).
std::vector<Level> DrawnLevels(const topo::Topology& m) {
  const auto& cpus = m.cpus;
  const bool dies = !m.dies.empty() && std::all_of(cpus.begin(), cpus.end(), [](const auto& c) {
    return c.die_id >= 0;
  }) && NestsIn(cpus, NumaKey, DieKey);
  const bool packages = NestsIn(cpus, NumaKey, PackageKey);
  const bool l3_known =
      !m.l3_groups.empty() &&
      std::all_of(cpus.begin(), cpus.end(), [](const auto& c) { return c.l3_id >= 0; }) &&
      NestsIn(cpus, CoreKey, L3Key);
  const bool l3_below = l3_known && NestsIn(cpus, L3Key, NumaKey);
  const KeyOf upper = dies ? KeyOf(DieKey) : packages ? KeyOf(PackageKey) : KeyOf();
  const bool l3_above = l3_known && !l3_below && NestsIn(cpus, NumaKey, L3Key) &&
                        (!upper || NestsIn(cpus, L3Key, upper));
  std::vector<Level> levels;
  if (packages) levels.push_back({BoxKind::kPackage, PackageKey});
  if (dies) levels.push_back({BoxKind::kDie, DieKey});
  if (l3_above) levels.push_back({BoxKind::kL3, L3Key});
  levels.push_back({BoxKind::kNuma, NumaKey});
  if (l3_below) levels.push_back({BoxKind::kL3, L3Key});
  levels.push_back({BoxKind::kCore, CoreKey});
  levels.push_back({BoxKind::kCpu, CpuKey});
  return levels;
}

std::string Bytes(uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  if (bytes >= uint64_t{1} << 30) {
    const double gib = static_cast<double>(bytes) / kGiB;
    return gib >= 100 || gib == std::floor(gib) ? fmt::format("{:.0f} GiB", gib)
                                                : fmt::format("{:.1f} GiB", gib);
  }
  return fmt::format("{} MiB", bytes >> 20);
}

std::string NumaLabel(const topo::Topology& m, int id) {
  if (id < 0) return "no NUMA node";
  const topo::NumaNode* node = m.FindNuma(id);
  std::string label = fmt::format("NUMA {}", id);
  if (node == nullptr) return label;
  if (!node->subtype.empty()) label += " " + node->subtype;
  if (node->memory_bytes > 0) label += " · " + Bytes(node->memory_bytes);
  if (node->cpus.IsEmpty()) label += " · no CPUs";
  return label;
}

std::string Label(const topo::Topology& m, BoxKind kind, const Key& key) {
  switch (kind) {
    case BoxKind::kPackage:
      return fmt::format("Package {}", key.first);
    case BoxKind::kDie:
      return fmt::format("Die {}", key.second);
    case BoxKind::kNuma:
      return NumaLabel(m, key.first);
    case BoxKind::kL3:
      return fmt::format("L3 {}", key.first);
    default:
      return "";
  }
}

// Boxes of `levels[index]` for `cpus`, with their contents.
std::vector<Box> Group(const topo::Topology& m, const std::vector<Level>& levels, size_t index,
                       const std::vector<const topo::Cpu*>& cpus) {
  const Level& level = levels[index];
  std::map<Key, std::vector<const topo::Cpu*>> groups;
  for (const topo::Cpu* c : cpus) groups[level.key(*c)].push_back(c);
  std::vector<Box> boxes;
  for (const auto& entry : groups) {
    Box box{
        .kind = level.kind, .id = entry.first.first, .label = Label(m, level.kind, entry.first)};
    if (level.kind == BoxKind::kDie || level.kind == BoxKind::kCore) {
      box.id = level.kind == BoxKind::kDie ? entry.first.second : entry.first.first;
      box.package_id = level.kind == BoxKind::kDie ? entry.first.first : entry.first.second;
    }
    if (index + 1 < levels.size()) box.children = Group(m, levels, index + 1, entry.second);
    boxes.push_back(std::move(box));
  }
  return boxes;
}

// The box of NUMA node `id` under `box`, and its parent; {nullptr, nullptr} when absent.
std::pair<Box*, Box*> FindNuma(Box& box, int id) {
  for (Box& child : box.children) {
    if (child.kind == BoxKind::kNuma && child.id == id) return {&child, &box};
    auto found = FindNuma(child, id);
    if (found.first != nullptr) return found;
  }
  return {nullptr, nullptr};
}

// The CPU node a CPU-less node `node` is drawn beside: the nearest by distance, ties and
// unknown distances to the lowest id; -1 when the machine has no CPU node.
int HomeOf(const topo::Topology& m, const topo::NumaNode& node) {
  int home = -1;
  uint32_t best = UINT_MAX;
  for (const topo::NumaNode& other : m.numa_nodes) {
    if (other.cpus.IsEmpty()) continue;
    const uint32_t d = m.Distance(node.id, other.id).value_or(UINT_MAX - 1);
    if (home < 0 || d < best) {
      home = other.id;
      best = d;
    }
  }
  return home;
}

void AddCpulessNodes(const topo::Topology& m, Box& root) {
  for (const topo::NumaNode& node : m.numa_nodes) {
    if (!node.cpus.IsEmpty()) continue;
    Box box{.kind = BoxKind::kNuma, .id = node.id, .label = NumaLabel(m, node.id)};
    auto [home, parent] = FindNuma(root, HomeOf(m, node));
    if (home == nullptr) {
      root.children.push_back(std::move(box));
      continue;
    }
    // Beside its home, after the CPU-less nodes already placed there.
    auto it = parent->children.begin() + (home - parent->children.data()) + 1;
    while (it != parent->children.end() && it->kind == BoxKind::kNuma &&
           m.FindNuma(it->id) != nullptr && m.FindNuma(it->id)->cpus.IsEmpty()) {
      ++it;
    }
    parent->children.insert(it, std::move(box));
  }
}

void AddDevices(const topo::Topology& m, Box& root) {
  Box unplaced{.kind = BoxKind::kUnplacedDevices, .label = "Devices without NUMA locality"};
  for (size_t i = 0; i < m.pci_devices.size(); ++i) {
    const topo::PciDevice& d = m.pci_devices[i];
    Box device{.kind = BoxKind::kDevice, .id = static_cast<int>(i), .label = DeviceLabel(d)};
    Box* numa = d.numa_nodes.empty() ? nullptr : FindNuma(root, d.numa_nodes.front()).first;
    (numa != nullptr ? numa : &unplaced)->children.push_back(std::move(device));
  }
  if (!unplaced.children.empty()) root.children.push_back(std::move(unplaced));
}

// Text width estimate for headings (9 px sans-serif), generous so labels never overflow.
int TextWidth(const std::string& text) {
  int chars = 0;
  for (unsigned char ch : text) chars += (ch & 0xC0) != 0x80;  // count UTF-8 code points
  return chars * 6;
}

// "1 package", "2 packages".
std::string Count(size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

bool Labelled(const Box& box) { return box.kind != BoxKind::kCore && box.kind != BoxKind::kCpu; }

// Columns for a run of `n` children averaging w x h, aiming at `aspect` (width / height),
// then evened out so the last row is not much shorter than the others.
int Columns(size_t n, double w, double h, double aspect) {
  const int count = static_cast<int>(n);
  const int target = std::clamp(
      static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n) * aspect * h / w))), 1, count);
  // Near the target, the column count that leaves the fewest empty cells (64 nodes: 8 x 8,
  // not 7 x 9 and a lone last one); ties go to the target.
  int best = target;
  int best_empty = INT_MAX;
  for (int cols = std::max(1, target - 1); cols <= std::min(count, target + 1); ++cols) {
    const int rows = (count + cols - 1) / cols;
    const int empty = rows * cols - count;
    if (empty < best_empty ||
        (empty == best_empty && std::abs(cols - target) < std::abs(best - target))) {
      best = cols;
      best_empty = empty;
    }
  }
  const int rows = (count + best - 1) / best;
  return (count + rows - 1) / rows;
}

// Sets the size of `box` and the positions of its children relative to it.
void Measure(Box& box) {
  if (box.kind == BoxKind::kCpu) {
    box.rect.width = kCpuWidth;
    box.rect.height = kCpuHeight;
    return;
  }
  if (box.kind == BoxKind::kDevice) {
    box.rect.width = kDeviceWidth;
    box.rect.height = kDeviceHeight;
    return;
  }
  for (Box& child : box.children) Measure(child);
  const bool core = box.kind == BoxKind::kCore;
  const int pad = core ? 2 : 4;
  const int gap = core ? 1 : box.kind == BoxKind::kMachine ? 10 : 4;
  // Room for the heading and, on NUMA nodes, a few memory marks beside it.
  int width = Labelled(box) ? TextWidth(box.label) + (box.kind == BoxKind::kNuma ? 44 : 0) : 0;
  int y = (Labelled(box) ? kHeadingHeight : 0) + pad;
  // Devices start a run of their own below the other children.
  size_t begin = 0;
  while (begin < box.children.size()) {
    const bool devices = box.children[begin].kind == BoxKind::kDevice;
    size_t end = begin;
    double sum_w = 0, sum_h = 0;
    while (end < box.children.size() && (box.children[end].kind == BoxKind::kDevice) == devices) {
      sum_w += box.children[end].rect.width;
      sum_h += box.children[end].rect.height;
      ++end;
    }
    const size_t n = end - begin;
    int cols;
    if (core) {
      cols = std::min<int>(static_cast<int>(n), 4);
    } else if (devices) {
      cols =
          std::clamp(std::max(width, kDeviceWidth) / (kDeviceWidth + gap), 1, static_cast<int>(n));
    } else {
      // The aspect ratio a grid aims at: cores in long rows inside their NUMA node; packages
      // nearly square, as their NUMA nodes already sit side by side (two wide packages are
      // better stacked than in one very wide row); everything else a little wider than high.
      const BoxKind kind = box.children[begin].kind;
      const bool cores = kind == BoxKind::kCore;
      cols = Columns(n, sum_w / n, sum_h / n, cores ? 3.0 : kind == BoxKind::kPackage ? 1.0 : 1.6);
      if (cores) cols = std::min(cols, 16);
    }
    // A grid of equal cells: boxes of one kind line up, and labelled boxes (NUMA nodes,
    // packages, ...) fill their cell so that rows and columns read as such.
    int widest = 0;
    for (size_t i = begin; i < end; ++i) widest = std::max(widest, box.children[i].rect.width);
    const size_t rows = (n + cols - 1) / cols;
    std::vector<int> row_height(rows, 0);
    for (size_t i = begin; i < end; ++i) {
      int& h = row_height[(i - begin) / cols];
      h = std::max(h, box.children[i].rect.height);
    }
    for (size_t i = begin; i < end; ++i) {
      Box& child = box.children[i];
      const size_t row = (i - begin) / cols;
      const size_t col = (i - begin) % cols;
      child.rect.x = pad + static_cast<int>(col) * (widest + gap);
      child.rect.y = y;
      if (Labelled(child) && child.kind != BoxKind::kDevice) {
        child.rect.width = widest;
        child.rect.height = row_height[row];
      }
      if (col + 1 == static_cast<size_t>(cols) || i + 1 == end) y += row_height[row] + gap;
    }
    width = std::max(width, cols * (widest + gap) - gap);
    begin = end;
  }
  if (box.children.empty()) y += gap;
  box.rect.width = width + 2 * pad;
  box.rect.height = y - gap + pad;
}

void MakeAbsolute(Box& box, int dx, int dy) {
  box.rect.x += dx;
  box.rect.y += dy;
  for (Box& child : box.children) MakeAbsolute(child, box.rect.x, box.rect.y);
}

}  // namespace

std::string_view BoxKindName(BoxKind kind) {
  switch (kind) {
    case BoxKind::kMachine:
      return "machine";
    case BoxKind::kPackage:
      return "package";
    case BoxKind::kDie:
      return "die";
    case BoxKind::kNuma:
      return "numa";
    case BoxKind::kL3:
      return "l3";
    case BoxKind::kCore:
      return "core";
    case BoxKind::kCpu:
      return "cpu";
    case BoxKind::kDevice:
      return "device";
    case BoxKind::kUnplacedDevices:
      return "unplaced-devices";
  }
  return "box";
}

std::string DeviceLabel(const topo::PciDevice& device) {
  std::string_view kind;
  switch (device.kind) {
    case topo::DeviceKind::kGpu:
      kind = "gpu";
      break;
    case topo::DeviceKind::kNetwork:
      kind = "net";
      break;
    case topo::DeviceKind::kStorage:
      kind = "disk";
      break;
    case topo::DeviceKind::kAccelerator:
      kind = "accel";
      break;
    case topo::DeviceKind::kOther:
      kind = "pci";
      break;
  }
  std::string_view bus = device.busid;
  if (bus.substr(0, 5) == "0000:") bus.remove_prefix(5);
  return fmt::format("{}{} {}", kind, device.physfn_busid ? " vf" : "", bus);
}

Box LayOutMachine(const topo::Topology& m) {
  const std::vector<Level> levels = DrawnLevels(m);
  std::vector<const topo::Cpu*> cpus;
  for (const topo::Cpu& c : m.cpus) cpus.push_back(&c);
  Box root{.kind = BoxKind::kMachine,
           .label = fmt::format("Machine · {} · {} · {} · {}", Count(m.packages.size(), "package"),
                                Count(m.numa_nodes.size(), "NUMA node"),
                                Count(m.cores.size(), "core"), Count(m.cpus.size(), "CPU"))};
  if (!cpus.empty()) root.children = Group(m, levels, 0, cpus);
  AddCpulessNodes(m, root);
  AddDevices(m, root);
  Measure(root);
  MakeAbsolute(root, 0, 0);
  return root;
}

int CountBoxes(const Box& box, BoxKind kind) {
  int n = box.kind == kind ? 1 : 0;
  for (const Box& child : box.children) n += CountBoxes(child, kind);
  return n;
}

}  // namespace topologyd::picture
