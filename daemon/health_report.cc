#include "daemon/health_report.h"

#include <utility>

namespace topologyd::daemon {

HealthReport::HealthReport(os::Notifier* notifier, std::function<void(bool serving)> set_serving)
    : notifier_(notifier), set_serving_(std::move(set_serving)) {}

void HealthReport::Update(bool healthy, const std::string& problem) {
  const std::string text = healthy ? "" : problem;
  if (healthy_ == healthy && problem_ == text) return;
  if (healthy_ != healthy) set_serving_(healthy);  // a new problem text alone changes STATUS= only
  healthy_ = healthy;
  problem_ = text;
  PublishStatus();
}

void HealthReport::SetReloadNote(const std::string& note) {
  reload_note_ = note;
  PublishStatus();
}

void HealthReport::PublishStatus() {
  line_ = healthy_.value_or(true) ? "serving" : "not acknowledging changes: " + problem_;
  if (!reload_note_.empty()) line_ += "; " + reload_note_;
  notifier_->Status(line_);
}

}  // namespace topologyd::daemon
