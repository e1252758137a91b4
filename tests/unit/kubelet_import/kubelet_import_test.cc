#include "lib/kubelet_import/kubelet_import.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/common/pci_bus_id.h"
#include "lib/kubelet_import/kubelet_checksum.h"
#include "lib/kubelet_import/kubelet_device_advice.h"
#include "tests/unit/state/test_util.h"

namespace topologyd::state::kubelet {
namespace {

using state::testing::ReadFixture;

CpuCheckpoint Cpu(const std::string& fixture) {
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(ReadFixture("kubelet/" + fixture), fixture);
  EXPECT_TRUE(cp.ok()) << fixture << ": " << cp.status();
  return cp.ok() ? *cp : CpuCheckpoint{};
}

// ---- checksums ----

TEST(KubeletChecksumTest, SpecExamples) {
  EXPECT_EQ(Fnv1a32("(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string) "
                    "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}"),
            1353318690u);
  EXPECT_EQ(DataStringChecksum("{\"policyName\":\"Static\"}"), 1049637106u);
}

TEST(KubeletChecksumTest, CpuRenderingMatchesKubelet) {
  CpuCheckpoint cp{.policy_name = "none", .default_cpu_set = "1-3"};
  cp.entries.emplace();
  (*cp.entries)["pod"] =
      std::map<std::string, std::string>{{"container2", "1-3"}, {"container1", "4-6"}};
  EXPECT_EQ(SpewCpuCheckpoint(cp),
            "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string)1-3 "
            "Entries:(map[string]map[string]string)map[pod:map[container1:4-6 container2:1-3]] "
            "Checksum:(checksum.Checksum)0}");
  EXPECT_EQ(Fnv1a32(SpewCpuCheckpoint(cp)), 3610638499u);
}

// ---- cpu_manager_state fixtures (kubelet test data and real files, with their checksums) ----

TEST(KubeletCpuTest, ValidFixturesParse) {
  struct Case {
    const char* file;
    const char* policy;
    const char* shared;
  };
  for (const Case& c :
       {Case{"cpu_none_4-6.json", "none", "4-6"}, Case{"cpu_static_0-7.json", "static", "0-7"},
        Case{"cpu_talos_none.json", "none", ""}, Case{"cpu_talos_static.json", "static", "0-1"},
        Case{"cpu_static_entries.json", "static", "0-1,4-7"}}) {
    CpuCheckpoint cp = Cpu(c.file);
    EXPECT_EQ(cp.policy_name, c.policy) << c.file;
    EXPECT_EQ(cp.default_cpu_set, c.shared) << c.file;
  }
}

TEST(KubeletCpuTest, ImportsExclusiveCpus) {
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_entries.json"), nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->pods.size(), 1u);
  const PodRecord& pod = s->pods.at("pod1");
  EXPECT_EQ(pod.uid, "pod1");
  EXPECT_EQ(pod.namespace_name, "");
  EXPECT_EQ(pod.name, "");
  EXPECT_EQ(pod.qos, "Guaranteed");
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "c1");
  EXPECT_EQ(pod.containers[0].cpus.ToString(), "2-3");
  EXPECT_TRUE(pod.containers[0].exclusive);
  EXPECT_FALSE(pod.containers[0].init);
  EXPECT_FALSE(pod.containers[0].restartable);  // kubelet's checkpoints do not say
}

TEST(KubeletCpuTest, EmptyStatesImportEmpty) {
  for (const char* f : {"cpu_none_4-6.json", "cpu_static_0-7.json", "cpu_talos_none.json"}) {
    absl::StatusOr<State> s = ImportKubeletState(Cpu(f), nullptr, nullptr);
    ASSERT_TRUE(s.ok()) << f << ": " << s.status();
    EXPECT_TRUE(s->pods.empty()) << f;
  }
}

TEST(KubeletCpuTest, PolicyNoneWithEntriesIsRefused) {
  // Kubelet's own fixture: the checksum is right, but policy none cannot hold assignments.
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_none_with_entries.json"), nullptr, nullptr);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("policy is \"none\""), std::string::npos) << s.status();
}

TEST(KubeletCpuTest, BadChecksumIsRefused) {
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(
      R"({"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"pod1":{"c1":"2-4"}},"checksum":1168196568})",
      "/var/lib/kubelet/cpu_manager_state");
  EXPECT_EQ(cp.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(
      cp.status().message().find("/var/lib/kubelet/cpu_manager_state: checkpoint is corrupted"),
      std::string::npos)
      << cp.status();
  EXPECT_NE(cp.status().message().find("1168196568"), std::string::npos);
}

