#include "lib/placement/uuid5.h"

#include <uuid/uuid.h>

#include <string>

namespace topologyd::placement {

Uuid Uuid5(const Uuid& name_space, std::string_view name) {
  Uuid uuid{};
  uuid_generate_sha1(uuid.data(), name_space.data(), name.data(), name.size());
  return uuid;
}

std::string UuidText(const Uuid& uuid) {
  char text[37];  // 36 characters and the terminating NUL uuid_unparse writes
  uuid_unparse_lower(uuid.data(), text);
  return std::string(text, 36);
}

std::optional<Uuid> ParseUuid(std::string_view text) {
  // uuid_parse also takes a string that merely starts with a uuid: insist on exactly one.
  if (text.size() != 36) return std::nullopt;
  const std::string terminated(text);
  Uuid uuid{};
  if (uuid_parse(terminated.c_str(), uuid.data()) != 0) return std::nullopt;
  return uuid;
}

std::string ProviderUuid(std::string_view name) {
  static const Uuid kTopologydNamespace = Uuid5(kNamespaceDns, "placement.topologyd.io");
  return UuidText(Uuid5(kTopologydNamespace, name));
}

}  // namespace topologyd::placement
