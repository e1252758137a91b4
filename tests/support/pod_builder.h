// Pods for tests, written the way a Pod manifest reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/pod/pod.h"

namespace topologyd::testing {

// A container with requests = limits of `cpu` and `memory` ("" = not set); `sidecar`: a
// restartable init container.
inline pod::Container GuaranteedContainer(std::string name, const std::string& cpu,
                                          const std::string& memory, bool sidecar = false) {
  pod::Container c;
  c.name = std::move(name);
  c.restart_always = sidecar;
  for (const auto& [resource, quantity] : {std::pair{"cpu", cpu}, std::pair{"memory", memory}}) {
    if (quantity.empty()) continue;
    c.requests[resource] = *pod::Quantity::Parse(quantity);
    c.limits[resource] = *pod::Quantity::Parse(quantity);
  }
  return c;
}

// uid "u1", default/p, with init containers "init" and the sidecar "side", app containers "app"
// (2 CPUs) and "app2": a Guaranteed pod.
inline pod::Pod InitSidecarAndTwoApps() {
  pod::Pod p;
  p.uid = "u1";
  p.namespace_name = "ns";
  p.name = "p";
  p.init_containers = {GuaranteedContainer("init", "1", "64Mi"),
                       GuaranteedContainer("side", "1", "64Mi", /*sidecar=*/true)};
  p.containers = {GuaranteedContainer("app", "2", "64Mi"),
                  GuaranteedContainer("app2", "1", "64Mi")};
  return p;
}

// A container with limits only, as a Guaranteed pod is often written (the API server defaults
// requests from limits).
inline pod::Container Guaranteed(const char* name, const char* cpu, const char* memory) {
  return {name,
          false,
          {},
          {{"cpu", *pod::Quantity::Parse(cpu)}, {"memory", *pod::Quantity::Parse(memory)}}};
}

// A container with a CPU request only: Burstable.
inline pod::Container Burstable(const char* name, const char* cpu) {
  return {name, false, {{"cpu", *pod::Quantity::Parse(cpu)}}, {}};
}

// Pod `uid`, default/pod-<uid>, of `containers`.
inline pod::Pod OnePod(const std::string& uid, std::vector<pod::Container> containers) {
  pod::Pod pod;
  pod.uid = uid;
  pod.namespace_name = "default";
  pod.name = "pod-" + uid;
  pod.containers = std::move(containers);
  return pod;
}

}  // namespace topologyd::testing