TEST(KubeletCpuTest, ZeroChecksumIsAcceptedAsKubeletDoes) {
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(
      R"({"policyName":"static","defaultCpuSet":"0-1","entries":{"p":{"c":"2"}},"checksum":0})",
      "f");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->entries->at("p").value().at("c"), "2");
}

TEST(KubeletCpuTest, MembersMatchCaseInsensitively) {
  // kubelet's fixtures write defaultCPUSet; a checksum computed over the same values verifies.
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(
      R"({"POLICYNAME":"static","DefaultCpuSet":"0-7","checksum":14413152})", "f");
  ASSERT_TRUE(cp.ok()) << cp.status();
}

TEST(KubeletCpuTest, ParseErrors) {
  struct Case {
    const char* json;
    absl::StatusCode code;
    const char* expect;
  };
  for (const Case& c : {
           Case{"{", absl::StatusCode::kDataLoss, "not valid JSON"},
           Case{"[]", absl::StatusCode::kDataLoss, "expected an object"},
           Case{R"({"policyName":7})", absl::StatusCode::kDataLoss,
                "policyName: expected a string"},
           Case{R"({"policyName":"static","checksum":-1})", absl::StatusCode::kDataLoss,
                "checksum: expected an unsigned integer"},
           Case{R"({"policyName":"static","checksum":1.5})", absl::StatusCode::kDataLoss,
                "checksum: expected an unsigned integer"},
           Case{R"({"entries":{"p":{"c":3}}})", absl::StatusCode::kDataLoss,
                "entries[\"p\"][\"c\"]: expected a string"},
           Case{R"({"policyName":"static","entries":{"abc123":"1-2"},"checksum":0})",
                absl::StatusCode::kFailedPrecondition, "pre-1.18"},
           Case{R"({"policyName":"static","podEntries":{"p":{"cpuSet":"2"}},"checksum":0})",
                absl::StatusCode::kFailedPrecondition, "podEntries"},
           // A newer kubelet's checksum also covers podEntries, which topologyd's rendering
           // leaves out: the refusal must name them, not call the file corrupted.
           Case{R"({"policyName":"static","podEntries":{"p":{"cpuSet":"2"}},"checksum":123})",
                absl::StatusCode::kFailedPrecondition, "podEntries"},
       }) {
    absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(c.json, "cpu_manager_state");
    EXPECT_EQ(cp.status().code(), c.code) << c.json << ": " << cp.status();
    EXPECT_NE(cp.status().message().find(c.expect), std::string::npos)
        << c.json << ": " << cp.status();
  }
}

TEST(KubeletCpuTest, ImportErrors) {
  struct Case {
    const char* json;
    const char* expect;
  };
  for (
      const Case& c : {
          Case{R"({"policyName":"dynamic","checksum":0})", "unknown policy \"dynamic\""},
          Case{R"({"policyName":"static","defaultCpuSet":"x","checksum":0})",
               "could not parse the default cpu set: invalid CPU list \"x\""},
          Case{
              R"({"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1-"}},"checksum":0})",
              "could not parse the cpuset of container \"c\" in pod \"p\": invalid CPU list "
              "\"1-\""},
          Case{
              R"({"policyName":"static","defaultCpuSet":"0-2","entries":{"p":{"c":"2-3"}},"checksum":0})",
              "overlaps with the default cpuset"},
          Case{
              R"({"policyName":"static","defaultCpuSet":"","entries":{"p":{"c":"2-3"}},"checksum":0})",
              "default cpuset cannot be empty"},
          Case{
              R"({"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"2-3"},"q":{"d":"3"}},"checksum":0})",
              "CPUs 3 are held exclusively by both"},
      }) {
    absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(c.json, "cpu_manager_state");
    ASSERT_TRUE(cp.ok()) << c.json << ": " << cp.status();
    absl::StatusOr<State> s = ImportKubeletState(*cp, nullptr, nullptr);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << c.json;
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos) << s.status();
  }
}

