#include "tests/unit/cpu/kubelet_topologies.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "lib/topology/hwloc_source.h"
#include "tests/support/cpuset_literal.h"

namespace topologyd::cpu::testing {

std::string SharedTopologiesDir() { return TOPOLOGYD_SHARED_TOPOLOGIES; }

bool HaveKubeletTopologies() {
  std::error_code ec;
  return std::filesystem::is_directory(SharedTopologiesDir() + "/kubelet-test", ec);
}

namespace {

// NumCPUs/NumCores/NumSockets/NumNUMANodes/NumUncoreCache of the Go literals (0 = unset).
const std::map<std::string, CpuCounters>& GoLiteralCounters() {
  static const std::map<std::string, CpuCounters> kCounters = {
      {"topoSingleSocketHT", {8, 4, 1, 0, 0}},
      {"topoDualSocketHT", {12, 6, 2, 0, 1}},
      {"topoDualSocketNoHT", {8, 8, 2, 2, 0}},
      {"topoTripleSocketHT", {18, 9, 3, 0, 0}},
      {"topoQuadSocketFourWayHT", {288, 72, 4, 0, 0}},
      {"topoDualSocketMultiNumaPerSocketHT", {80, 40, 2, 4, 0}},
      {"fakeTopoMultiSocketDualSocketPerNumaHT", {80, 40, 4, 2, 0}},
      {"topoDualSocketMultiNumaPerSocketHTLarge", {256, 128, 2, 8, 0}},
      {"topoUncoreDualSocketNoSMT", {16, 16, 2, 0, 4}},
      {"topoUncoreSingleSocketMultiNuma", {16, 16, 1, 0, 4}},
      {"topoUncoreSingleSocketSMT", {16, 8, 1, 0, 2}},
      {"topoUncoreSingleSocketNoSMT", {16, 16, 1, 0, 4}},
      {"topoDualSocketSingleNumaPerSocketSMTUncore", {384, 192, 2, 2, 24}},
      {"topoSingleSocketSingleNumaPerSocketSMTSmallUncore", {128, 64, 1, 1, 16}},
      {"topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore", {128, 64, 1, 1, 16}},
      {"topoSmallDualSocketSingleNumaPerSocketNoSMTUncore", {128, 64, 2, 2, 8}},
      {"topoLargeSingleSocketSingleNumaPerSocketSMTUncore", {256, 128, 1, 1, 16}},
      {"topoDualSocketMultiNumaPerSocketUncore", {192, 192, 2, 4, 24}},
      {"topoDualSocketSubNumaPerSocketHTMonolithicUncore", {240, 120, 2, 4, 2}},
      {"topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore", {24, 16, 1, 1, 1}},
      {"topoLargeSingleSocketSingleNumaPerSocketUncore", {128, 128, 1, 1, 16}},
      {"topoSingleSocketSingleNumaPerSocketUncore", {64, 64, 1, 1, 1}},
  };
  return kCounters;
}

}  // namespace

absl::StatusOr<CpuTopology> KubeletTopology(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, CpuTopology> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  auto counters = GoLiteralCounters().find(name);
  if (counters == GoLiteralCounters().end()) {
    return absl::NotFoundError("no Go literal counters for " + name);
  }
  topology::TopologySource source;
  source.kind = topology::TopologySource::Kind::kXml;
  source.path = SharedTopologiesDir() + "/kubelet-test/" + name + ".xml";
  absl::StatusOr<topology::Topology> machine = topology::LoadTopology(source);
  if (!machine.ok()) return machine.status();
  CpuTopology discovered = FromTopology(*machine);
  CpuTopology literal(counters->second, discovered.details(), discovered.numa());
  cache.emplace(name, literal);
  return literal;
}

CpuSet Cpus(const std::string& list) { return ::topologyd::testing::S(list); }

}  // namespace topologyd::cpu::testing
