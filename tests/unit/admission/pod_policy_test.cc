// ResolvePodPolicy: the annotation values it echoes are quoted, escaped and shortened.
#include "lib/admission/pod_policy.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/admission/reasons.h"

namespace topologyd::admission {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// 100 KB with a newline that would start a forged log line.
const std::string kHugeValue = std::string(100'000, 'x') + "\nFORGED LOG LINE";

pod::Pod PodWith(std::string_view key, const std::string& value) {
  pod::Pod pod;
  pod.annotations.emplace(std::string(key), value);
  return pod;
}

NodePolicy Node(bool pod_policy_override) {
  NodePolicy node;
  node.policy = hints::Policy::kBestEffort;
  node.pod_policy_override = pod_policy_override;
  return node;
}

void ExpectQuotedAndShort(const std::string& message) {
  EXPECT_LT(message.size(), 400U) << message.substr(0, 400);
  EXPECT_THAT(message, HasSubstr("\"" + std::string(64, 'x') + "\"...(100016 bytes)"));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  EXPECT_THAT(message, Not(HasSubstr("FORGED")));
}

TEST(PodPolicyTest, RejectionQuotesALongPolicyValue) {
  const PodPolicy p = ResolvePodPolicy(Node(true), PodWith(kPolicyAnnotation, kHugeValue));
  ASSERT_TRUE(p.invalid_annotation_message.has_value());
  ExpectQuotedAndShort(*p.invalid_annotation_message);
  EXPECT_THAT(*p.invalid_annotation_message,
              HasSubstr("annotation topologyd.io/topology-policy: unknown policy \"xx"));
}

TEST(PodPolicyTest, RejectionQuotesALongScopeValue) {
  const PodPolicy p = ResolvePodPolicy(Node(true), PodWith(kScopeAnnotation, kHugeValue));
  ASSERT_TRUE(p.invalid_annotation_message.has_value());
  ExpectQuotedAndShort(*p.invalid_annotation_message);
  EXPECT_THAT(*p.invalid_annotation_message,
              HasSubstr("annotation topologyd.io/topology-scope: unknown scope \"xx"));
}

TEST(PodPolicyTest, IgnoredNotesQuoteLongValues) {
  for (std::string_view key : {kPolicyAnnotation, kScopeAnnotation}) {
    const PodPolicy p = ResolvePodPolicy(Node(false), PodWith(key, kHugeValue));
    EXPECT_FALSE(p.invalid_annotation_message.has_value());
    ASSERT_EQ(p.notes.size(), 1U) << key;
    ExpectQuotedAndShort(p.notes[0]);
    EXPECT_THAT(p.notes[0], HasSubstr(std::string(key) + "=\"xx"));
  }
}

TEST(PodPolicyTest, ControlBytesAreEscaped) {
  const PodPolicy p = ResolvePodPolicy(Node(true), PodWith(kPolicyAnnotation, "a\"b\n\x01"));
  ASSERT_TRUE(p.invalid_annotation_message.has_value());
  EXPECT_THAT(*p.invalid_annotation_message, HasSubstr("unknown policy \"a\\\"b\\x0a\\x01\""));
}

TEST(PodPolicyTest, ValidValuesStillApply) {
  pod::Pod pod = PodWith(kPolicyAnnotation, "single-numa-node");
  pod.annotations.emplace(std::string(kScopeAnnotation), "pod");
  const PodPolicy p = ResolvePodPolicy(Node(true), pod);
  EXPECT_FALSE(p.invalid_annotation_message.has_value());
  EXPECT_EQ(p.policy, hints::Policy::kSingleNumaNode);
  EXPECT_EQ(p.scope, Scope::kPod);
}

}  // namespace
}  // namespace topologyd::admission
