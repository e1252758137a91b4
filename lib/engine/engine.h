// Engine: the one owner of the daemon's mutable state: the current configuration, the
// machine topology, and (as admission lands) the allocation state. Every RPC handler and
// the signal thread go through it; it serialises changes under one mutex and hands out
// consistent snapshots (shared_ptr<const T>) for reads, so a reader never sees a half-made
// change.
//
// Thread-safety: all public methods are safe to call concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/config_diff.h"
#include "lib/topology/topology.h"

namespace topologyd::engine {

// Outcome of the last SIGHUP reload, for `topoctl status`.
struct ReloadRecord {
  bool ok = false;
  std::vector<std::string> applied_keys;
  std::vector<std::string> refused_keys;
  std::string error;  // the whole file was rejected (parse/validation), old config kept
  std::chrono::steady_clock::time_point at;
};

struct EngineStatus {
  std::chrono::steady_clock::duration uptime{};
  std::shared_ptr<const config::Config> config;
  std::optional<ReloadRecord> last_reload;
  uint64_t state_generation = 0;
  uint32_t admitted_pods = 0;
};

class Engine {
 public:
  Engine(std::shared_ptr<const config::Config> config,
         std::shared_ptr<const topology::Topology> topology);

  EngineStatus Status() const;
  std::shared_ptr<const config::Config> config() const;
  std::shared_ptr<const topology::Topology> topology() const;

  // Applies a re-read configuration: live keys take effect, restart-only changes are
  // refused and recorded, and a file that failed to load (`next` not OK) keeps the old
  // configuration. Returns what was recorded.
  ReloadRecord Reload(const absl::StatusOr<config::Config>& next);

 private:
  const std::chrono::steady_clock::time_point started_;
  mutable std::mutex mu_;
  std::shared_ptr<const config::Config> config_;              // guarded by mu_
  const std::shared_ptr<const topology::Topology> topology_;  // immutable for the daemon's life
  std::optional<ReloadRecord> last_reload_;                   // guarded by mu_
};

}  // namespace topologyd::engine
