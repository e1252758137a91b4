#include "lib/state/checkpoint_codec.h"

#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/state/canonical_checkpoint.h"
#include "lib/state/crc32c.h"
#include "tests/unit/state/test_util.h"

namespace topologyd::state {
namespace {

using nlohmann::json;

State Example() {
  State s;
  s.generation = 12;
  s.pods["u1"] = PodRecord{.uid = "u1",
                           .namespace_name = "ns",
                           .name = "p",
                           .qos = "Guaranteed",
                           .containers = {ContainerRecord{.name = "app",
                                                          .cpus = CpuSet{2, 3},
                                                          .exclusive = true,
                                                          .numa_affinity = {0},
                                                          .memory = {{0, {{"memory", 1024}}}},
                                                          .devices = {{"gpu", {"g1", "g0"}}}}}};
  return s;
}

// Re-encodes a document whose data was edited, with a correct checksum, so the shape checks
// (not the checksum) are what the decode exercises.
std::string Resealed(json doc) {
  const json unsummed = {
      {"data", doc["data"]}, {"generation", doc["generation"]}, {"version", doc["version"]}};
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", Crc32c(unsummed.dump()));
  doc["checksum"] = std::string("crc32c:") + buf;
  return doc.dump();
}

absl::Status DecodeError(const std::string& bytes) {
  absl::StatusOr<State> s = DecodeState(bytes, "/var/lib/topologyd/state.json");
  return s.status();
}

TEST(CheckpointCodecTest, RoundTripsRandomStates) {
  std::mt19937 rng(20240601);
  for (int i = 0; i < 300; ++i) {
    const State s = testing::RandomState(rng);
    const std::string bytes = testing::Encoded(s);
    absl::StatusOr<State> back = DecodeState(bytes);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << bytes;
    EXPECT_EQ(*back, s) << bytes;
    EXPECT_EQ(testing::Encoded(*back), bytes) << "encoding is not stable";
  }
}

TEST(CheckpointCodecTest, EnvelopeShape) {
  const json doc = json::parse(testing::Encoded(Example()));
  EXPECT_EQ(doc["version"], 2);
  EXPECT_EQ(doc["generation"], 12);
  EXPECT_TRUE(doc["checksum"].get<std::string>().starts_with("crc32c:"));
  EXPECT_EQ(doc["checksum"].get<std::string>().size(), 15u);
  EXPECT_EQ(*StateChecksum(Example()), doc["checksum"]);
  const json& c = doc["data"]["pods"][0]["containers"][0];
  EXPECT_EQ(c["cpus"], "2-3");
  EXPECT_EQ(c["restartable"], false);
  EXPECT_EQ(c["numa_affinity"], json::array({0}));
  EXPECT_EQ(c["devices"]["gpu"], json::array({"g1", "g0"}));  // allocation order kept
  EXPECT_EQ(c["memory"][0], (json{{"numa_node", 0}, {"resource", "memory"}, {"bytes", 1024}}));
  EXPECT_EQ(doc["data"]["pods"][0]["namespace"], "ns");
}

TEST(CheckpointCodecTest, ReindentedFileStillLoads) {
  const json doc = json::parse(testing::Encoded(Example()));
  absl::StatusOr<State> s = DecodeState(doc.dump(4));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Example());
}

TEST(CheckpointCodecTest, EveryFlippedByteIsDataLoss) {
  const std::string bytes = testing::Encoded(Example());
  // The version digit is read before the checksum (a newer format may sum differently), so a
  // flip that makes it 3 reads as a newer format: refused too, just with another message.
  const size_t version_digit = bytes.find("\"version\": 2") + 11;
  ASSERT_EQ(bytes[version_digit], '2');
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char mask : {0x01, 0x20, 0x80}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ mask);
      absl::StatusOr<State> s = DecodeState(corrupt);
      // Changing the case of a letter inside "crc32c" or a hex digit can never pass either.
      ASSERT_FALSE(s.ok()) << "byte " << i << " mask " << int(mask) << "\n" << corrupt;
      const bool newer = i == version_digit && corrupt[i] == '3';
      EXPECT_EQ(s.status().code(),
                newer ? absl::StatusCode::kFailedPrecondition : absl::StatusCode::kDataLoss)
          << "byte " << i << ": " << s.status();
    }
  }
}

