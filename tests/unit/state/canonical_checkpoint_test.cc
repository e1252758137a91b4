// The fast path of DecodeState for canonical checkpoints: it takes what EncodeState writes, and
// whatever it takes, the careful reader reads the same.
#include "lib/state/canonical_checkpoint.h"

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/state/checkpoint_codec.h"
#include "tests/unit/state/test_util.h"

namespace topologyd::state {
namespace {

// Two pods, every container member set, names JSON need not escape.
State PodsWithEveryMember() {
  State s;
  s.generation = 41;
  s.pods["u1"] = PodRecord{
      .uid = "u1",
      .namespace_name = "ns",
      .name = "p",
      .qos = "Guaranteed",
      .containers = {
          ContainerRecord{.name = "init",
                          .init = true,
                          .cpus = CpuSet{2, 3},
                          .exclusive = true,
                          .numa_affinity = {0, 1}},
          ContainerRecord{.name = "sidecar",
                          .init = true,
                          .restartable = true,
                          .cpus = CpuSet{5},
                          .exclusive = true},
          ContainerRecord{.name = "app",
                          .cpus = CpuSet{2, 3},
                          .exclusive = true,
                          .numa_affinity = {0},
                          .memory = {{0, {{"memory", 1024}}}, {1, {{"hugepages-2Mi", 4}}}},
                          .devices = {{"gpu", {"g1", "g0"}}, {"nic", {}}},
                          .container_id = "containerd://ab",
                          .cgroup = "/kubepods/pod-u1/ab"}}};
  s.pods["u2"] = PodRecord{.uid = "u2",
                           .name = "q",
                           .containers = {ContainerRecord{.name = "c", .cpus = CpuSet{0, 1, 4}}}};
  return s;
}

// Whenever the fast path returns a state, the careful reader returns that state.
void ExpectAgreement(const std::string& bytes) {
  std::optional<State> fast = DecodeCanonicalCheckpoint(bytes);
  if (!fast) return;
  absl::StatusOr<State> careful = internal::DecodeStateByDocument(bytes, "test");
  ASSERT_TRUE(careful.ok()) << careful.status() << "\n" << bytes;
  EXPECT_EQ(*fast, *careful) << bytes;
}

TEST(CanonicalCheckpointTest, TakesWhatEncodeStateWrites) {
  std::optional<State> example = DecodeCanonicalCheckpoint(testing::Encoded(PodsWithEveryMember()));
  ASSERT_TRUE(example.has_value());
  EXPECT_EQ(*example, PodsWithEveryMember());
  EXPECT_EQ(DecodeCanonicalCheckpoint(testing::Encoded(State{})), State{});

  std::mt19937 rng(20261126);
  for (int i = 0; i < 300; ++i) {
    const State s = testing::RandomState(rng, /*escapes=*/false);
    std::optional<State> back = DecodeCanonicalCheckpoint(testing::Encoded(s));
    ASSERT_TRUE(back.has_value()) << testing::Encoded(s);
    EXPECT_EQ(*back, s);
  }
}

TEST(CanonicalCheckpointTest, TakesTheFixtureOfEveryVersion) {
  for (const char* fixture : {"v1/state.json", "v2/state.json"}) {
    const std::string bytes = testing::ReadFixture(fixture);
    std::optional<State> fast = DecodeCanonicalCheckpoint(bytes);
    ASSERT_TRUE(fast.has_value()) << fixture;
    absl::StatusOr<State> careful = internal::DecodeStateByDocument(bytes, "test");
    ASSERT_TRUE(careful.ok()) << careful.status();
    EXPECT_EQ(*fast, *careful) << fixture;
  }
}

// "restartable" is required from version 2 on, unknown before it, and true only with "init":
// the fast path leaves every file that breaks this to the careful reader, which refuses it,
// whether the version comes before the data or after it.
TEST(CanonicalCheckpointTest, RestartableFollowsTheVersion) {
  const nlohmann::json doc = nlohmann::json::parse(testing::Encoded(PodsWithEveryMember()));
  // `doc` as version `version`, "restartable" removed from every container when `erase`, and
  // then `edit` applied to the first pod's containers (init, sidecar, app).
  auto edited = [&doc](uint64_t version, bool erase,
                       const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json copy = doc;
    copy["version"] = version;
    for (nlohmann::json& pod : copy["data"]["pods"]) {
      for (nlohmann::json& c : pod["containers"]) {
        if (erase) c.erase("restartable");
      }
    }
    edit(copy["data"]["pods"][0]["containers"]);
    return testing::Sealed(copy);
  };
  const auto unchanged = [](nlohmann::json&) {};

  // The data as version 1 wrote it: taken, and the sidecar reads as not restartable.
  const std::string version1 = edited(1, true, unchanged);
  std::optional<State> fast = DecodeCanonicalCheckpoint(version1);
  ASSERT_TRUE(fast.has_value()) << version1;
  EXPECT_TRUE(fast->pods.at("u1").containers[1].init);
  EXPECT_FALSE(fast->pods.at("u1").containers[1].restartable);
  ExpectAgreement(version1);

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"version 1 with the member", edited(1, false, unchanged)},
      {"version 1, one container with the member",
       edited(1, true, [](nlohmann::json& containers) { containers[0]["restartable"] = false; })},
      {"version 2 without it",
       edited(2, false, [](nlohmann::json& containers) { containers[2].erase("restartable"); })},
      {"restartable without init",
       edited(2, false, [](nlohmann::json& containers) { containers[2]["restartable"] = true; })},
  };
  for (const auto& [name, sealed] : refused) {
    // Sealed() sorts the envelope, so the version follows the data; try it first as well.
    const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(sealed);
    nlohmann::ordered_json version_first = {{"version", parsed["version"]}};
    for (const auto& [key, value] : parsed.items()) version_first[key] = value;
    for (const std::string& bytes : {sealed, version_first.dump(2)}) {
      EXPECT_FALSE(DecodeCanonicalCheckpoint(bytes).has_value()) << name << "\n" << bytes;
      EXPECT_EQ(DecodeState(bytes).status().code(), absl::StatusCode::kDataLoss) << name;
    }
  }
}

