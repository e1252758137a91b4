#include "lib/metrics/http_endpoint.h"

#include <exception>
#include <utility>

#include "fmt/format.h"

namespace topologyd::metrics {
namespace {

// Scrapes are rare and small: two threads serve a scraper and a person with curl at once.
constexpr const char* kThreads = "2";
// A client that connects and sends nothing gives its thread back after this.
constexpr const char* kRequestTimeoutMs = "10000";

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collect) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", kThreads,
                                 "request_timeout_ms", kRequestTimeoutMs});
  } catch (const std::exception& e) {
    // civetweb says only that it could not start; the usual cause is the port.
    return absl::UnavailableError(fmt::format(
        "metrics.listen: cannot listen on {} (is the port in use, or the address not one of "
        "this host's?): {}",
        listen, e.what()));
  }
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(exposer), std::move(collect)));
}

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                                 std::vector<std::shared_ptr<prometheus::Collectable>> collect)
    : exposer_(std::move(exposer)), collectables_(std::move(collect)) {
  for (const auto& c : collectables_) exposer_->RegisterCollectable(c);
}

MetricsEndpoint::~MetricsEndpoint() { exposer_.reset(); }

}  // namespace topologyd::metrics
