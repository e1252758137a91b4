#include "lib/nrt/node_name.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace topologyd::nrt {

std::string NodeName(const std::string& configured) {
  if (!configured.empty()) return configured;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "localhost";
  std::string name(host);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

}  // namespace topologyd::nrt
