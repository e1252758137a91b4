// ParseConfig on arbitrary text: no crash, no escaping exception, and it ends (yaml-cpp alone
// loops forever on some inputs, e.g. ","; see lib/config/yaml_documents.h).
#include <cstdint>
#include <string_view>

#include "lib/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)topologyd::config::ParseConfig(text, "fuzz.yaml");
  return 0;
}
