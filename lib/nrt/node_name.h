// The name of this node as the NodeResourceTopology object carries it.
#pragma once

#include <string>

namespace topologyd::nrt {

// `configured` when set; else this host's name, lowercased as kubelet lowercases it for its
// default node name (NFD's topology-updater takes NODE_NAME, which is that node name).
std::string NodeName(const std::string& configured);

}  // namespace topologyd::nrt
