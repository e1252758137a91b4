// The daemon with `nrt.file` set, in process: the NodeResourceTopology file is written at
// start, shows an admitted pod once its admission is acknowledged and shows it gone after the
// release; GetNodeResourceTopology answers the same object; the file passes the CRD's schema.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"
#include <grpcpp/grpcpp.h>

#include "daemon/daemon.h"
#include "tests/integration/api_pods.h"
#include "tests/integration/in_process_client.h"
#include "tests/integration/process.h"
#include "tests/support/require_component.h"
#include "tests/support/shell.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;

// The file's zones as "zone/resource" -> available, and its fingerprint.
struct Seen {
  std::map<std::string, std::string> available;
  std::string fingerprint;
  std::string name;
};

Seen Read(const std::string& path) {
  Seen seen;
  YAML::Node doc = YAML::LoadFile(path);
  seen.name = doc["metadata"]["name"].as<std::string>();
  for (const YAML::Node& zone : doc["zones"]) {
    for (const YAML::Node& r : zone["resources"]) {
      seen.available[zone["name"].as<std::string>() + "/" + r["name"].as<std::string>()] =
          r["available"].as<std::string>();
    }
  }
  for (const YAML::Node& a : doc["attributes"]) {
    if (a["name"].as<std::string>() == "nodeTopologyPodsFingerprint") {
      seen.fingerprint = a["value"].as<std::string>();
    }
  }
  return seen;
}

// Polls the file until `want` holds; the file as last read.
template <typename Want>
Seen WaitFor(const std::string& path, Want want) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Seen seen = Read(path);
  while (!want(seen) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    seen = Read(path);
  }
  return seen;
}

