// The kubelet's rate limit on PodResources calls: a burst, then one call per 1/rate seconds.
#include "lib/podresources/rate_limit.h"

#include "gtest/gtest.h"

namespace topologyd::podresources {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, ABurstThenTheRate) {
  const TokenBucket::TimePoint start{};
  TokenBucket bucket(kCallsPerSecond, kBurstCalls, start);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(bucket.Take(start)) << i;
  EXPECT_FALSE(bucket.Take(start));
  // 100 a second: one more every 10 ms.
  EXPECT_FALSE(bucket.Take(start + milliseconds(5)));
  EXPECT_TRUE(bucket.Take(start + milliseconds(10)));
  EXPECT_FALSE(bucket.Take(start + milliseconds(10)));
  // Idle time saves up no more than the burst.
  const TokenBucket::TimePoint later = start + std::chrono::seconds(60);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(bucket.Take(later)) << i;
  EXPECT_FALSE(bucket.Take(later));
}

}  // namespace
}  // namespace topologyd::podresources