// Names and CPU lists from kubelet's files are echoed quoted and cut, like parse errors.
TEST(KubeletCpuTest, ImportErrorsQuoteWhatTheyEcho) {
  const std::string name = "c\n" + std::string(1000, 'x');
  const std::string cpus = "1-\n" + std::string(1000, '9');
  nlohmann::json json = {{"policyName", "static"},
                         {"defaultCpuSet", "0"},
                         {"entries", {{"p", {{name, cpus}}}}},
                         {"checksum", 0}};
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(json.dump(), "cpu_manager_state");
  ASSERT_TRUE(cp.ok()) << cp.status();
  absl::StatusOr<State> s = ImportKubeletState(*cp, nullptr, nullptr);
  ASSERT_FALSE(s.ok());
  const std::string message(s.status().message());
  EXPECT_NE(message.find("of container \"c\\x0axxx"), std::string::npos) << message;
  EXPECT_NE(message.find("...(1002 bytes) in pod \"p\": invalid CPU list \"1-\\x0a999"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << message;
}

TEST(KubeletCpuTest, DataStringFormat) {
  const std::string data =
      R"({"policyName":"static","defaultCpuSet":"0-1","entries":{"p":{"c":"2-3"}}})";
  nlohmann::json doc = {{"policyName", "static"},
                        {"defaultCpuSet", "0-1"},
                        {"checksum", 0},
                        {"data", data},
                        {"dataChecksum", DataStringChecksum(data)}};
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(doc.dump(), "f");
  ASSERT_TRUE(cp.ok()) << cp.status();
  absl::StatusOr<State> s = ImportKubeletState(*cp, nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->pods.at("p").containers.at(0).cpus.ToString(), "2-3");
  doc["dataChecksum"] = 1234;
  EXPECT_EQ(ParseCpuCheckpoint(doc.dump(), "f").status().code(), absl::StatusCode::kDataLoss);
}

// ---- memory_manager_state (kubelet's state_checkpoint_test.go fixtures) ----

MemoryCheckpoint Memory(const std::string& fixture) {
  absl::StatusOr<MemoryCheckpoint> cp =
      ParseMemoryCheckpoint(ReadFixture("kubelet/" + fixture), fixture);
  EXPECT_TRUE(cp.ok()) << fixture << ": " << cp.status();
  return cp.ok() ? *cp : MemoryCheckpoint{};
}

TEST(KubeletMemoryTest, V1FixtureVerifiesAndImports) {
  MemoryCheckpoint mem = Memory("memory_kubelet_v1.json");
  EXPECT_EQ(mem.checksum, 4215593881u);
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), &mem, nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  const ContainerRecord& c = s->pods.at("pod").containers.at(0);
  EXPECT_EQ(c.name, "container1");
  EXPECT_EQ(c.memory.at(0).at("memory"), 512u);
  EXPECT_EQ(c.numa_affinity, std::vector<int>{0});
  EXPECT_FALSE(c.exclusive);
  EXPECT_EQ(s->pods.at("pod").qos, "Guaranteed");
}

TEST(KubeletMemoryTest, V2FixtureVerifiesButPodLevelBlocksAreRefused) {
  MemoryCheckpoint mem = Memory("memory_kubelet_v2_pod_entries.json");
  ASSERT_TRUE(mem.pod_entries.has_value());
  EXPECT_EQ(mem.pod_entries->size(), 1u);
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), &mem, nullptr);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("pod-level"), std::string::npos) << s.status();
}

TEST(KubeletMemoryTest, V3FixtureReadsOnlyTheDataString) {
  // The legacy part of this kubelet fixture is deliberately wrong (policy "other", bad checksum).
  MemoryCheckpoint mem = Memory("memory_kubelet_v3.json");
  EXPECT_EQ(mem.policy_name, "static");
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), &mem, nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->pods.at("pod").containers.at(0).name, "container1");
  EXPECT_EQ(s->pods.at("pod").containers.at(0).memory.at(0).at("memory"), 512u);
}

