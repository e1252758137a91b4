#include "lib/config/pod_resources_config.h"

#include <sys/un.h>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::config {

void ReadPodResources(MapReader& r, const std::function<std::string(const std::string&)>& resolve,
                      const std::string& main_socket, PodResourcesConfig* out) {
  const std::string key = r.KeyPath("listen");
  if (!r.Get("listen").IsDefined()) {
    r.problems()->Add(r.KeyNode("listen"), key,
                      "required (e.g. unix:///var/lib/topologyd/pod-resources/kubelet.sock); "
                      "leave podResources out to serve no PodResources socket");
  }
  r.Path("listen", &out->listen);
  if (r.Get("listen").IsDefined() && !out->listen.empty()) {
    if (out->listen.rfind("unix://", 0) != 0 || out->listen.size() <= 7) {
      r.problems()->Add(r.Get("listen"), key,
                        fmt::format("must be unix://PATH (e.g. "
                                    "unix:///var/lib/topologyd/pod-resources/kubelet.sock), got {}",
                                    QuoteForMessage(out->listen)));
    } else {
      const std::string socket = resolve(out->SocketPath());
      constexpr size_t kSunPathSize = sizeof(sockaddr_un::sun_path);
      if (socket.size() >= kSunPathSize) {
        r.problems()->Add(r.Get("listen"), key,
                          fmt::format("socket path \"{}\" is {} bytes; a Unix socket path must "
                                      "be shorter than {} bytes",
                                      EscapeForMessage(socket), socket.size(), kSunPathSize));
      } else if (socket == main_socket) {
        r.problems()->Add(r.Get("listen"), key,
                          fmt::format("{} is the topologyd API's socket (`listen`); give the "
                                      "PodResources API a socket of its own",
                                      EscapeForMessage(socket)));
      }
    }
  }
  if (r.Get("socket").IsDefined() && !r.Get("socket").IsNull()) {
    r.Nested("socket", [&](MapReader& s) { ReadSocketConfig(s, &out->socket.emplace()); });
  }
  if (r.Get("allowedPeers").IsDefined() && !r.Get("allowedPeers").IsNull()) {
    r.Nested("allowedPeers",
             [&](MapReader& p) { ReadAllowedPeers(p, &out->allowed_peers.emplace()); });
  }
}

void PlanPodResourcesReload(const Config& old, const Config& next, ReloadPlan* plan) {
  if (!old.pod_resources || !next.pod_resources) {
    if (old.pod_resources != next.pod_resources) plan->refused.push_back("podResources");
    return;
  }
  const PodResourcesConfig& was = *old.pod_resources;
  const PodResourcesConfig& now = *next.pod_resources;
  PodResourcesConfig& effective = *plan->effective.pod_resources;
  if (was.listen != now.listen) plan->refused.push_back("podResources.listen");
  if (was.allowed_peers != now.allowed_peers) {
    effective.allowed_peers = now.allowed_peers;
    plan->applied.push_back("podResources.allowedPeers");
  }
  if (was.socket.has_value() != now.socket.has_value()) {
    plan->refused.push_back("podResources.socket");
    return;
  }
  if (!was.socket) return;
  // The cap is read at every connection; mode and group bind the listener.
  if (was.socket->max_connections_per_uid != now.socket->max_connections_per_uid) {
    effective.socket->max_connections_per_uid = now.socket->max_connections_per_uid;
    plan->applied.push_back("podResources.socket.maxConnectionsPerUid");
  }
  SocketConfig binding = *now.socket;
  binding.max_connections_per_uid = was.socket->max_connections_per_uid;
  if (!(binding == *was.socket)) plan->refused.push_back("podResources.socket");
}

const SocketConfig& PodResourcesSocket(const Config& config) {
  return config.pod_resources->socket ? *config.pod_resources->socket : config.socket;
}

const AllowedPeers& PodResourcesPeers(const Config& config) {
  return config.pod_resources->allowed_peers ? *config.pod_resources->allowed_peers
                                             : config.allowed_peers;
}

}  // namespace topologyd::config