TEST(CheckpointCodecTest, ChecksumMismatchSaysWhatToDo) {
  json doc = json::parse(testing::Encoded(Example()));
  doc["data"]["pods"][0]["containers"][0]["cpus"] = "2-4";
  absl::Status s = DecodeError(doc.dump());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("/var/lib/topologyd/state.json"), std::string::npos) << s;
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s;
  EXPECT_NE(s.message().find("backup"), std::string::npos) << s;
  EXPECT_NE(s.message().find("drain the node"), std::string::npos) << s;

  doc = json::parse(testing::Encoded(Example()));
  doc["generation"] = 13;  // the generation is covered as well
  EXPECT_EQ(DecodeError(doc.dump()).code(), absl::StatusCode::kDataLoss);
}

TEST(CheckpointCodecTest, NotJson) {
  for (const std::string bad : {"", "{", "not json", "{\"version\": 1,}", "[1, 2]"}) {
    absl::Status s = DecodeError(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_NE(s.message().find("state.json"), std::string::npos) << s;
  }
  EXPECT_NE(DecodeError("{").message().find("not valid JSON"), std::string::npos);
}

// A file of 100,000 nested arrays used to overflow the stack in the checksum's dump(), so the
// daemon crashed at every start.
TEST(CheckpointCodecTest, DeeplyNestedDataIsDataLossNotACrash) {
  const int depth = 100000;
  const std::string bytes = R"({"version":1,"generation":0,"checksum":"x","data":)" +
                            std::string(depth, '[') + std::string(depth, ']') + "}";
  absl::Status s = DecodeError(bytes);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s.message().substr(0, 500);
  EXPECT_NE(s.message().find("/var/lib/topologyd/state.json"), std::string::npos) << s;
  EXPECT_NE(s.message().find("more than 64 levels"), std::string::npos) << s;
  EXPECT_NE(s.message().find("corrupt"), std::string::npos) << s;
}

TEST(CheckpointCodecTest, NestingLimitIsSixtyFourLevels) {
  // The envelope is level 1, so `data` may hold 63 levels; the checksum is what fails then.
  auto nested = [](int levels) {
    return R"({"version":1,"generation":0,"checksum":"x","data":)" + std::string(levels, '[') +
           std::string(levels, ']') + "}";
  };
  EXPECT_NE(DecodeError(nested(63)).message().find("checksum mismatch"), std::string::npos);
  EXPECT_NE(DecodeError(nested(64)).message().find("more than 64 levels"), std::string::npos);
}

TEST(CheckpointCodecTest, BracketsInsideStringsDoNotCountAsNesting) {
  State s = Example();
  s.pods["u1"].name = "\"\\" + std::string(1000, '[') + "\\\"" + std::string(1000, '{');
  absl::StatusOr<State> back = DecodeState(testing::Encoded(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
}

// Values from the file appear in messages escaped and cut, however large they are.
TEST(CheckpointCodecTest, MessagesAboutHugeValuesStayShort) {
  const json good = json::parse(testing::Encoded(Example()));
  const std::string big(100000, '\n');
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"huge array for a string",
       [](json& d) {
         d["data"]["pods"][0]["containers"][0]["cpus"] = json(std::vector<int>(50000, 7));
       },
       "data.pods[0].containers[0].cpus: expected a string, found array [7,7,7,"},
      {"huge string for a number", [&big](json& d) { d["generation"] = big; },
       "generation: expected a non-negative integer, found string \"\\x0a\\x0a"},
      {"huge object for a NUMA id",
       [&big](json& d) {
         d["data"]["pods"][0]["containers"][0]["numa_affinity"] =
             json::array({json::object({{big, 1}})});
       },
       "numa_affinity[0]: expected a NUMA node id, found {\"\\n\\n"},
      {"huge bad CPU list",
       [](json& d) {
         std::string list;
         for (int i = 0; i < 50000; ++i) list += "1\n";
         d["data"]["pods"][0]["containers"][0]["cpus"] = list;
       },
       "cpus: invalid CPU list \"1\\x0a1\\x0a"},
      {"huge unknown member", [&big](json& d) { d[big] = 1; }, "\"\\x0a\\x0a"},
      {"huge duplicate container name",
       [&big](json& d) {
         json& containers = d["data"]["pods"][0]["containers"];
         containers[0]["name"] = big;
         containers.push_back(containers[0]);
       },
       "listed twice"},
      {"huge device resource",
       [&big](json& d) { d["data"]["pods"][0]["containers"][0]["devices"][big] = {1}; },
       "devices[\"\\x0a"},
  };
  for (const Case& c : cases) {
    json doc = good;
    c.edit(doc);
    absl::Status s = DecodeError(Resealed(doc));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.name;
    EXPECT_LT(s.message().size(), 800u) << c.name << ": " << s.message().substr(0, 800);
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << c.name;
    EXPECT_NE(s.message().find(c.expect), std::string::npos)
        << c.name << ": " << s.message().substr(0, 800);
  }
}

TEST(CheckpointCodecTest, HugeStoredChecksumAndSyntaxErrorsAreCut) {
  json doc = json::parse(testing::Encoded(Example()));
  doc["checksum"] = std::string(100000, 'c');
  absl::Status s = DecodeError(doc.dump());
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s;
  EXPECT_LT(s.message().size(), 800u);

  // nlohmann repeats the whole bad token ("last read: ...") in its parse error.
  s = DecodeError(R"({"version":1,"checksum":")" + std::string(100000, 'c'));
  EXPECT_NE(s.message().find("not valid JSON"), std::string::npos) << s;
  EXPECT_NE(s.message().find("last read: \"\\\"cccc"), std::string::npos) << s;
  EXPECT_LT(s.message().size(), 800u);
}

TEST(CheckpointCodecTest, NewerVersionIsFailedPrecondition) {
  json doc = json::parse(testing::Encoded(Example()));
  doc["version"] = 3;
  doc["data"] = {{"anything", "new"}};
  doc["checksum"] = "sha256:whatever";
  absl::Status s = DecodeError(doc.dump());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("state format version 3 was written by a newer topologyd (this one "
                             "reads versions up to 2)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("upgrade"), std::string::npos) << s;
  EXPECT_NE(s.message().find("restore"), std::string::npos) << s;
}

TEST(CheckpointCodecTest, EnvelopeErrors) {
  const json good = json::parse(testing::Encoded(Example()));
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"version 0", [](json& d) { d["version"] = 0; }, "version: version 0 does not exist"},
      {"version string", [](json& d) { d["version"] = "1"; }, "version: expected a non-negative"},
      {"no version", [](json& d) { d.erase("version"); }, "missing \"version\""},
      {"negative generation", [](json& d) { d["generation"] = -1; }, "generation: expected"},
      {"generation that would wrap",
       [](json& d) { d["generation"] = std::numeric_limits<uint64_t>::max(); },
       "generation: 18446744073709551615 is beyond the largest generation"},
      {"no data", [](json& d) { d.erase("data"); }, "missing \"data\""},
      {"checksum number", [](json& d) { d["checksum"] = 5; }, "checksum: expected a string"},
      {"extra member", [](json& d) { d["extra"] = true; }, "extra: unknown member"},
  };
  for (const Case& c : cases) {
    json doc = good;
    c.edit(doc);
    absl::Status s = DecodeError(doc.dump());
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.name << ": " << s;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.name << ": " << s;
  }
}

