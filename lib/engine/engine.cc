#include "lib/engine/engine.h"

namespace topologyd::engine {

Engine::Engine(std::shared_ptr<const config::Config> config,
               std::shared_ptr<const topology::Topology> topology)
    : started_(std::chrono::steady_clock::now()),
      config_(std::move(config)),
      topology_(std::move(topology)) {}

EngineStatus Engine::Status() const {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStatus status;
  status.uptime = std::chrono::steady_clock::now() - started_;
  status.config = config_;
  status.last_reload = last_reload_;
  return status;
}

std::shared_ptr<const config::Config> Engine::config() const {
  std::lock_guard<std::mutex> lock(mu_);
  return config_;
}

std::shared_ptr<const topology::Topology> Engine::topology() const { return topology_; }

ReloadRecord Engine::Reload(const absl::StatusOr<config::Config>& next) {
  std::lock_guard<std::mutex> lock(mu_);
  ReloadRecord record;
  record.at = std::chrono::steady_clock::now();
  if (!next.ok()) {
    record.ok = false;
    record.error = std::string(next.status().message());
  } else {
    config::ReloadPlan plan = config::PlanReload(*config_, *next);
    record.ok = plan.refused.empty();
    record.applied_keys = plan.applied;
    record.refused_keys = plan.refused;
    config_ = std::make_shared<const config::Config>(std::move(plan.effective));
  }
  last_reload_ = record;
  return record;
}

}  // namespace topologyd::engine