// Only the layout of the data counts: the envelope's order and whitespace do not, and neither
// do escapes of characters the canonical form writes plainly.
TEST(CanonicalCheckpointTest, WhitespaceEnvelopeOrderAndNeedlessEscapesDoNotMatter) {
  const std::string encoded = testing::Encoded(PodsWithEveryMember());
  const nlohmann::json doc = nlohmann::json::parse(encoded);
  for (const std::string& bytes : {doc.dump(), doc.dump(7)}) {
    std::optional<State> fast = DecodeCanonicalCheckpoint(bytes);
    ASSERT_TRUE(fast.has_value()) << bytes;
    EXPECT_EQ(*fast, PodsWithEveryMember());
  }
  std::string escaped = encoded;
  const std::string plain = "\"namespace\": \"ns\"";
  ASSERT_NE(escaped.find(plain), std::string::npos);
  escaped.replace(escaped.find(plain), plain.size(), "\"namespace\": \"\\u006es\"");
  std::optional<State> fast = DecodeCanonicalCheckpoint(escaped);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, PodsWithEveryMember());
  ExpectAgreement(escaped);
}

// Files the fast path leaves to the careful reader, which still loads them.
TEST(CanonicalCheckpointTest, LeavesOtherLayoutsToTheCarefulReader) {
  std::mt19937 rng(7);
  State with_escapes;
  while (with_escapes.pods.empty()) with_escapes = testing::RandomState(rng, /*escapes=*/true);

  // The app container's members, "cgroup" moved last: the same data in another order.
  nlohmann::ordered_json reordered =
      nlohmann::ordered_json::parse(testing::Encoded(PodsWithEveryMember()));
  nlohmann::ordered_json& app = reordered["data"]["pods"][0]["containers"][2];
  const nlohmann::ordered_json cgroup = app["cgroup"];
  app.erase("cgroup");
  app["cgroup"] = cgroup;

  for (const auto& [bytes, expected] : {std::pair{testing::Encoded(with_escapes), with_escapes},
                                        std::pair{reordered.dump(2), PodsWithEveryMember()}}) {
    EXPECT_FALSE(DecodeCanonicalCheckpoint(bytes).has_value()) << bytes;
    absl::StatusOr<State> decoded = DecodeState(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(*decoded, expected);
  }
}

TEST(CanonicalCheckpointTest, RefusesWhatTheCarefulReaderRefuses) {
  const std::string encoded = testing::Encoded(PodsWithEveryMember());
  for (const std::string& bytes : {std::string(), std::string("[]"), std::string("{}"),
                                   encoded.substr(0, encoded.size() / 2), encoded + "x"}) {
    EXPECT_FALSE(DecodeCanonicalCheckpoint(bytes).has_value()) << bytes;
  }
  // A pod listed twice: canonical in every object, refused as a whole.
  nlohmann::json doc = nlohmann::json::parse(encoded);
  doc["data"]["pods"].push_back(doc["data"]["pods"][0]);
  EXPECT_FALSE(DecodeCanonicalCheckpoint(doc.dump()).has_value());
}

// Every byte of a checkpoint replaced, and every prefix: what the fast path takes, the careful
// reader takes the same way.
TEST(CanonicalCheckpointTest, AgreesWithTheCarefulReaderOnEveryDamagedCopy) {
  const std::string encoded = testing::Encoded(PodsWithEveryMember());
  for (size_t at = 0; at < encoded.size(); ++at) {
    for (char replacement : {' ', '0', '9', 'a', '"', '}', ']', ',', '\\'}) {
      std::string bytes = encoded;
      bytes[at] = replacement;
      ExpectAgreement(bytes);
    }
    ExpectAgreement(encoded.substr(0, at));
  }
}

}  // namespace
}  // namespace topologyd::state
