#include "daemon/health_report.h"

#include <utility>

namespace topologyd::daemon {

HealthReport::HealthReport(os::Notifier* notifier, std::function<void(bool serving)> set_serving)
    : notifier_(notifier), set_serving_(std::move(set_serving)) {}

void HealthReport::Update(bool healthy, const std::string& last_error) {
  const std::string error = healthy ? "" : last_error;
  if (healthy_ == healthy && last_error_ == error) return;
  if (healthy_ != healthy) set_serving_(healthy);  // a new error text alone changes STATUS= only
  healthy_ = healthy;
  last_error_ = error;
  PublishStatus();
}

void HealthReport::SetReloadNote(const std::string& note) {
  reload_note_ = note;
  PublishStatus();
}

void HealthReport::PublishStatus() {
  line_ = healthy_.value_or(true)
              ? "serving"
              : "not acknowledging changes: the state checkpoint cannot be written: " + last_error_;
  if (!reload_note_.empty()) line_ += "; " + reload_note_;
  notifier_->Status(line_);
}

}  // namespace topologyd::daemon