TEST(KubeletMemoryTest, BadChecksumFixtureIsRefused) {
  absl::StatusOr<MemoryCheckpoint> cp = ParseMemoryCheckpoint(
      ReadFixture("kubelet/memory_kubelet_v1_bad_checksum.json"), "memory_manager_state");
  EXPECT_EQ(cp.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(cp.status().message().find("checkpoint is corrupted"), std::string::npos);
}

TEST(KubeletMemoryTest, SpanningBlocksAreSplitByMachineState) {
  // Two containers share a {0,1} group; node 0 reserved 6 GiB (1 of them single-node), node 1
  // reserved 3 GiB, so the spanning blocks (4 + 4 GiB) take 5 GiB from 0 and 3 GiB from 1.
  const char* json = R"({"policyName":"Static","checksum":0,
    "machineState":{"0":{"memoryMap":{"memory":{"reserved":6}},"cells":[0,1]},
                    "1":{"memoryMap":{"memory":{"reserved":3}},"cells":[0,1]}},
    "entries":{"a":{"x":[{"numaAffinity":[1,0],"type":"memory","size":4}]},
               "b":{"y":[{"numaAffinity":[0,1],"type":"memory","size":4}],
                    "z":[{"numaAffinity":[0],"type":"memory","size":1}]}}})";
  absl::StatusOr<MemoryCheckpoint> mem = ParseMemoryCheckpoint(json, "m");
  ASSERT_TRUE(mem.ok()) << mem.status();
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), &*mem, nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  auto total = MemoryInUse(*s);
  EXPECT_EQ(total[0]["memory"], 6u);
  EXPECT_EQ(total[1]["memory"], 3u);
  const ContainerRecord* x = FindContainer(*s, "a", "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->memory.at(0).at("memory"), 4u);  // uid "a" first: node 0 had 5 left
  // Node 1 gave nothing but stays: the node set is the block, i.e. kubelet's cpuset.mems.
  ASSERT_EQ(x->memory.count(1), 1u);
  EXPECT_EQ(x->memory.at(1).at("memory"), 0u);
  EXPECT_EQ(x->numa_affinity, (std::vector<int>{0, 1}));
  const ContainerRecord* y = FindContainer(*s, "b", "y");
  EXPECT_EQ(y->memory.at(0).at("memory"), 1u);
  EXPECT_EQ(y->memory.at(1).at("memory"), 3u);
}

TEST(KubeletMemoryTest, ImportErrors) {
  struct Case {
    const char* json;
    const char* expect;
  };
  for (
      const Case& c : {
          Case{R"({"policyName":"Dynamic","checksum":0})", "unknown policy \"Dynamic\""},
          Case{
              R"({"policyName":"None","entries":{"p":{"c":[{"numaAffinity":[0],"type":"memory","size":1}]}},"checksum":0})",
              "policy is \"None\""},
          Case{
              R"({"policyName":"Static","entries":{"p":{"c":[{"type":"memory","size":1}]}},"checksum":0})",
              "without NUMA affinity"},
          Case{
              R"({"policyName":"Static","entries":{"p":{"c":[{"numaAffinity":[-1],"type":"memory","size":1}]}},"checksum":0})",
              "NUMA node -1"},
      }) {
    absl::StatusOr<MemoryCheckpoint> mem = ParseMemoryCheckpoint(c.json, "m");
    ASSERT_TRUE(mem.ok()) << c.json << ": " << mem.status();
    absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), &*mem, nullptr);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << c.json;
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos) << s.status();
  }
  EXPECT_EQ(ParseMemoryCheckpoint(R"({"machineState":{"zero":{}}})", "m").status().code(),
            absl::StatusCode::kDataLoss);
}

// ---- kubelet_internal_checkpoint ----

TEST(KubeletDeviceTest, FixtureVerifiesAndImports) {
  absl::StatusOr<DeviceCheckpoint> dev =
      ParseDeviceCheckpoint(ReadFixture("kubelet/device.json"), "kubelet_internal_checkpoint");
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->checksum, 3603460269u);
  EXPECT_EQ((*dev->pod_device_entries)[0].alloc_resp, std::string("\x0a\x03"
                                                                  "abc"));
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_entries.json"), nullptr, &*dev);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->pods.size(), 2u);
  const ContainerRecord* app = FindContainer(*s, "pod-uid-1", "app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->devices.at("nvidia.com/gpu"), (std::vector<std::string>{"GPU-a", "GPU-b"}));
  EXPECT_FALSE(app->exclusive);
  EXPECT_EQ(s->pods.at("pod-uid-1").qos, "");  // devices alone say nothing of QoS
}

TEST(KubeletDeviceTest, IsPciBusId) {
  EXPECT_TRUE(topologyd::IsPciBusId("0000:3b:00.0"));
  EXPECT_TRUE(topologyd::IsPciBusId("0000:af:1f.7"));
  // Upper case is not how the kernel or hwloc name a device, so no `pci` pool holds it.
  for (const char* id : {"GPU-4f1c", "0000:AF:1f.7", "0000:3b:00.8", "3b:00.0", "0000:3b:00.00",
                         "0000-3b:00.0", "0000:3g:00.0", ""}) {
    EXPECT_FALSE(topologyd::IsPciBusId(id)) << id;
  }
}