TEST(CheckpointCodecTest, ShapeErrorsNameTheJsonPath) {
  State four;
  for (int i = 0; i < 4; ++i) {
    const std::string uid = "u" + std::to_string(i);
    four.pods[uid] = PodRecord{.uid = uid, .containers = {ContainerRecord{.name = "c"}}};
  }
  const json good = json::parse(testing::Encoded(four));
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"bad cpus", [](json& d) { d["pods"][3]["containers"][0]["cpus"] = "x"; },
       "data.pods[3].containers[0].cpus: invalid CPU list \"x\""},
      {"cpus type", [](json& d) { d["pods"][0]["containers"][0]["cpus"] = 3; },
       "data.pods[0].containers[0].cpus: expected a string, found number 3"},
      {"pods not array", [](json& d) { d["pods"] = json::object(); },
       "data.pods: expected an array"},
      {"pod not object", [](json& d) { d["pods"][1] = 7; }, "data.pods[1]: expected an object"},
      {"missing uid", [](json& d) { d["pods"][2].erase("uid"); }, "data.pods[2]: missing \"uid\""},
      {"empty uid", [](json& d) { d["pods"][2]["uid"] = ""; }, "data.pods[2].uid: empty pod uid"},
      {"duplicate uid", [](json& d) { d["pods"][1]["uid"] = "u0"; },
       "data.pods[1]: pod \"u0\" listed twice"},
      {"duplicate container",
       [](json& d) { d["pods"][0]["containers"].push_back(d["pods"][0]["containers"][0]); },
       "data.pods[0].containers[1]: container \"c\" listed twice"},
      {"init type", [](json& d) { d["pods"][0]["containers"][0]["init"] = "no"; },
       "data.pods[0].containers[0].init: expected true or false"},
      {"restartable type", [](json& d) { d["pods"][0]["containers"][0]["restartable"] = 1; },
       "data.pods[0].containers[0].restartable: expected true or false, found number 1"},
      {"no restartable", [](json& d) { d["pods"][2]["containers"][0].erase("restartable"); },
       "data.pods[2].containers[0]: missing \"restartable\""},
      {"restartable without init",
       [](json& d) { d["pods"][1]["containers"][0]["restartable"] = true; },
       "data.pods[1].containers[0].restartable: true for a container that is not an init "
       "container"},
      {"affinity",
       [](json& d) {
         d["pods"][0]["containers"][0]["numa_affinity"] = {0, -1};
       },
       "data.pods[0].containers[0].numa_affinity[1]: expected a NUMA node id, found -1"},
      {"memory bytes",
       [](json& d) {
         d["pods"][0]["containers"][0]["memory"] = {
             {{"numa_node", 0}, {"resource", "memory"}, {"bytes", 1.5}}};
       },
       "data.pods[0].containers[0].memory[0].bytes: expected a non-negative integer"},
      {"memory duplicate",
       [](json& d) {
         const json m = {{"numa_node", 1}, {"resource", "memory"}, {"bytes", 1}};
         d["pods"][0]["containers"][0]["memory"] = {m, m};
       },
       "data.pods[0].containers[0].memory[1]: NUMA node 1 resource \"memory\" listed twice"},
      {"memory node range",
       [](json& d) {
         d["pods"][0]["containers"][0]["memory"] = {
             {{"numa_node", 1u << 20}, {"resource", "memory"}, {"bytes", 1}}};
       },
       "data.pods[0].containers[0].memory[0].numa_node: 1048576 is larger than"},
      {"devices type", [](json& d) { d["pods"][0]["containers"][0]["devices"] = json::array(); },
       "data.pods[0].containers[0].devices: expected an object"},
      {"device id", [](json& d) { d["pods"][0]["containers"][0]["devices"]["gpu"] = {1}; },
       "data.pods[0].containers[0].devices[\"gpu\"][0]: expected a device id string"},
      {"unknown container member", [](json& d) { d["pods"][0]["containers"][0]["x"] = 1; },
       "data.pods[0].containers[0].x: unknown member"},
      {"unknown data member", [](json& d) { d["nodes"] = 1; }, "data.nodes: unknown member"},
  };
  for (const Case& c : cases) {
    json doc = good;
    c.edit(doc["data"]);
    absl::Status s = DecodeError(Resealed(doc));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.name << ": " << s;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.name << ": " << s;
  }
}

