#include "lib/pod/names.h"

#include <algorithm>
#include <string>

#include "lib/pod/pod.h"

namespace topologyd::pod {
namespace {

constexpr size_t kMaxLabelLength = 63;
constexpr size_t kMaxSubdomainLength = 253;
constexpr size_t kMaxUidLength = 64;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!IsDnsLabel(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsQualifiedName(std::string_view s) {
  std::string_view name = s;
  if (const size_t slash = s.find('/'); slash != std::string_view::npos) {
    if (!IsDnsSubdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  if (name.empty() || name.size() > kMaxLabelLength) return false;
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsApiPodUid(std::string_view uid) {
  return !uid.empty() && uid.size() <= kMaxUidLength &&
         std::all_of(uid.begin(), uid.end(), [](char c) { return IsAlnum(c) || c == '-'; });
}

bool IsDevicePluginResourceName(std::string_view name) {
  return name.find('/') != std::string_view::npos && IsExtendedResourceName(name) &&
         IsQualifiedName(name) && IsQualifiedName("requests." + std::string(name));
}

}  // namespace topologyd::pod
