// A machine picture as an SVG document: the layout of layout.h drawn as nested boxes, and
// optionally a node's allocations on it — reserved CPUs hatched, each pod's exclusive CPUs,
// memory nodes and devices in the pod's style (palette.h) — with a legend listing the pods.
// Every CPU and device carries a <title> tooltip saying what it is and who holds it.
//
// The document is for people, but its elements have stable handles for tools and tests:
//   <g class="cpu ..." id="cpu-ID" data-cpu="ID" [data-pod="I"]>   one per CPU; the class also
//       holds "reserved", "shared" (the shared pool), "pod" (exclusive to pod I) or "other";
//   <g class="core" id="core-PACKAGE-ID">, <g class="numa" id="numa-ID"> (CPUs on no NUMA node:
//       id="numa-none"), <g class="l3" id="l3-ID">, <g class="die" id="die-PACKAGE-ID">,
//       <g class="package" id="package-ID">: one per drawn box (layout.h says which levels are);
//   <g class="device ..." id="device-N" data-busid="BUS" [data-pod="I"]>: pci_devices[N];
//   <rect class="memory" data-pod="I" data-numa="ID">: pod I has memory on that node;
//   <g class="legend-pod" id="pod-I" data-uid="UID">: one per pod, in the drawing's order.
//
// Pure; thread-safe.
#pragma once

#include <string>

#include "lib/picture/allocations_drawing.h"
#include "lib/topology/topology.h"

namespace topologyd::picture {

// The document, starting with the XML declaration. `allocations` may be null: the machine alone.
std::string MachineSvg(const topology::Topology& machine,
                       const AllocationsDrawing* allocations = nullptr);

}  // namespace topologyd::picture
