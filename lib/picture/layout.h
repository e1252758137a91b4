// Layout of a machine picture: nested boxes package > die > NUMA node > L3 group > core > CPU,
// with PCI devices under their NUMA node, placed on a plane in pixels. svg.h draws it.
//
// A level is drawn as boxes only where it nests: dies when every NUMA node's CPUs lie in one
// die, packages when they lie in one package, L3 groups below the NUMA nodes when each L3
// group lies in one NUMA node, or above them when each NUMA node lies in one L3 group (SNC).
// A level that does not nest is left out (its ids stay in the CPU tooltips), so that every
// NUMA node, core and CPU is exactly one box. CPUs on no NUMA node (memory-less dies) sit in
// a box of kind kNuma with id -1. CPU-less NUMA nodes are placed beside the CPU node nearest
// to them by distance (the first CPU node without distances). Devices local to no NUMA node
// go into one kUnplacedDevices box at the end.
//
// Sizes follow counts: CPUs are fixed-size cells, and each container wraps its children into
// a grid of about the aspect ratio that keeps 512-CPU, 64-NUMA machines readable on a screen.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "lib/topology/topology.h"

namespace topologyd::picture {

enum class BoxKind {
  kMachine,
  kPackage,
  kDie,
  kNuma,
  kL3,
  kCore,
  kCpu,
  kDevice,
  kUnplacedDevices,
};

// "machine", "package", "die", "numa", "l3", "core", "cpu", "device", "unplaced-devices": the
// class names the SVG gives the boxes.
std::string_view BoxKindName(BoxKind kind);

struct Rect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool Contains(const Rect& other) const {
    return other.x >= x && other.y >= y && other.x + other.width <= x + width &&
           other.y + other.height <= y + height;
  }
};

struct Box {
  BoxKind kind = BoxKind::kMachine;
  // OS id of the package, die, NUMA node, L3 group, core or CPU; for a device its position
  // in Topology::pci_devices; -1 for the machine, the no-NUMA box and the unplaced devices.
  int id = -1;
  int package_id = -1;  // dies and cores: their package (ids repeat across packages)
  std::string label;    // heading; empty for cores and CPUs
  Rect rect;            // absolute, in pixels
  std::vector<Box> children;
};

// Geometry shared by the layout and the renderer.
inline constexpr int kHeadingHeight = 14;  // a labelled box's heading band
inline constexpr int kCpuWidth = 20;
inline constexpr int kCpuHeight = 14;
inline constexpr int kDeviceWidth = 96;
inline constexpr int kDeviceHeight = 14;

// The machine's boxes; root.rect starts at (0, 0) and holds everything.
Box LayOutMachine(const topology::Topology& machine);

// The number of boxes of `kind` under (and including) `box`.
int CountBoxes(const Box& box, BoxKind kind);

// Short device text: "gpu 3b:00.0" (the domain dropped when it is 0000).
std::string DeviceLabel(const topology::PciDevice& device);

}  // namespace topologyd::picture
