// topoctl containers [--runtime-endpoint ENDPOINT] [--cgroup-root DIR] [--json]: one row per
// admitted container — its pod, topologyd's CPUs and memory nodes, the runtime container it
// is bound to — and, for each bound container, whether the cgroup's cpuset and (with
// --runtime-endpoint) the runtime's stored cpuset agree with topologyd's decision
// (docs/cli.md, `containers`).
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include <grpcpp/grpcpp.h>

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_cpuset_check.h"
#include "tools/topoctl/support_output.h"

#include "cri/v1/runtime.grpc.pb.h"

namespace topoctl {
namespace {

namespace v1 = ::topologyd::v1;

struct ContainersOptions {
  std::string runtime_endpoint;
  std::string cgroup_root;
  bool json = false;
};

// The whole file, whitespace trimmed; nullopt with `why` when it cannot be read.
std::optional<std::string> ReadTrimmed(const std::string& path, std::string* why) {
  std::ifstream in(path);
  if (!in) {
    *why = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

CpusetReading ReadCgroup(const std::string& root, const std::string& cgroup) {
  CpusetReading reading;
  const std::string dir = root + "/" + cgroup;
  std::optional<std::string> cpus = ReadTrimmed(dir + "/cpuset.cpus", &reading.unknown);
  if (!cpus) return reading;
  std::optional<std::string> mems = ReadTrimmed(dir + "/cpuset.mems", &reading.unknown);
  if (!mems) return reading;
  reading.cpus = *cpus;
  reading.mems = *mems;
  return reading;
}

CpusetReading ReadRuntime(runtime::v1::RuntimeService::Stub& runtime,
                          const std::string& container_id) {
  CpusetReading reading;
  runtime::v1::ContainerStatusRequest request;
  request.set_container_id(container_id);
  runtime::v1::ContainerStatusResponse response;
  grpc::Status s =
      runtime.ContainerStatus(CallContext(std::chrono::seconds(10)).get(), request, &response);
  if (!s.ok()) {
    reading.unknown = fmt::format("runtime: {}", s.error_message());
    return reading;
  }
  if (!response.status().has_resources() || !response.status().resources().has_linux()) {
    reading.unknown = "the runtime reports no resources for the container";
    return reading;
  }
  reading.cpus = response.status().resources().linux().cpuset_cpus();
  reading.mems = response.status().resources().linux().cpuset_mems();
  return reading;
}

// The directory binding paths are relative to: --cgroup-root, else the daemon's cgroup root
// (its cpuset hierarchy on cgroup v1).
std::string CgroupRoot(const ContainersOptions& o, const v1::StatusResponse& status) {
  if (!o.cgroup_root.empty()) return o.cgroup_root;
  const std::string& root = status.cgroup().root();
  return status.cgroup().version() == "v1" ? root + "/cpuset" : root;
}

nlohmann::json ContainersToJson(const v1::ListAllocationsResponse& list, const std::string& root,
                                runtime::v1::RuntimeService::Stub* runtime) {
  nlohmann::json rows = nlohmann::json::array();
  for (const v1::PodAllocation& pod : list.pods()) {
    for (const v1::ContainerAllocation& c : pod.containers()) {
      const std::vector<int> mems(c.memory_numa().begin(), c.memory_numa().end());
      nlohmann::json row = {{"pod_uid", pod.uid()},     {"namespace", pod.namespace_()},
                            {"pod", pod.name()},        {"container", c.name()},
                            {"cpus", c.cpus()},         {"exclusive", c.exclusive()},
                            {"memory_numa", mems},      {"container_id", c.container_id()},
                            {"cgroup", c.cgroup()},     {"cgroup_cpuset", nullptr},
                            {"runtime_cpuset", nullptr}};
      if (!c.cgroup().empty()) {
        row["cgroup_cpuset"] =
            CompareCpuset(c.cpus(), mems, ReadCgroup(root, c.cgroup()), "cgroup");
      }
      if (runtime != nullptr && !c.container_id().empty()) {
        row["runtime_cpuset"] =
            CompareCpuset(c.cpus(), mems, ReadRuntime(*runtime, c.container_id()), "runtime");
      }
      rows.push_back(std::move(row));
    }
  }
  return {{"cgroup_root", root}, {"containers", rows}};
}

void PrintContainersTable(const nlohmann::json& doc, bool with_runtime) {
  if (doc["containers"].empty()) {
    std::cout << "no pods admitted\n";
    return;
  }
  auto cell = [](const nlohmann::json& value) {
    if (value.is_null()) return std::string("-");
    const std::string text = value.get<std::string>();
    return text.empty() ? std::string("-") : text;
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : doc["containers"]) {
    std::vector<std::string> row = {
        c["namespace"].get<std::string>() + "/" + c["pod"].get<std::string>(),
        c["container"].get<std::string>(),
        cell(c["cpus"]),
        IdList(c["memory_numa"].get<std::vector<int>>()),
        cell(c["container_id"]),
        cell(c["cgroup_cpuset"])};
    if (row[3].empty()) row[3] = "-";
    if (with_runtime) row.push_back(cell(c["runtime_cpuset"]));
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"POD", "CONTAINER", "CPUS", "MEMS", "CONTAINER-ID", "CGROUP"};
  if (with_runtime) header.push_back("RUNTIME");
  std::cout << RenderTable(header, rows);
}

int RunContainers(const GlobalOptions& g, const ContainersOptions& o) {
  auto stub = ConnectToDaemon(g.socket);
  v1::ListAllocationsResponse list;
  grpc::Status s = stub->ListAllocations(CallContext().get(), {}, &list);
  if (!s.ok()) return ReportRpcError("containers", s, g.socket);
  v1::StatusResponse status;
  if (o.cgroup_root.empty()) {
    s = stub->Status(CallContext().get(), {}, &status);
    if (!s.ok()) return ReportRpcError("containers", s, g.socket);
  }
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime;
  if (!o.runtime_endpoint.empty()) {
    runtime = runtime::v1::RuntimeService::NewStub(
        grpc::CreateChannel(o.runtime_endpoint, grpc::InsecureChannelCredentials()));
  }
  nlohmann::json doc = ContainersToJson(list, CgroupRoot(o, status), runtime.get());
  const bool with_runtime = runtime != nullptr;
  PrintResult(doc, o.json ? OutputFormat::kJson : g.format(),
              [with_runtime](const nlohmann::json& d) { PrintContainersTable(d, with_runtime); });
  return kExitOk;
}

void InstallContainers(CLI::App& root, CommandContext& ctx) {
  auto options = std::make_shared<ContainersOptions>();
  CLI::App* cmd = root.add_subcommand(
      "containers",
      "list admitted containers and whether their cgroup and runtime cpusets agree with "
      "topologyd");
  cmd->add_option("--runtime-endpoint", options->runtime_endpoint,
                  "CRI runtime endpoint to ask for each bound container's stored cpuset, e.g. "
                  "unix:///run/containerd/containerd.sock");
  cmd->add_option("--cgroup-root", options->cgroup_root,
                  "directory the containers' cgroup paths are relative to (default: the "
                  "daemon's cgroup root; its cpuset hierarchy on cgroup v1)");
  cmd->add_flag("--json", options->json, "JSON output (the same as --output json)");
  cmd->callback([&ctx, options] {
    ctx.action = [&ctx, options] { return RunContainers(*ctx.globals, *options); };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallContainers);

}  // namespace
}  // namespace topoctl