// A plugin that names devices by UUID: the import says how to declare the pool, with the NUMA
// nodes kubelet recorded; resources named by bus id need nothing.
TEST(KubeletDeviceTest, AdviceForIdsThatAreNotBusIds) {
  DeviceCheckpoint cp;
  cp.pod_device_entries.emplace();
  PodDevicesEntry gpu{.pod_uid = "p", .container_name = "c", .resource_name = "nvidia.com/gpu"};
  gpu.device_ids.emplace();
  (*gpu.device_ids)[0] = std::vector<std::string>{"GPU-a"};
  (*gpu.device_ids)[1] = std::vector<std::string>{"GPU-b"};
  cp.pod_device_entries->push_back(gpu);
  PodDevicesEntry nic{.pod_uid = "p", .container_name = "c", .resource_name = "example.com/nic"};
  nic.device_ids.emplace();
  (*nic.device_ids)[0] = std::vector<std::string>{"0000:3b:00.0"};
  cp.pod_device_entries->push_back(nic);
  cp.registered_devices.emplace();
  (*cp.registered_devices)["nvidia.com/gpu"] = std::vector<std::string>{"GPU-a", "GPU-b", "GPU-c"};
  (*cp.registered_devices)["example.com/nic"] =
      std::vector<std::string>{"0000:3b:00.0", "0000:3b:00.1"};

  const std::string advice = DevicePoolAdvice(cp);
  EXPECT_NE(advice.find("note: nvidia.com/gpu: kubelet's device plugin names 3 of its devices"),
            std::string::npos)
      << advice;
  EXPECT_NE(advice.find("  - resourceName: \"nvidia.com/gpu\"\n    devices:\n"
                        "      - {id: \"GPU-a\", numaNode: 0}\n"
                        "      - {id: \"GPU-b\", numaNode: 1}\n"
                        "      - {id: \"GPU-c\"}\n"),
            std::string::npos)
      << advice;
  EXPECT_EQ(advice.find("example.com/nic"), std::string::npos) << advice;

  cp.pod_device_entries->erase(cp.pod_device_entries->begin());
  cp.registered_devices->erase("nvidia.com/gpu");
  EXPECT_EQ(DevicePoolAdvice(cp), "");
}

