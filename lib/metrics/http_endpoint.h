// MetricsEndpoint: serves /metrics in the Prometheus text format over HTTP on one TCP address,
// with prometheus-cpp's Exposer (civetweb underneath). Each scrape collects the given
// collectables on one of the endpoint's own threads; nothing of the daemon waits for it.
// Access is the listen address's: bind to loopback (the default in docs) unless a scraper on
// another host needs it, and then restrict the port with the host firewall.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace topologyd::metrics {

class MetricsEndpoint {
 public:
  // Listens on `listen` ("HOST:PORT", config::ParseListenAddress). UNAVAILABLE naming the
  // address when it cannot be bound (in use, not an address of this host).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> collect);
  ~MetricsEndpoint();  // stops listening and waits for scrapes in progress

  std::vector<int> ports() const { return exposer_->GetListeningPorts(); }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                  std::vector<std::shared_ptr<prometheus::Collectable>> collect);
  std::unique_ptr<prometheus::Exposer> exposer_;
  // The exposer holds weak pointers only.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
};

}  // namespace topologyd::metrics