void ExpectValidAgainstCrd(const std::string& path) {
  if (!std::filesystem::exists("/usr/bin/python3")) {
    SKIP_OR_FAIL() << "/usr/bin/python3 not found: the CRD schema check needs it";
  }
  const std::string fixtures = std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/nrt/";
  ShellResult r = RunShell("/usr/bin/python3 " + ShellQuote(fixtures + "validate_nrt.py") + " " +
                           ShellQuote(fixtures + "crd_v1alpha2_schema.yaml") + " " +
                           ShellQuote(path) + " 2>&1");
  if (r.exit_code == 77) SKIP_OR_FAIL() << "python3-jsonschema or python3-yaml missing: " << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(DaemonNrtFileTest, FileFollowsAdmitAndRelease) {
  TempDir dir;
  // The file's directory does not exist yet: start-up makes it.
  const std::string file = dir.File("published/nrt.yaml");
  WriteFile(dir.File("config.yaml"),
            MinimalConfig(dir.path(), "nrt: {file: " + file + ", nodeName: worker-7}\n"));
  EXPECT_EQ(daemon::CheckConfig(dir.File("config.yaml")), 0);
  daemon::Daemon d(dir.File("config.yaml"));
  ASSERT_EQ(d.Start(), 0);

  // pack:2 numa:1 core:4 pu:2 with CPU 0 reserved: node-0 has 7 exclusive CPUs, node-1 8.
  const Seen empty = Read(file);
  EXPECT_EQ(empty.name, "worker-7");
  EXPECT_EQ(empty.available.at("node-0/cpu"), "7");
  EXPECT_EQ(empty.available.at("node-1/cpu"), "8");
  ExpectValidAgainstCrd(file);

  v1::AdmitRequest request;
  *request.mutable_pod() = GuaranteedPod("p1", "4");
  {
    grpc::ClientContext context;
    Deadline(context);
    v1::AdmitResponse admitted;
    grpc::Status s = Connect(d)->Admit(&context, request, &admitted);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(admitted.admitted()) << admitted.message();
  }
  auto cpus_left = [](const Seen& s) {
    return std::stoi(s.available.at("node-0/cpu")) + std::stoi(s.available.at("node-1/cpu"));
  };
  const Seen admitted = WaitFor(file, [&](const Seen& s) { return cpus_left(s) == 11; });
  EXPECT_EQ(cpus_left(admitted), 11);
  EXPECT_NE(admitted.fingerprint, empty.fingerprint);

  // The RPC answers the same object.
  {
    grpc::ClientContext context;
    Deadline(context);
    v1::GetNodeResourceTopologyResponse response;
    grpc::Status s = Connect(d)->GetNodeResourceTopology(
        &context, v1::GetNodeResourceTopologyRequest(), &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const nlohmann::json object = nlohmann::json::parse(response.object_json());
    EXPECT_EQ(object["metadata"]["name"], "worker-7");
    EXPECT_EQ(object["attributes"][3]["value"], admitted.fingerprint);
  }

  {
    grpc::ClientContext context;
    Deadline(context);
    v1::GetNodeResourceTopologyRequest bad;
    bad.set_node_name("Not/A/Node");
    v1::GetNodeResourceTopologyResponse response;
    grpc::Status s = Connect(d)->GetNodeResourceTopology(&context, bad, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("node_name"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext context;
    Deadline(context);
    v1::ReleaseRequest release;
    release.set_pod_uid("p1");
    v1::ReleaseResponse released;
    grpc::Status s = Connect(d)->Release(&context, release, &released);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const Seen after =
      WaitFor(file, [&](const Seen& s) { return s.fingerprint == empty.fingerprint; });
  EXPECT_EQ(after.fingerprint, empty.fingerprint);
  EXPECT_EQ(after.available, empty.available);
  ExpectValidAgainstCrd(file);
  EXPECT_EQ(d.Stop(), 0);
}

// The daemon as a process: a SIGHUP that changes nrt.nodeName (live) rewrites the file under
// the new name; one that changes nrt.file (restart-only) is refused and the old file kept.
TEST(DaemonNrtFileTest, ReloadRewritesTheFileUnderTheNewName) {
  TempDir dir;
  const std::string file = dir.File("nrt.yaml");
  WriteFile(dir.File("config.yaml"),
            MinimalConfig(dir.path(), "nrt: {file: " + file + ", nodeName: before}\n"));
  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(dir.File("topologyd.sock"), std::chrono::seconds(30)))
      << ReadFile(dir.File("log"));
  EXPECT_EQ(Read(file).name, "before");

  WriteFile(
      dir.File("config.yaml"),
      MinimalConfig(dir.path(), "nrt: {file: " + dir.File("other.yaml") + ", nodeName: after}\n"));
  daemon.Signal(SIGHUP);
  const Seen renamed = WaitFor(file, [](const Seen& s) { return s.name == "after"; });
  EXPECT_EQ(renamed.name, "after") << ReadFile(dir.File("log"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("other.yaml")));
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.WaitForExit(std::chrono::seconds(30)), 0);
  EXPECT_NE(ReadFile(dir.File("log")).find("nrt.file"), std::string::npos)
      << "the refused key is logged";
}

TEST(DaemonNrtFileTest, PathThatCannotBeADirectoryStopsStartUp) {
  TempDir dir;
  WriteFile(dir.File("blocker"), "a file, not a directory");
  WriteFile(dir.File("config.yaml"),
            MinimalConfig(dir.path(), "nrt: {file: " + dir.File("blocker/nrt.yaml") + "}\n"));
  daemon::Daemon d(dir.File("config.yaml"));
  EXPECT_EQ(d.Start(), 1);
  // --check-config finds it without starting.
  EXPECT_EQ(daemon::CheckConfig(dir.File("config.yaml")), 1);
}

// nrt.apiServer's credentials are read at start: a kubeconfig that cannot be used stops start-up
// and --check-config, naming the key; the API server itself is not contacted.
TEST(DaemonNrtFileTest, KubeconfigThatCannotBeReadStopsStartUp) {
  TempDir dir;
  WriteFile(dir.File("config.yaml"),
            MinimalConfig(dir.path(),
                          "nrt: {apiServer: {kubeconfig: " + dir.File("missing.conf") + "}}\n"));
  const CommandResult r =
      RunCommand({TopologydBinary(), "--check-config", dir.File("config.yaml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nrt.apiServer.kubeconfig: cannot read kubeconfig " +
                       dir.File("missing.conf") + ": No such file or directory"),
            std::string::npos)
      << r.err;
  daemon::Daemon d(dir.File("config.yaml"));
  EXPECT_EQ(d.Start(), 1);

  // A kubeconfig that reads is enough, reachable or not.
  WriteFile(dir.File("missing.conf"),
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
            "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\"}}]\n"
            "users: [{name: u, user: {token: t}}]\n");
  EXPECT_EQ(daemon::CheckConfig(dir.File("config.yaml")), 0);
}

}  // namespace
}  // namespace topologyd::testing
