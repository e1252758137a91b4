// Drives the online topoctl commands against a real topologyd on a simulated machine
// (MinimalConfig: 2 packages x 1 NUMA node x 4 cores x 2 threads = CPUs 0-15, CPU 0
// reserved, static CPU policy, best-effort topology manager): admit, explain, allocate,
// release, allocations and topology, in every output format, as a script would.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

#include "lib/cpuset/cpuset.h"
#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr char kSynthetic[] = "pack:2 numa:1 core:4 pu:2";
constexpr char kUid[] = "0c2b5e9a-1111-4f4f-8a8a-00000000000a";

std::string GuaranteedPod(const std::string& uid, const std::string& cpus) {
  return "apiVersion: v1\n"
         "kind: Pod\n"
         "metadata:\n"
         "  name: pinned\n"
         "  namespace: shop\n"
         "  uid: " +
         uid +
         "\n"
         "spec:\n"
         "  containers:\n"
         "  - name: app\n"
         "    image: busybox\n"
         "    resources:\n"
         "      limits: {cpu: \"" +
         cpus + "\", memory: 256Mi}\n";
}

// "1-2,9" -> {1, 2, 9}.
std::set<int> ParseCpuList(const std::string& text) {
  absl::StatusOr<CpuSet> set = CpuSet::Parse(text);
  EXPECT_TRUE(set.ok()) << "\"" << text << "\": " << set.status();
  if (!set.ok()) return {};
  const std::vector<int> ids = set->ToVector();
  return {ids.begin(), ids.end()};
}

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

// A YAML document as JSON: topoctl double-quotes every string, so a quoted scalar is a
// string and a plain one a number, boolean or null.
nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) out[kv.first.Scalar()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return node.Scalar();
      return nlohmann::json::parse(node.Scalar());
    default:
      return nullptr;
  }
}

const std::set<std::string> kDecisionKeys = {"admitted", "reason", "message", "containers"};
const std::set<std::string> kAllocationKeys = {"name",          "cpus",        "exclusive",
                                               "numa_affinity", "memory_numa", "devices"};

class TopoctlOnlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.File("config.yaml");
    socket_ = dir_.File("topologyd.sock");
    WriteFile(config_, MinimalConfig(dir_.path()));  // also lays out dir/cgroup
    daemon_.Start(config_, dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(socket_, seconds(30))) << ReadFile(dir_.File("log"));
  }

  CommandResult Topoctl(std::vector<std::string> args) {
    args.insert(args.begin(), {TopoctlBinary(), "--socket", socket_});
    return RunCommand(args);
  }

  // Runs a command that must succeed with --output json and returns its document.
  nlohmann::json Json(std::vector<std::string> args) {
    args.insert(args.end(), {"--output", "json"});
    CommandResult r = Topoctl(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    if (r.exit_code != 0) return nullptr;
    return nlohmann::json::parse(r.out);
  }

  TempDir dir_;
  std::string config_;
  std::string socket_;
  DaemonProcess daemon_;
};