TEST(KubeletDeviceTest, Errors) {
  std::string fixture = ReadFixture("kubelet/device.json");
  std::string tampered = fixture;
  tampered.replace(tampered.find("GPU-b\"]}"), 5, "GPU-c");
  EXPECT_EQ(ParseDeviceCheckpoint(tampered, "d").status().code(), absl::StatusCode::kDataLoss);

  absl::StatusOr<DeviceCheckpoint> legacy = ParseDeviceCheckpoint(
      R"({"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":["a"]}]},"Checksum":1})",
      "d");
  EXPECT_EQ(legacy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(legacy.status().message().find("1.19"), std::string::npos) << legacy.status();

  absl::StatusOr<DeviceCheckpoint> bad_b64 = ParseDeviceCheckpoint(
      R"({"Data":{"PodDeviceEntries":[{"AllocResp":"***"}]},"Checksum":1})", "d");
  EXPECT_EQ(bad_b64.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad_b64.status().message().find("Data.PodDeviceEntries[0].AllocResp"),
            std::string::npos)
      << bad_b64.status();
}

// ---- input that must not crash or flood messages ----

using ParseFn = std::function<absl::Status(const std::string& bytes)>;

ParseFn CpuParser() {
  return [](const std::string& b) { return ParseCpuCheckpoint(b, "cpu_manager_state").status(); };
}
ParseFn MemoryParser() {
  return [](const std::string& b) {
    return ParseMemoryCheckpoint(b, "memory_manager_state").status();
  };
}
ParseFn DeviceParser() {
  return [](const std::string& b) {
    return ParseDeviceCheckpoint(b, "kubelet_internal_checkpoint").status();
  };
}

// The newer formats' `data` string, with a matching checksum so that it gets parsed.
std::string WithDataString(const std::string& data) {
  return nlohmann::json{{"data", data}, {"dataChecksum", DataStringChecksum(data)}}.dump();
}

// 100,000 nested arrays used to overflow the stack when an error message serialized them.
TEST(KubeletCheckpointsTest, DeeplyNestedJsonIsDataLossNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  struct Case {
    const char* name;
    ParseFn parse;
    std::string bytes;
  };
  const Case cases[] = {
      {"cpu", CpuParser(), R"({"policyName":)" + deep + "}"},
      {"cpu data string", CpuParser(), WithDataString(R"({"policyName":)" + deep + "}")},
      {"memory", MemoryParser(), R"({"machineState":)" + deep + "}"},
      {"memory data string", MemoryParser(), WithDataString(R"({"entries":)" + deep + "}")},
      {"device", DeviceParser(), R"({"Data":{"PodDeviceEntries":)" + deep + "}}"},
  };
  for (const Case& c : cases) {
    const absl::Status s = c.parse(c.bytes);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.name << ": " << s;
    EXPECT_NE(s.message().find("checkpoint is corrupted: arrays and objects nest more than 64"),
              std::string::npos)
        << c.name << ": " << s;
    EXPECT_LT(s.message().size(), 400u) << c.name;
  }
}

TEST(KubeletCheckpointsTest, NestingWithinTheLimitIsRead) {
  // Unknown members are ignored however they are shaped, as long as they nest 64 levels or less.
  const std::string ignored = std::string(63, '[') + std::string(63, ']');
  absl::StatusOr<CpuCheckpoint> cp = ParseCpuCheckpoint(
      R"({"policyName":"none","defaultCpuSet":"0-1","future":)" + ignored + "}", "f");
  EXPECT_TRUE(cp.ok()) << cp.status();
}

TEST(KubeletCheckpointsTest, MessagesAboutHugeValuesStayShort) {
  const std::string newlines(100000, '\n');
  const nlohmann::json many = std::vector<int>(50000, 7);
  struct Case {
    const char* name;
    ParseFn parse;
    std::string bytes;
    std::string expect;
  };
  const Case cases[] = {
      {"array for a string", CpuParser(), nlohmann::json{{"policyName", many}}.dump(),
       "policyName: expected a string, found [7,7,7,"},
      {"string for a number", CpuParser(), nlohmann::json{{"checksum", newlines}}.dump(),
       "checksum: expected an unsigned integer, found \"\\x0a\\x0a"},
      {"huge map key", CpuParser(), nlohmann::json{{"entries", {{newlines, {{"c", 3}}}}}}.dump(),
       "entries[\"\\x0a\\x0a"},
      {"huge pre-1.18 key", CpuParser(), nlohmann::json{{"entries", {{newlines, "1-2"}}}}.dump(),
       "pre-1.18"},
      {"object for an array", MemoryParser(),
       nlohmann::json{{"entries", {{"p", {{"c", {{newlines, 1}}}}}}}}.dump(),
       "entries[\"p\"][\"c\"]: expected an array, found {\"\\n\\n"},
      {"array for an integer", MemoryParser(),
       nlohmann::json{{"machineState", {{"0", {{"numberOfAssignments", many}}}}}}.dump(),
       "machineState[\"0\"].numberOfAssignments: expected an integer, found [7,7,7,"},
      {"object for a list", DeviceParser(),
       nlohmann::json{{"Data", {{"PodDeviceEntries", {{newlines, 1}}}}}}.dump(),
       "Data.PodDeviceEntries: expected an array, found {\"\\n\\n"},
      {"unterminated string", DeviceParser(), R"({"Data":")" + newlines, "not valid JSON"},
  };
  for (const Case& c : cases) {
    const absl::Status s = c.parse(c.bytes);
    EXPECT_FALSE(s.ok()) << c.name;
    EXPECT_LT(s.message().size(), 600u) << c.name << ": " << s.message().substr(0, 600);
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << c.name;
    EXPECT_NE(s.message().find(c.expect), std::string::npos)
        << c.name << ": " << s.message().substr(0, 600);
  }
}

TEST(KubeletDeviceTest, DevicesOfTwoPodsConflict) {
  DeviceCheckpoint dev;
  dev.pod_device_entries.emplace();
  for (const char* uid : {"p", "q"}) {
    PodDevicesEntry e{.pod_uid = uid, .container_name = "c", .resource_name = "r"};
    e.device_ids.emplace();
    (*e.device_ids)[0] = std::vector<std::string>{"d0"};
    dev.pod_device_entries->push_back(e);
  }
  absl::StatusOr<State> s = ImportKubeletState(Cpu("cpu_static_0-7.json"), nullptr, &dev);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace topologyd::state::kubelet
