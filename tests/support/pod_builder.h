// Pods for tests, written the way a Pod manifest reads: the one place tests build pods and
// containers. A module's tests add only what is particular to them (e.g. the memory tests'
// container of N bytes and M 1Gi pages), built from these.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#include "lib/pod/pod.h"

namespace topologyd::testing {

inline pod::Quantity ParseQuantity(const std::string& text) {
  absl::StatusOr<pod::Quantity> q = pod::Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << "not a quantity: " << text;
  return q.ok() ? *q : pod::Quantity();
}

// A container with requests = limits of each resource, e.g. Ctr("app", {{"cpu", "2"},
// {"memory", "1Gi"}}): Guaranteed when cpu and memory are both given. `sidecar`: a restartable
// init container.
inline pod::Container Ctr(std::string name, const std::map<std::string, std::string>& resources,
                          bool sidecar = false) {
  pod::Container c;
  c.name = std::move(name);
  c.restart_always = sidecar;
  for (const auto& [resource, text] : resources) {
    c.requests[resource] = ParseQuantity(text);
    c.limits[resource] = ParseQuantity(text);
  }
  return c;
}

// The same with whole amounts (devices, bytes): Ctr("app", Counts{{"example.com/gpu", 2}}).
using Counts = std::vector<std::pair<std::string, int64_t>>;
inline pod::Container Ctr(std::string name, const Counts& resources, bool sidecar = false) {
  pod::Container c;
  c.name = std::move(name);
  c.restart_always = sidecar;
  for (const auto& [resource, amount] : resources) {
    c.requests[resource] = pod::Quantity::FromInt(amount);
    c.limits[resource] = pod::Quantity::FromInt(amount);
  }
  return c;
}

// A container without requests or limits: BestEffort.
inline pod::Container BestEffort(std::string name) {
  pod::Container c;
  c.name = std::move(name);
  return c;
}

// A container with limits only, as a Guaranteed pod is often written (the API server defaults
// requests from limits).
inline pod::Container Guaranteed(std::string name, const std::string& cpu,
                                 const std::string& memory) {
  pod::Container c;
  c.name = std::move(name);
  c.limits = {{"cpu", ParseQuantity(cpu)}, {"memory", ParseQuantity(memory)}};
  return c;
}

// A container with a CPU request (and a CPU limit when given): Burstable.
inline pod::Container Burstable(std::string name, const std::string& cpu_request,
                                const std::string& cpu_limit = "") {
  pod::Container c;
  c.name = std::move(name);
  c.requests = {{"cpu", ParseQuantity(cpu_request)}};
  if (!cpu_limit.empty()) c.limits = {{"cpu", ParseQuantity(cpu_limit)}};
  return c;
}

// Pod `uid` (default/pod-<uid>) with app containers `apps`, init containers `init` and
// `annotations`.
inline pod::Pod Pod(std::string uid, std::vector<pod::Container> apps,
                    std::vector<pod::Container> init = {},
                    std::map<std::string, std::string> annotations = {}) {
  pod::Pod p;
  p.namespace_name = "default";
  p.name = "pod-" + uid;
  p.uid = std::move(uid);
  p.annotations = std::move(annotations);
  p.containers = std::move(apps);
  p.init_containers = std::move(init);
  return p;
}

// uid "u1", ns/p, with init containers "init" and the sidecar "side", app containers "app"
// (2 CPUs) and "app2": a Guaranteed pod.
inline pod::Pod InitSidecarAndTwoApps() {
  pod::Pod p = Pod("u1",
                   {Ctr("app", {{"cpu", "2"}, {"memory", "64Mi"}}),
                    Ctr("app2", {{"cpu", "1"}, {"memory", "64Mi"}})},
                   {Ctr("init", {{"cpu", "1"}, {"memory", "64Mi"}}),
                    Ctr("side", {{"cpu", "1"}, {"memory", "64Mi"}}, /*sidecar=*/true)});
  p.namespace_name = "ns";
  p.name = "p";
  return p;
}

}  // namespace topologyd::testing
