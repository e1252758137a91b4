// XXH64 against the specification's published values, and the pods fingerprint against the
// reference implementation's (k8stopologyawareschedwg/podfingerprint) own test vector.
#include "lib/nrt/pod_fingerprint.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "lib/nrt/xxhash64.h"

namespace topologyd::nrt {
namespace {

TEST(XxHash64Test, PublishedValues) {
  EXPECT_EQ(XxHash64(""), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(XxHash64("abc"), 0x44BC2CF5AD770999ULL);
  // Longer than 32 bytes: the four-lane loop (python-xxhash's documented examples).
  EXPECT_EQ(XxHash64("Nobody inspects the spammish repetition"), 0xFBCEA83C8A378BF1ULL);
  EXPECT_EQ(XxHash64("xxhash", 20141025), 0xB559B98D844E0635ULL);
}

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
  const uint64_t h = XxHash64("web-1", XxHash64("default"));
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(XxHash64(bytes)));
  PodFingerprint fingerprint;
  fingerprint.Add("default", "web-1");
  EXPECT_EQ(fingerprint.Sign(), std::string("pfp0v001") + hex);
}

}  // namespace
}  // namespace topologyd::nrt
