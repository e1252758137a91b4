#include "lib/config/socket_keys.h"

#include <charconv>
#include <string>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::config {

void ReadSocketConfig(MapReader& s, SocketConfig* out) {
  std::string mode;
  if (s.Scalar("mode", &mode)) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(mode.data(), mode.data() + mode.size(), value, 8);
    if (mode.empty() || ec != std::errc() || ptr != mode.data() + mode.size() || value > 0777) {
      s.problems()->Add(
          s.Get("mode"), s.KeyPath("mode"),
          fmt::format("expected an octal mode such as \"0660\", got {}", QuoteForMessage(mode)));
    } else {
      out->mode = value;
    }
  }
  // "" keeps the daemon's own group; a key without a value is more likely a slip.
  if (YAML::Node g = s.Get("group"); g.IsDefined() && g.IsNull()) {
    s.problems()->Add(s.KeyNode("group"), s.KeyPath("group"),
                      "has no value; give a group, or \"\" to keep the daemon's own");
  }
  s.Scalar("group", &out->group);
  uint32_t cap = 0;
  if (s.Integer("maxConnectionsPerUid", &cap)) {
    if (cap == 0) {
      s.problems()->Add(s.Get("maxConnectionsPerUid"), s.KeyPath("maxConnectionsPerUid"),
                        "must be at least 1");
    } else {
      out->max_connections_per_uid = cap;
    }
  }
}

void ReadAllowedPeers(MapReader& p, AllowedPeers* out) {
  p.IntegerList("uids", &out->uids);
  p.IntegerList("gids", &out->gids);
  p.Bool("sameUser", &out->same_user);
}

}  // namespace topologyd::config
