// ParseDuration on arbitrary text (Go duration syntax in the configuration): no crash or
// exception, accepted values are not negative, and FormatDuration() parses back to the same
// value.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lib/config/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto duration = topologyd::config::ParseDuration(text);
  if (!duration.ok()) return 0;
  if (duration->count() < 0) abort();
  const std::string shown = topologyd::config::FormatDuration(*duration);
  const auto back = topologyd::config::ParseDuration(shown);
  if (!back.ok() || *back != *duration) {
    fprintf(stderr, "round trip failed: %lld ms -> %s\n", static_cast<long long>(duration->count()),
            shown.c_str());
    abort();
  }
  return 0;
}