TEST_F(TopoctlOnlineTest, AdmitAllocateListAndRelease) {
  const nlohmann::json empty = Json({"allocations"});
  ASSERT_TRUE(empty.is_object());
  EXPECT_TRUE(empty["pods"].empty());
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  nlohmann::json admitted = Json({"admit", "-f", pod});
  ASSERT_TRUE(admitted.is_object());
  EXPECT_EQ(Keys(admitted), kDecisionKeys);
  EXPECT_TRUE(admitted["admitted"].get<bool>());
  EXPECT_EQ(admitted["reason"], "");
  ASSERT_EQ(admitted["containers"].size(), 1u);
  const nlohmann::json app = admitted["containers"][0];
  EXPECT_EQ(Keys(app), kAllocationKeys);
  EXPECT_EQ(app["name"], "app");
  EXPECT_TRUE(app["exclusive"].get<bool>());
  const std::set<int> cpus = ParseCpuList(app["cpus"].get<std::string>());
  EXPECT_EQ(cpus.size(), 2u);
  EXPECT_FALSE(cpus.contains(0)) << "reserved CPU 0 handed out";
  for (int cpu : cpus) EXPECT_LT(cpu, 16);
  EXPECT_TRUE(app["numa_affinity"].is_array());
  EXPECT_TRUE(app["memory_numa"].is_array());
  EXPECT_TRUE(app["devices"].is_object());

  // Admission is idempotent by uid: the same allocation again.
  nlohmann::json again = Json({"admit", "-f", pod});
  EXPECT_EQ(again, admitted);

  // The listing shows the pod; its CPUs left the shared pool.
  nlohmann::json list = Json({"allocations"});
  EXPECT_EQ(Keys(list), (std::set<std::string>{"reserved", "shared_pool", "pods"}));
  EXPECT_EQ(list["reserved"], "0");
  const std::set<int> shared = ParseCpuList(list["shared_pool"].get<std::string>());
  for (int cpu : cpus) EXPECT_FALSE(shared.contains(cpu)) << cpu;
  ASSERT_EQ(list["pods"].size(), 1u);
  const nlohmann::json listed = list["pods"][0];
  EXPECT_EQ(Keys(listed), (std::set<std::string>{"uid", "namespace", "name", "containers"}));
  EXPECT_EQ(listed["uid"], kUid);
  EXPECT_EQ(listed["namespace"], "shop");
  EXPECT_EQ(listed["name"], "pinned");
  ASSERT_EQ(listed["containers"].size(), 1u);
  std::set<std::string> bound_keys = kAllocationKeys;
  bound_keys.insert({"container_id", "cgroup"});
  EXPECT_EQ(Keys(listed["containers"][0]), bound_keys);
  EXPECT_EQ(listed["containers"][0]["cpus"], app["cpus"]);

  // Binding the container to its runtime identity.
  const std::string cgroup = "kubepods.slice/pod0c2b5e9a/cri-abc123";
  nlohmann::json bound = Json({"allocate", "--pod", kUid, "--container", "app", "--container-id",
                               "abc123", "--cgroup", cgroup});
  ASSERT_TRUE(bound.is_object());
  EXPECT_EQ(Keys(bound), bound_keys);
  EXPECT_EQ(bound["container_id"], "abc123");
  EXPECT_EQ(bound["cgroup"], cgroup);
  EXPECT_EQ(bound["cpus"], app["cpus"]);
  list = Json({"allocations"});
  ASSERT_EQ(list["pods"].size(), 1u);
  EXPECT_EQ(list["pods"][0]["containers"][0]["container_id"], "abc123");
  EXPECT_EQ(list["pods"][0]["containers"][0]["cgroup"], cgroup);

  // The table has one row per container.
  CommandResult table = Topoctl({"allocations"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("shop/pinned"));
  EXPECT_THAT(table.out, HasSubstr("abc123"));

  nlohmann::json released = Json({"release", "--pod", kUid});
  EXPECT_EQ(Keys(released), (std::set<std::string>{"released", "state_generation"}));
  EXPECT_TRUE(released["released"].get<bool>());
  EXPECT_GT(released["state_generation"].get<uint64_t>(), 0u);
  list = Json({"allocations"});
  EXPECT_TRUE(list["pods"].empty());
  EXPECT_EQ(list["shared_pool"], empty["shared_pool"]);

  // Gone now.
  CommandResult r = Topoctl({"release", "--pod", kUid});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.err.empty());
}

