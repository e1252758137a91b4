// Offline admission as `topoctl explain --input --config` runs it, on a fuzzed Pod manifest.
// The first byte picks the node (configuration x machine, % 5); the rest is the manifest. An
// accepted pod is explained, its result rendered as topoctl prints it (JSON and YAML), then
// admitted, admitted again on the new state (as after a restart) and released.
//
// Two nodes use machines from TOPOLOGYD_SHARED_TOPOLOGIES (devices, sparse NUMA ids); without
// that folder their inputs are skipped.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "lib/admission/admission.h"
#include "lib/admission/admission_json.h"
#include "lib/admission/node_policy.h"
#include "lib/config/config_loader.h"
#include "lib/config/node_policy_config.h"
#include "lib/pod/pod_manifest.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/durable_state.h"
#include "tools/topoctl/support_output.h"

using namespace topologyd;
using topologyd::testing::Durable;

namespace {

struct NodeSpec {
  const char* config;
  const char* synthetic;  // an hwloc synthetic description, or
  const char* xml;        // a file in TOPOLOGYD_SHARED_TOPOLOGIES
};

constexpr NodeSpec kNodes[] = {
    {.config = "cpuManagerPolicy: static\n"
               "reservedSystemCPUs: \"0\"\n"
               "topologyManagerPolicy: best-effort\n"
               "podPolicyOverride: true\n",
     .synthetic = "pack:2 numa:2 l3:1 core:4 pu:2"},
    {.config = "cpuManagerPolicy: static\n"
               "reservedSystemCPUs: \"0,16\"\n"
               "topologyManagerPolicy: single-numa-node\n"
               "memoryManagerPolicy: Static\n"
               "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
               "devices:\n"
               "  - resourceName: example.com/dev\n"
               "    devices: [{id: d0, numaNode: 0}, {id: d1, numaNode: 1},\n"
               "              {id: d2, numaNodes: [2, 3]}, {id: d3}]\n",
     .synthetic = "pack:2 numa:2(memory=8GB) l3:1 core:4 pu:2"},
    {.config = "cpuManagerPolicy: static\n"
               "cpuReservedCount: 2\n"
               "topologyManagerPolicy: restricted\n"
               "topologyManagerScope: pod\n"
               "topologyManagerPolicyOptions: {prefer-closest-numa-nodes: \"true\"}\n"
               "cpuManagerPolicyOptions: {full-pcpus-only: \"true\"}\n"
               "memoryManagerPolicy: Static\n"
               "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
               "podPolicyOverride: true\n"
               "devices:\n"
               "  - resourceName: nvidia.com/gpu\n"
               "    pci: {vendor: \"10de\"}\n",
     .xml = "intel-spr8480-2s-snc4-4xh100.xml"},
    {.config = "cpuManagerPolicy: none\n"
               "topologyManagerPolicy: none\n",
     .synthetic = "numa:2 pu:4"},
    {.config = "cpuManagerPolicy: static\n"
               "reservedSystemCPUs: \"0\"\n"
               "topologyManagerPolicy: best-effort\n"
               "topologyManagerPolicyOptions: {prefer-closest-numa-nodes: \"true\"}\n"
               "cpuManagerPolicyOptions: {distribute-cpus-across-numa: \"true\"}\n"
               "podPolicyOverride: true\n",
     .xml = "amd-opteron-4s-8numa-sparse-node-ids.xml"},
};
constexpr size_t kNumNodes = std::size(kNodes);

[[noreturn]] void Fail(const std::string& what, const absl::Status& status) {
  fprintf(stderr, "%s: %s\n", what.c_str(), std::string(status.message()).c_str());
  abort();
}

// The node of a NodeSpec; null when its machine is not available.
std::unique_ptr<admission::NodePolicy> BuildNode(const NodeSpec& spec) {
  topology::TopologySource source;
  if (spec.synthetic != nullptr) {
    source = topology::TopologySource::Synthetic(spec.synthetic);
  } else {
    const std::filesystem::path path =
        std::filesystem::path(TOPOLOGYD_SHARED_TOPOLOGIES) / spec.xml;
    if (!std::filesystem::exists(path)) {
      fprintf(stderr, "%s not found: inputs for its node are skipped\n", path.c_str());
      return nullptr;
    }
    source = topology::TopologySource::Xml(path.string());
  }
  const auto config = config::ParseConfig(spec.config, "fuzz.yaml");
  if (!config.ok()) Fail("config", config.status());
  const auto machine = topology::LoadTopology(source);
  if (!machine.ok()) Fail("topology", machine.status());
  auto node = config::BuildNodePolicy(*config, *machine);
  if (!node.ok()) Fail("node policy", node.status());
  return std::make_unique<admission::NodePolicy>(*std::move(node));
}

// Built once; never destroyed (the harness runs until the process exits).
const admission::NodePolicy* Node(size_t index) {
  static const auto* const nodes = [] {
    auto* built = new std::unique_ptr<admission::NodePolicy>[kNumNodes];
    for (size_t i = 0; i < kNumNodes; ++i) built[i] = BuildNode(kNodes[i]);
    return built;
  }();
  return nodes[index].get();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)Node(0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const admission::NodePolicy* node = Node(data[0] % kNumNodes);
  if (node == nullptr) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto pod = pod::ParsePodManifest(text);
  if (!pod.ok()) return 0;
  if (pod->uid.empty()) pod->uid = "fuzz-uid";  // as topoctl explain does

  const auto explained = admission::Explain(*node, node->empty_state, *pod);
  if (!explained.ok()) return 0;
  // Names from the manifest may be any bytes: rendering must not throw.
  const nlohmann::json doc =
      admission::AdmissionResultToJson(*node, *explained, /*with_explanation=*/true);
  (void)topoctl::RenderDocument(doc, topoctl::OutputFormat::kJson);
  (void)topoctl::RenderDocument(doc, topoctl::OutputFormat::kYaml);

  const auto admitted = admission::Admit(*node, node->empty_state, *pod);
  if (!admitted.ok()) Fail("Admit after a successful Explain", admitted.status());
  if (admitted->admitted != explained->admitted) {
    fprintf(stderr, "Explain and Admit disagree\n");
    abort();
  }
  if (!admitted->admitted) return 0;
  // Re-admission after a restart keeps what the pod holds. The reuse bookkeeping of init
  // containers is not part of that: kubelet keeps it in memory only, and its
  // updatePodReusableMemory subtracts an app container's memory from it again on every
  // re-admission (the init container's block already had it taken off).
  const auto again = admission::Admit(*node, admitted->new_state, *pod);
  if (!again.ok()) Fail("re-admission", again.status());
  if (again->admitted && !(Durable(again->new_state) == Durable(admitted->new_state))) {
    fprintf(stderr, "re-admission changed the state\n");
    abort();
  }
  if (!(admission::Release(*node, admitted->new_state, pod->uid) == node->empty_state)) {
    fprintf(stderr, "release did not restore the empty state\n");
    abort();
  }
  return 0;
}