TEST(CheckpointCodecTest, ConflictingAllocationsAreFailedPrecondition) {
  State s;
  for (const char* uid : {"a", "b"}) {
    s.pods[uid] = PodRecord{
        .uid = uid,
        .containers = {ContainerRecord{.name = "c", .cpus = CpuSet{5}, .exclusive = true}}};
  }
  absl::Status status = DecodeError(testing::Encoded(s));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("CPUs 5 are held exclusively by both"), std::string::npos)
      << status;
}

TEST(CheckpointCodecTest, InvalidUtf8CannotBeEncoded) {
  State s;
  s.pods["\xff"] = PodRecord{.uid = "\xff"};
  EXPECT_EQ(EncodeState(s).status().code(), absl::StatusCode::kInvalidArgument);
}

// Every format ever written must keep loading.
TEST(CheckpointCodecTest, LoadsVersion1Fixture) {
  absl::StatusOr<State> s = DecodeState(testing::ReadFixture("v1/state.json"), "v1/state.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->generation, 7u);
  ASSERT_EQ(s->pods.size(), 3u);
  const PodRecord& pod = s->pods.at("6f1c2f4e-1b2a-4c55-9d1e-0a2b3c4d5e6f");
  EXPECT_EQ(pod.namespace_name, "ml");
  EXPECT_EQ(pod.name, "trainer-0");
  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_TRUE(pod.containers[0].init);
  for (const auto& [uid, p] : s->pods) {
    for (const ContainerRecord& c : p.containers) EXPECT_FALSE(c.restartable) << c.name;
  }
  const ContainerRecord& train = pod.containers[1];
  EXPECT_EQ(train.cpus.ToString(), "2-5,34-37");
  EXPECT_EQ(train.numa_affinity, (std::vector<int>{0, 1}));
  EXPECT_EQ(train.memory.at(0).at("hugepages-2Mi"), 1073741824u);
  EXPECT_EQ(train.memory.at(1).at("memory"), 2147483648u);
  EXPECT_EQ(train.devices.at("nvidia.com/gpu"), (std::vector<std::string>{"GPU-0b1c", "GPU-7f3a"}));
  EXPECT_EQ(train.container_id, "containerd://4d1e0f");
  EXPECT_EQ(ExclusiveCpus(*s).ToString(), "2-5,34-37,40-41");
  EXPECT_EQ(s->pods.at("pod-from-kubelet").namespace_name, "");
}

// Reading a version 1 file and saving it writes version 2 with the same data.
TEST(CheckpointCodecTest, ReencodingVersion1FixtureWritesVersion2) {
  absl::StatusOr<State> s = DecodeState(testing::ReadFixture("v1/state.json"), "v1/state.json");
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string again = testing::Encoded(*s);
  EXPECT_EQ(json::parse(again)["version"], 2);
  absl::StatusOr<State> back = DecodeState(again);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *s);
}

