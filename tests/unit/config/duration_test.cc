#include "lib/config/duration.h"

#include "gtest/gtest.h"

namespace topologyd::config {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesGoSyntax) {
  EXPECT_EQ(*ParseDuration("10s"), milliseconds(10000));
  EXPECT_EQ(*ParseDuration("1m30s"), milliseconds(90000));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7200000));
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
}

TEST(DurationTest, RejectsMalformedText) {
  for (const char* bad : {"", "10", "s", "10x", "1..5s", "-1s", "1 s", "10sec"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

TEST(DurationTest, FormatsRoundTrip) {
  for (int64_t ms : {1, 500, 1000, 1500, 60000, 90000, 3600000, 3661001}) {
    std::string text = FormatDuration(milliseconds(ms));
    auto back = ParseDuration(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(back->count(), ms) << text;
  }
  EXPECT_EQ(FormatDuration(milliseconds(90000)), "1m30s");
}

}  // namespace
}  // namespace topologyd::config
