// The engine the NodeResourceTopology publishers' tests run on: a synthetic two-socket machine,
// the static CPU policy with CPU 0 reserved, node name worker-7, its checkpoint under
// `state_dir`; no cgroups.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "lib/engine/engine.h"
#include "lib/state/file_system.h"
#include "lib/topology/hwloc_source.h"

namespace topologyd::testing {

inline absl::StatusOr<std::unique_ptr<engine::Engine>> StartPublisherTestEngine(
    const std::string& state_dir, state::FileSystem* fs, const std::string& topology_policy) {
  auto loaded =
      topology::LoadTopology(topology::TopologySource::Synthetic("pack:2 numa:1 core:4 pu:2"));
  if (!loaded.ok()) return loaded.status();
  config::Config config;
  config.state_dir = state_dir;
  config.cpu_manager_policy = "static";
  config.reserved_system_cpus = "0";
  config.topology_manager_policy = topology_policy;
  config.nrt.node_name = "worker-7";
  config.source_file = "test.yaml";
  engine::EngineOptions options;
  options.config = std::make_shared<const config::Config>(config);
  options.topology = std::make_shared<const topology::Topology>(*loaded);
  options.fs = fs;
  return engine::Engine::Start(std::move(options));
}

}  // namespace topologyd::testing
