#include "tests/integration/kube_api/worker_node.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include <grpcpp/grpcpp.h>

#include "tests/support/containerd/subprocess.h"

namespace topologyd::testing::kube {
namespace {

void CallDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
}

// A v1 ResourceList ("cpu" -> "4", "memory" -> "3Gi") as the API's map of quantities.
void CopyQuantities(const nlohmann::json& list,
                    google::protobuf::Map<std::string, std::string>* out) {
  if (!list.is_object()) return;
  for (const auto& [resource, quantity] : list.items()) {
    (*out)[resource] = quantity.get<std::string>();
  }
}

}  // namespace

WorkerNode::WorkerNode(std::string name, std::string machine_xml, std::string dir)
    : name_(std::move(name)), machine_xml_(std::move(machine_xml)), dir_(std::move(dir)) {}

absl::Status WorkerNode::Start(const std::string& kubeconfig) {
  MakeFakeCgroupRoot(dir_ + "/cgroup");
  const std::string socket = dir_ + "/topologyd.sock";
  const std::string config = absl::StrCat(
      "listen: unix://", socket, "\nallowedPeers: {uids: [0], sameUser: true}\nstateDir: ", dir_,
      "/state\ntopology: {source: xml, path: ", machine_xml_,
      "}\n"
      "cpuManagerPolicy: static\n"
      "reservedSystemCPUs: \"",
      kReservedCpus,
      "\"\n"
      "topologyManagerPolicy: single-numa-node\n"
      "topologyManagerScope: pod\n"
      // Memory per NUMA node in the NodeResourceTopology object needs the Static policy; the
      // scheduler plugin refuses a pod asking for memory on a node whose zones lack it.
      "memoryManagerPolicy: Static\n"
      "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n",
      // Nothing is pinned: the containers exist only in the API server.
      "cgroup: {root: ", dir_, "/cgroup, driver: cgroupfs, version: v2, apply: false}\n",
      "nrt:\n  nodeName: ", name_, "\n  apiServer: {kubeconfig: ", kubeconfig, "}\n");
  WriteFile(dir_ + "/config.yaml", config);
  daemon_.Start(dir_ + "/config.yaml", dir_ + "/topologyd.log");
  if (!daemon_.WaitUntilServing(socket, std::chrono::seconds(60))) {
    return absl::InternalError(absl::StrCat("topologyd of ", name_, " did not serve:\n", log()));
  }
  stub_ = v1::Topologyd::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> WorkerNode::NodeObject() const {
  // The machine as topologyd will load it, read offline: the Node must exist before topologyd
  // publishes its NodeResourceTopology object, which the Node owns.
  const CommandResult shown =
      RunCommand({TopoctlBinary(), "topology", "--input", machine_xml_, "--output", "json"});
  if (shown.exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("topoctl topology --input ", machine_xml_, ": ", shown.err));
  }
  const nlohmann::json machine = nlohmann::json::parse(shown.out, nullptr, false);
  if (!machine.is_object()) return absl::InternalError("topoctl topology: " + shown.out);
  const long long cpus = machine.value("cpus", 0LL);
  long long memory = 0;
  for (const nlohmann::json& node : machine.value("numa_nodes", nlohmann::json::array())) {
    memory += node.value("memory_bytes", 0LL);
  }
  const auto resources = [](long long cpu, long long bytes) {
    return nlohmann::json{
        {"cpu", std::to_string(cpu)}, {"memory", std::to_string(bytes)}, {"pods", "110"}};
  };
  return nlohmann::json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name_}, {"labels", {{"kubernetes.io/hostname", name_}}}}},
      {"spec", nlohmann::json::object()},
      {"status",
       {{"capacity", resources(cpus, memory)},
        // kubelet's static CPU policy reserves whole CPUs: allocatable is what is left.
        {"allocatable", resources(cpus - 1, memory - kReservedMemoryBytes)},
        {"conditions",
         {{{"type", "Ready"},
           {"status", "True"},
           {"reason", "KubeletReady"},
           {"message", "topologyd cluster test"}}}}}}};
}

absl::StatusOr<v1::AdmitResponse> WorkerNode::Admit(const nlohmann::json& pod) {
  v1::AdmitRequest request;
  v1::Pod* out = request.mutable_pod();
  out->set_uid(pod["metadata"]["uid"].get<std::string>());
  out->set_namespace_(pod["metadata"]["namespace"].get<std::string>());
  out->set_name(pod["metadata"]["name"].get<std::string>());
  for (const nlohmann::json& c : pod["spec"]["containers"]) {
    v1::Container* container = out->add_containers();
    container->set_name(c["name"].get<std::string>());
    const nlohmann::json resources = c.value("resources", nlohmann::json::object());
    CopyQuantities(resources.value("requests", nlohmann::json()), container->mutable_requests());
    CopyQuantities(resources.value("limits", nlohmann::json()), container->mutable_limits());
  }
  grpc::ClientContext context;
  CallDeadline(context);
  v1::AdmitResponse response;
  grpc::Status status = stub_->Admit(&context, request, &response);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("Admit on ", name_, ": ", status.error_message()));
  }
  return response;
}

std::string WorkerNode::log() const {
  return containerd::Tail(ReadFile(dir_ + "/topologyd.log"), 4000);
}

}  // namespace topologyd::testing::kube