TEST_F(TopoctlOnlineTest, UnknownPodIsNotFound) {
  CommandResult r = Topoctl({"release", "--pod", "no-such-pod"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("topoctl: release: "));
  EXPECT_THAT(r.err, HasSubstr("no-such-pod"));
  EXPECT_TRUE(r.out.empty());

  r = Topoctl({"allocate", "--pod", "no-such-pod", "--container", "app", "--container-id", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("topoctl: allocate: "));
}

TEST_F(TopoctlOnlineTest, ReleasingOneContainerKeepsThePod) {
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  ASSERT_TRUE(Json({"admit", "-f", pod}).is_object());
  CommandResult r = Topoctl({"release", "--pod", kUid, "--container", "nope"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // An empty name (say, an unset shell variable) is bad usage, not "the whole pod".
  r = Topoctl({"release", "--pod", kUid, "--container", ""});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("must not be empty"));
  EXPECT_EQ(Json({"allocations"})["pods"].size(), 1u) << "the pod was released";
  nlohmann::json released = Json({"release", "--pod", kUid, "--container", "app"});
  EXPECT_TRUE(released["released"].get<bool>());
}

TEST_F(TopoctlOnlineTest, ReleasingWithAContainerIdReleasesOnlyThatInstance) {
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  ASSERT_TRUE(Json({"admit", "-f", pod}).is_object());
  ASSERT_TRUE(Json({"allocate", "--pod", kUid, "--container", "app", "--container-id", "abc123"})
                  .is_object());
  // An older instance's id: the daemon names the bound one, and nothing changes.
  CommandResult r =
      Topoctl({"release", "--pod", kUid, "--container", "app", "--container-id", "older-instance"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("topoctl: release: "));
  EXPECT_THAT(r.err, HasSubstr("abc123"));
  EXPECT_EQ(Json({"allocations"})["pods"].size(), 1u) << "the wrong instance was released";
  // Without a container it would mean nothing: bad usage.
  r = Topoctl({"release", "--pod", kUid, "--container-id", "abc123"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(Json({"allocations"})["pods"].size(), 1u);
  nlohmann::json released =
      Json({"release", "--pod", kUid, "--container", "app", "--container-id", "abc123"});
  EXPECT_TRUE(released["released"].get<bool>());
  EXPECT_TRUE(Json({"allocations"})["pods"].empty());
}

TEST_F(TopoctlOnlineTest, RefusalExitsOneWithTheReasonOnStderr) {
  const std::string pod = dir_.Write("big.yaml", GuaranteedPod(kUid, "64"));
  CommandResult r = Topoctl({"admit", "-f", pod, "--output", "json"});
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_FALSE(r.out.empty()) << r.err;
  nlohmann::json decision = nlohmann::json::parse(r.out);
  EXPECT_EQ(Keys(decision), kDecisionKeys);
  EXPECT_FALSE(decision["admitted"].get<bool>());
  const std::string reason = decision["reason"].get<std::string>();
  EXPECT_FALSE(reason.empty());
  EXPECT_FALSE(decision["message"].get<std::string>().empty());
  EXPECT_THAT(r.err, HasSubstr("refused"));
  EXPECT_THAT(r.err, HasSubstr(reason));
  // Nothing changed.
  EXPECT_TRUE(Json({"allocations"})["pods"].empty());
}

TEST_F(TopoctlOnlineTest, AdmitRefusesBadManifestsBeforeCallingTheDaemon) {
  CommandResult r =
      Topoctl({"admit", "-f",
               std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/bad-quantity.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("spec.containers[1].resources.limits.cpu"));
  EXPECT_THAT(r.err, HasSubstr("invalid quantity"));

  r = Topoctl(
      {"admit", "-f", std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/fixtures/pods/besteffort.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("metadata.uid: required"));

  r = Topoctl({"admit", "-f", dir_.File("missing.yaml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.yaml"));

  r = Topoctl({"admit"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Json({"allocations"})["pods"].empty());
}

TEST_F(TopoctlOnlineTest, AdmitReadsStdinAndPrintsATable) {
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  CommandResult r = RunCommand(
      {"/bin/sh", "-c", TopoctlBinary() + " --socket " + socket_ + " admit -f - < " + pod});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("admitted"));
  EXPECT_THAT(r.out, HasSubstr("CONTAINER"));
  EXPECT_THAT(r.out, HasSubstr("app"));
}

// Admitting a held pod again answers with what it holds; a different spec is named, not hidden.
TEST_F(TopoctlOnlineTest, ReadmittingWithAnotherSpecSaysWhatDiffers) {
  const std::string first = dir_.Write("first.yaml", GuaranteedPod(kUid, "2"));
  ASSERT_EQ(Topoctl({"admit", "-f", first}).exit_code, 0);
  CommandResult same = Topoctl({"admit", "-f", first});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_TRUE(same.err.empty()) << same.err;

  const std::string bigger = dir_.Write("bigger.yaml", GuaranteedPod(kUid, "4"));
  CommandResult r = Topoctl({"admit", "-f", bigger});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("topoctl: admit: pod " + std::string(kUid) +
                               " was already admitted with another spec and keeps its allocation"));
  EXPECT_THAT(r.err, HasSubstr("container app asks 4 CPUs, holds 2 ("));
}

TEST_F(TopoctlOnlineTest, ExplainOnlineShowsHintsAndMergeWithoutChangingState) {
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  CommandResult r = Topoctl({"explain", "-f", pod, "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  // The offline explain's document (lib/admission/admission_json.h).
  EXPECT_EQ(Keys(doc), (std::set<std::string>{"admitted", "reason", "message", "containers",
                                              "policy", "scope", "notes", "hints", "merged"}));
  EXPECT_TRUE(doc["admitted"].get<bool>());
  EXPECT_EQ(doc["policy"], "best-effort");
  EXPECT_EQ(doc["scope"], "container");
  ASSERT_EQ(doc["containers"].size(), 1u);
  EXPECT_EQ(Keys(doc["containers"][0]), kAllocationKeys);
  EXPECT_EQ(ParseCpuList(doc["containers"][0]["cpus"].get<std::string>()).size(), 2u);
  ASSERT_EQ(doc["hints"].size(), 1u);
  EXPECT_EQ(doc["hints"][0]["container"], "app");
  const nlohmann::json providers = doc["hints"][0]["providers"];
  ASSERT_TRUE(providers.contains("cpu")) << providers.dump();
  const nlohmann::json cpu = providers["cpu"]["cpu"];
  // CPU hints come summarised (upward-closed) over the two NUMA nodes.
  ASSERT_TRUE(cpu.is_object()) << cpu.dump();
  EXPECT_TRUE(cpu["upward_closed"].get<bool>());
  EXPECT_EQ(cpu["universe"], nlohmann::json::array({0, 1}));
  EXPECT_FALSE(cpu["hints"].empty());
  ASSERT_EQ(doc["merged"].size(), 1u);
  EXPECT_EQ(Keys(doc["merged"][0]),
            (std::set<std::string>{"container", "affinity", "preferred", "admit"}));
  EXPECT_EQ(doc["merged"][0]["container"], "app");
  EXPECT_TRUE(doc["merged"][0]["admit"].get<bool>());

  // An explanation reserves nothing.
  EXPECT_TRUE(Json({"allocations"})["pods"].empty());

  // A pod that would be refused: exit 1, the explanation still printed.
  const std::string big = dir_.Write("big.yaml", GuaranteedPod(kUid, "64"));
  r = Topoctl({"explain", "-f", big, "--output", "json"});
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_FALSE(r.out.empty()) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["admitted"].get<bool>());

  r = Topoctl({"explain", "-f", pod});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged"));
}

TEST_F(TopoctlOnlineTest, TopologyFromTheDaemonEqualsOffline) {
  nlohmann::json online = Json({"topology"});
  nlohmann::json offline = Json({"topology", "--synthetic", kSynthetic});
  ASSERT_TRUE(online.is_object());
  EXPECT_EQ(online, offline);
  EXPECT_EQ(online["cpus"], 16);
  EXPECT_EQ(online["numa_nodes"].size(), 2u);

  CommandResult table = Topoctl({"topology"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, Topoctl({"topology", "--synthetic", kSynthetic}).out);
}

TEST_F(TopoctlOnlineTest, NrtFromTheDaemonEqualsOfflineUntilAPodIsAdmitted) {
  const nlohmann::json online = Json({"nrt", "--node-name", "n1"});
  ASSERT_TRUE(online.is_object());
  EXPECT_EQ(online,
            Json({"nrt", "--synthetic", kSynthetic, "--config", config_, "--node-name", "n1"}));
  ASSERT_EQ(online["zones"].size(), 2U);

  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  ASSERT_EQ(Topoctl({"admit", "-f", pod}).exit_code, 0);
  const nlohmann::json admitted = Json({"nrt", "--node-name", "n1"});
  auto cpus_left = [](const nlohmann::json& nrt) {
    int left = 0;
    for (const nlohmann::json& zone : nrt["zones"]) {
      left += std::stoi(zone["resources"][0]["available"].get<std::string>());
    }
    return left;
  };
  EXPECT_EQ(cpus_left(admitted), cpus_left(online) - 2);
  EXPECT_NE(admitted["attributes"][3]["value"], online["attributes"][3]["value"]);
}

TEST_F(TopoctlOnlineTest, YamlOutputIsTheJsonDocument) {
  const std::string pod = dir_.Write("pod.yaml", GuaranteedPod(kUid, "2"));
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"topology"}, {"admit", "-f", pod}, {"allocations"}}) {
    std::vector<std::string> yaml_args = args;
    yaml_args.insert(yaml_args.end(), {"--output", "yaml"});
    CommandResult r = Topoctl(yaml_args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    nlohmann::json from_yaml = YamlToJson(YAML::Load(r.out));
    EXPECT_EQ(from_yaml, Json(args)) << args[0] << ":\n" << r.out;
  }
}

// The online explanation is the offline one: same machine (an hwloc XML), same config, an
// empty node.
TEST(TopoctlExplainTest, OnlineEqualsOffline) {
  const std::string xml =
      std::string(TOPOLOGYD_SHARED_TOPOLOGIES) + "/amd-epyc7742-2s-nps4-4xa100-ib.xml";
  if (!std::filesystem::exists(xml)) GTEST_SKIP() << xml << " not available";
  TempDir dir;
  MakeFakeCgroupRoot(dir.File("cgroup"));
  const std::string socket = dir.File("topologyd.sock");
  const std::string config = dir.File("config.yaml");
  WriteFile(config, "listen: unix://" + socket +
                        "\n"
                        "allowedPeers: {uids: [0], sameUser: true}\n"
                        "stateDir: " +
                        dir.File("state") +
                        "\n"
                        "topology: {source: xml, path: " +
                        xml +
                        "}\n"
                        "cpuManagerPolicy: static\n"
                        "reservedSystemCPUs: \"0\"\n"
                        "topologyManagerPolicy: single-numa-node\n"
                        "memoryManagerPolicy: Static\n"
                        "reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]\n"
                        "devices:\n"
                        "  - resourceName: nvidia.com/gpu\n"
                        "    pci: {vendor: \"10de\", class: \"0302\"}\n"
                        "cgroup: {root: " +
                        dir.File("cgroup") + ", driver: cgroupfs, version: v2, apply: false}\n");
  const std::string pod = dir.File("pod.yaml");
  WriteFile(pod,
            "apiVersion: v1\n"
            "kind: Pod\n"
            "metadata: {name: train, namespace: ml, uid: 6f1c2d3e-1111-4a4a-9b9b-0123456789ab}\n"
            "spec:\n"
            "  containers:\n"
            "  - name: trainer\n"
            "    resources:\n"
            "      limits: {cpu: \"4\", memory: 4Gi, nvidia.com/gpu: 1}\n"
            "  - name: helper\n"
            "    resources:\n"
            "      limits: {cpu: \"1\", memory: 1Gi}\n");
  DaemonProcess daemon;
  daemon.Start(config, dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log"));

  CommandResult online =
      RunCommand({TopoctlBinary(), "--socket", socket, "explain", "-f", pod, "--output", "json"});
  ASSERT_EQ(online.exit_code, 0) << online.err;
  CommandResult offline = RunCommand({TopoctlBinary(), "explain", "-f", pod, "--topology", xml,
                                      "--config", config, "--output", "json"});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  nlohmann::json a = nlohmann::json::parse(online.out);
  nlohmann::json b = nlohmann::json::parse(offline.out);
  // Hint lists are long: print only the JSON patch from offline to online.
  EXPECT_TRUE(a == b) << "offline -> online: " << nlohmann::json::diff(b, a).dump();
  // Both containers' explanations, with device hints for the GPU container.
  ASSERT_EQ(a["hints"].size(), 2u);
  EXPECT_TRUE(a["hints"][0]["providers"]["devices"].contains("nvidia.com/gpu"));
}

TEST(TopoctlWithoutDaemonTest, OnlineCommandsSayTheDaemonIsUnreachable) {
  TempDir dir;
  const std::string socket = dir.File("absent.sock");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"topology"}, {"allocations"}, {"release", "--pod", "x"}}) {
    std::vector<std::string> argv = {TopoctlBinary(), "--socket", socket};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_THAT(r.err, HasSubstr("is topologyd running")) << args[0];
  }
}

TEST(TopoctlWithoutDaemonTest, LiveTopologyNeedsNoDaemon) {
  TempDir dir;
  CommandResult r = RunCommand({TopoctlBinary(), "--socket", dir.File("absent.sock"), "topology",
                                "--live", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["cpus"].get<int>(), 0);
  r = RunCommand({TopoctlBinary(), "topology", "--live", "--synthetic", kSynthetic});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace topologyd::testing
