// IsPciBusId(): whether a string names a PCI device the way the kernel (sysfs) and hwloc do,
// "0000:3b:00.0" — domain:bus:device.function in lower-case hex, function 0-7. Used where a
// string from outside (a sysfs link, a device plugin's id) must be told apart from a bus id.
//
// Pure function; thread-safe.
#pragma once

#include <string_view>

namespace topologyd {

inline bool IsPciBusId(std::string_view s) {
  static constexpr std::string_view kShape = "xxxx:xx:xx.f";
  if (s.size() != kShape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (kShape[i]) {
      case 'x':
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        break;
      case 'f':
        if (c < '0' || c > '7') return false;
        break;
      default:
        if (c != kShape[i]) return false;
    }
  }
  return true;
}

}  // namespace topologyd