TEST(CheckpointCodecTest, LoadsVersion2Fixture) {
  absl::StatusOr<State> s = DecodeState(testing::ReadFixture("v2/state.json"), "v2/state.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->generation, 8u);
  const PodRecord& pod = s->pods.at("6f1c2f4e-1b2a-4c55-9d1e-0a2b3c4d5e6f");
  ASSERT_EQ(pod.containers.size(), 3u);
  EXPECT_EQ(pod.containers[0].name, "fetch");
  EXPECT_TRUE(pod.containers[0].init);
  EXPECT_FALSE(pod.containers[0].restartable);
  EXPECT_EQ(pod.containers[1].name, "log-shipper");
  EXPECT_TRUE(pod.containers[1].init);
  EXPECT_TRUE(pod.containers[1].restartable);
  EXPECT_FALSE(pod.containers[2].init);
  EXPECT_FALSE(pod.containers[2].restartable);
}

// The file layout is stable: re-encoding the fixture of the version EncodeState writes
// reproduces it byte for byte, so a change to the encoder that would alter written files shows
// up here.
TEST(CheckpointCodecTest, ReencodingVersion2FixtureReproducesItExactly) {
  const std::string bytes = testing::ReadFixture("v2/state.json");
  absl::StatusOr<State> s = DecodeState(bytes, "v2/state.json");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::string> again = EncodeState(*s);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, bytes);
}

