// Name-based (version 5, SHA-1) UUIDs of RFC 4122, which give every provider a uuid derived
// from its name alone: a restart, or a second agent on the same node, converges on the same
// providers instead of creating new ones. util-linux's libuuid does the hashing and the text.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace topologyd::placement {

using Uuid = std::array<uint8_t, 16>;

// The RFC 4122 DNS namespace, 6ba7b810-9dad-11d1-80b4-00c04fd430c8.
inline constexpr Uuid kNamespaceDns = {0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1,
                                       0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

// uuid5(namespace, name).
Uuid Uuid5(const Uuid& name_space, std::string_view name);

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case.
std::string UuidText(const Uuid& uuid);

// Parses the hyphenated form (either case); nullopt when it is not one.
std::optional<Uuid> ParseUuid(std::string_view text);

// The uuid topologyd gives the provider `name`:
// uuid5(uuid5(NAMESPACE_DNS, "placement.topologyd.io"), name), as text.
std::string ProviderUuid(std::string_view name);

}  // namespace topologyd::placement
