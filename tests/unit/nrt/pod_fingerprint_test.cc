// The pods fingerprint against the reference implementation's
// (k8stopologyawareschedwg/podfingerprint) own test vector, and its construction step by step.
#include "lib/nrt/pod_fingerprint.h"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace topologyd::nrt {
namespace {

TEST(PodFingerprintTest, NoPodsIsTheHashOfNothing) {
  // The reference feeds nothing to a fresh XXH64: the digest of the empty input.
  EXPECT_EQ(PodFingerprint().Sign(), "pfp0v001ef46db3751d8e999");
}

TEST(PodFingerprintTest, ReferenceImplementationTestVector) {
  // The reference implementation's test vector: podfingerprint_test.go, TestSignature,
  // "correct fingerprint", over its testdata/pods.json (tests/fixtures/nrt/README.md).
  std::ifstream in(std::string(TOPOLOGYD_SOURCE_DIR) +
                   "/tests/fixtures/nrt/podfingerprint_pods.json");
  ASSERT_TRUE(in) << "fixture missing";
  const nlohmann::json pods = nlohmann::json::parse(in);
  ASSERT_EQ(pods.size(), 259U);
  PodFingerprint fingerprint;
  for (const nlohmann::json& pod : pods) {
    fingerprint.Add(pod.at("namespace").get<std::string>(), pod.at("name").get<std::string>());
  }
  EXPECT_EQ(fingerprint.Sign(), "pfp0v001e477a4e3b2fc0ec6");
}

TEST(PodFingerprintTest, OrderDoesNotMatterButEveryPodDoes) {
  PodFingerprint a;
  a.Add("default", "web-1");
  a.Add("kube-system", "dns");
  PodFingerprint b;
  b.Add("kube-system", "dns");
  b.Add("default", "web-1");
  EXPECT_EQ(a.Sign(), b.Sign());
  PodFingerprint c;
  c.Add("default", "web-1");
  EXPECT_NE(a.Sign(), c.Sign());
  // The namespace is the seed, not a prefix: moving a character across changes the result.
  PodFingerprint d;
  d.Add("defaul", "tweb-1");
  EXPECT_NE(c.Sign(), d.Sign());
}

TEST(PodFingerprintTest, OnePodFollowsTheReferenceConstruction) {
  // By the reference's steps: h = XXH64(name, seed XXH64(namespace)); digest of h's 8
  // little-endian bytes; "pfp0v001" + hex.
  const uint64_t h = XXH64("web-1", 5, XXH64("default", 7, 0));
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(XXH64(bytes.data(), bytes.size(), 0)));
  PodFingerprint fingerprint;
  fingerprint.Add("default", "web-1");
  EXPECT_EQ(fingerprint.Sign(), std::string("pfp0v001") + hex);
}

}  // namespace
}  // namespace topologyd::nrt