// A pod with an init container, a sidecar and an app container.
State WithSidecar() {
  State s;
  s.generation = 3;
  s.pods["u1"] = PodRecord{
      .uid = "u1",
      .containers = {
          ContainerRecord{.name = "setup", .init = true, .cpus = CpuSet{2, 3}, .exclusive = true},
          ContainerRecord{.name = "proxy",
                          .init = true,
                          .restartable = true,
                          .cpus = CpuSet{4},
                          .exclusive = true},
          ContainerRecord{.name = "app", .cpus = CpuSet{2, 3}, .exclusive = true}}};
  return s;
}

TEST(CheckpointCodecTest, SidecarRoundTripsThroughBothReaders) {
  const std::string bytes = testing::Encoded(WithSidecar());
  const json doc = json::parse(bytes);
  const json& containers = doc["data"]["pods"][0]["containers"];
  EXPECT_EQ(containers[0]["restartable"], false);
  EXPECT_EQ(containers[1]["restartable"], true);
  EXPECT_EQ(containers[2]["restartable"], false);

  absl::StatusOr<State> careful = internal::DecodeStateByDocument(bytes, "test");
  ASSERT_TRUE(careful.ok()) << careful.status();
  EXPECT_EQ(*careful, WithSidecar());
  std::optional<State> fast = DecodeCanonicalCheckpoint(bytes);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, WithSidecar());
}

// A version 1 file, as version 1 wrote it: no "restartable" member.
std::string Version1File() {
  const json data = json::parse(R"({"pods": [{
    "containers": [
      {"cgroup": "", "container_id": "", "cpus": "2-3", "devices": {}, "exclusive": true,
       "init": true, "memory": [], "name": "setup", "numa_affinity": [0]},
      {"cgroup": "", "container_id": "", "cpus": "2-3", "devices": {}, "exclusive": true,
       "init": false, "memory": [], "name": "app", "numa_affinity": [0]}],
    "name": "p", "namespace": "ns", "qos": "Guaranteed", "uid": "u1"}]})");
  return testing::Sealed({{"version", 1}, {"generation", 5}, {"data", data}});
}

TEST(CheckpointCodecTest, Version1ContainersAreNotRestartable) {
  const std::string bytes = Version1File();
  for (const absl::StatusOr<State>& s :
       {DecodeState(bytes), internal::DecodeStateByDocument(bytes, "test")}) {
    ASSERT_TRUE(s.ok()) << s.status();
    const PodRecord& pod = s->pods.at("u1");
    ASSERT_EQ(pod.containers.size(), 2u);
    EXPECT_TRUE(pod.containers[0].init);
    EXPECT_FALSE(pod.containers[0].restartable);
    EXPECT_FALSE(pod.containers[1].restartable);
  }
  // Read the fast way too, to the same state.
  std::optional<State> fast = DecodeCanonicalCheckpoint(bytes);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, *DecodeState(bytes));
}

TEST(CheckpointCodecTest, RestartableIsNotPartOfVersion1) {
  json doc = json::parse(Version1File());
  doc["data"]["pods"][0]["containers"][0]["restartable"] = true;
  absl::Status s = DecodeError(testing::Sealed(doc));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("data.pods[0].containers[0].restartable: unknown member (not part "
                             "of state format version 1)"),
            std::string::npos)
      << s;
}

TEST(CheckpointCodecTest, RestartableWithoutInitCannotBeEncoded) {
  State s = WithSidecar();
  s.pods["u1"].containers[2].restartable = true;
  for (const absl::Status& status : {EncodeState(s).status(), StateChecksum(s).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("container \"app\" of pod \"u1\" is restartable but not an "
                                    "init container"),
              std::string::npos)
        << status;
  }
}

}  // namespace
}  // namespace topologyd::state
