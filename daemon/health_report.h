// HealthReport: publishes the engine's health where supervisors look, whenever it changes:
// the gRPC health service (NOT_SERVING while state checkpoint writes fail or hang, so probes
// and shims see that changes are not being acknowledged) and systemd's STATUS= line, which
// also carries the outcome of the last reload.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lib/os/notifier.h"

namespace topologyd::daemon {

class HealthReport {
 public:
  // `set_serving` switches the gRPC health service. `notifier` must outlive this object.
  HealthReport(os::Notifier* notifier, std::function<void(bool serving)> set_serving);

  // The engine's health now (`problem`, EngineStatus::problem, is ignored when healthy).
  // Publishes the first call and every change; repeating the same health publishes nothing.
  void Update(bool healthy, const std::string& problem);
  // The outcome of the latest reload, shown after the health in STATUS=; publishes it.
  void SetReloadNote(const std::string& note);

  // The STATUS= text last published.
  const std::string& status_line() const { return line_; }

 private:
  void PublishStatus();

  os::Notifier* notifier_;
  std::function<void(bool)> set_serving_;
  std::optional<bool> healthy_;  // unknown until the first Update
  std::string problem_;
  std::string reload_note_;
  std::string line_;
};

}  // namespace topologyd::daemon
