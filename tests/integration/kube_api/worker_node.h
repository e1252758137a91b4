// One worker of the cluster test without a kubelet: a topologyd process on a recorded machine
// (hwloc XML) with kubelet's static CPU and Memory managers and the single-numa-node policy at
// pod scope, publishing its NodeResourceTopology object to the API server itself, and the Node
// object that machine makes (capacity and allocatable as kubelet would report them).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::kube {

// What every worker keeps for the system: CPU 0, and 1Gi of memory on NUMA node 0 (kubelet's
// reservedMemory; the Node's allocatable memory is the machine's less this).
inline constexpr char kReservedCpus[] = "0";
inline constexpr long long kReservedMemoryBytes = 1LL << 30;

class WorkerNode {
 public:
  // `name`: the Node's name; `machine_xml`: the recorded machine; `dir`: a directory the test
  // owns (short: it holds the socket).
  WorkerNode(std::string name, std::string machine_xml, std::string dir);
  WorkerNode(const WorkerNode&) = delete;
  WorkerNode& operator=(const WorkerNode&) = delete;

  // Starts topologyd with `nrt.apiServer.kubeconfig` set to `kubeconfig`; returns once it
  // serves, or an error with its log.
  absl::Status Start(const std::string& kubeconfig);

  // A v1 Node named name() whose capacity (cpu, memory, pods) is the machine's and whose
  // allocatable leaves out the reserved CPU and memory; Ready, schedulable, untainted.
  absl::StatusOr<nlohmann::json> NodeObject() const;

  // The Admit RPC for a v1 Pod as the API server holds it (its uid, name and containers'
  // resources), as a kubelet shim asks before the pod's first container.
  absl::StatusOr<v1::AdmitResponse> Admit(const nlohmann::json& pod);

  const std::string& name() const { return name_; }
  std::string log() const;

 private:
  std::string name_;
  std::string machine_xml_;
  std::string dir_;
  DaemonProcess daemon_;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
};

}  // namespace topologyd::testing::kube
