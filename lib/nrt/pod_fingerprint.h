// The pods fingerprint of a NodeResourceTopology object (attribute
// `nodeTopologyPodsFingerprint`): a digest of the set of pods on the node, by namespace and
// name, which the NodeResourceTopologyMatch scheduler plugin recomputes from the pods it
// knows on the node; only when the two agree does it trust the object again after a failed
// placement. It must therefore equal, bit for bit, what the reference library
// (k8stopologyawareschedwg/podfingerprint, version "v001") computes for the same pods:
//   per pod  h = XXH64(name, seed = XXH64(namespace, seed 0));
//   the h sorted ascending, each fed as 8 little-endian bytes to one XXH64 (seed 0);
//   "pfp0" "v001" and the 16 lowercase hex digits of that digest, most significant first.
// The order in which pods are added does not matter.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace topologyd::nrt {

inline constexpr std::string_view kPodsFingerprintAttribute = "nodeTopologyPodsFingerprint";
// Which pods the fingerprint covers. "all": every pod topologyd holds, as every pod of the node
// passes through topologyd's admission; the scheduler then counts every pod bound to the node.
inline constexpr std::string_view kPodsFingerprintMethodAttribute =
    "nodeTopologyPodsFingerprintMethod";
inline constexpr std::string_view kPodsFingerprintMethodAll = "all";

class PodFingerprint {
 public:
  void Add(std::string_view namespace_name, std::string_view name);
  // "pfp0v001" + 16 hex digits.
  std::string Sign() const;

 private:
  std::vector<uint64_t> hashes_;
};

}  // namespace topologyd::nrt
