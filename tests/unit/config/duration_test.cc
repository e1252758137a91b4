#include "lib/config/duration.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::config {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// The largest duration: INT64_MAX nanoseconds, in whole milliseconds.
constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 1'000'000;

std::string DurationErrorOf(const std::string& text) {
  auto d = ParseDuration(text);
  EXPECT_FALSE(d.ok()) << text << " gave " << (d.ok() ? d->count() : 0) << "ms";
  return d.ok() ? "" : std::string(d.status().message());
}

TEST(DurationTest, ParsesGoSyntax) {
  EXPECT_EQ(*ParseDuration("10s"), milliseconds(10000));
  EXPECT_EQ(*ParseDuration("1m30s"), milliseconds(90000));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7200000));
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
  EXPECT_EQ(*ParseDuration(".5s"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("5.s"), milliseconds(5000));
  EXPECT_EQ(*ParseDuration("1h0.5m"), milliseconds(3630000));
}

TEST(DurationTest, RejectsMalformedText) {
  for (const char* bad : {"", "10", "s", "10x", "1..5s", "1 s", "10sec", ".s", "1e3s", "1s ",
                          "0x10s", "+", "-", "+-1s", "++1s", "1s+1s", "+10"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

// Go allows one leading sign; a plus changes nothing, a minus is refused unless the value is 0.
TEST(DurationTest, SignsAsInGo) {
  EXPECT_EQ(*ParseDuration("+10s"), milliseconds(10000));
  EXPECT_EQ(*ParseDuration("+0"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("-0"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("-0s"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("-0.0000000001s"), milliseconds(0));  // below 1ns: zero, as in Go
  for (const char* negative : {"-1s", "-500us", "-1ns"}) {
    const absl::StatusOr<milliseconds> parsed = ParseDuration(negative);
    ASSERT_FALSE(parsed.ok()) << negative;
    EXPECT_THAT(parsed.status().message(), HasSubstr("negative durations are not allowed"));
  }
}

// Decimal fractions are exact: no binary floating point between the text and the result.
TEST(DurationTest, DecimalsAreExact) {
  EXPECT_EQ(*ParseDuration("1.001s"), milliseconds(1001));
  EXPECT_EQ(*ParseDuration("2.01s"), milliseconds(2010));
  EXPECT_EQ(*ParseDuration("33.48s"), milliseconds(33480));
  EXPECT_EQ(*ParseDuration("0.1h"), milliseconds(360000));
  EXPECT_EQ(*ParseDuration("1.000000001s"), milliseconds(1000));
  EXPECT_EQ(*ParseDuration("0.3s0.7s"), milliseconds(1000));
}

TEST(DurationTest, MicrosecondsInEverySpelling) {
  EXPECT_EQ(*ParseDuration("1000us"), milliseconds(1));
  EXPECT_EQ(*ParseDuration("1000\u00b5s"), milliseconds(1));  // MICRO SIGN
  EXPECT_EQ(*ParseDuration("2000\u03bcs"), milliseconds(2));  // GREEK SMALL LETTER MU
  EXPECT_EQ(*ParseDuration("1000000ns"), milliseconds(1));
}

// Durations are kept in whole milliseconds; what is left below one is dropped.
TEST(DurationTest, SubMillisecondRemaindersAreTruncated) {
  EXPECT_EQ(*ParseDuration("10\u00b5s"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("1999us"), milliseconds(1));
  EXPECT_EQ(*ParseDuration("1.0009s"), milliseconds(1000));
  EXPECT_EQ(*ParseDuration("999999ns"), milliseconds(0));
}

TEST(DurationTest, NumbersTooLongForADoubleAreHandled) {
  EXPECT_THAT(DurationErrorOf("2" + std::string(308, '0') + "s"), HasSubstr("out of range"));
  EXPECT_EQ(*ParseDuration("0." + std::string(309, '0') + "1s"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("1." + std::string(400, '9') + "s"), milliseconds(1999));
  EXPECT_EQ(*ParseDuration(std::string(400, '0') + "1s"), milliseconds(1000));
}

TEST(DurationTest, MoreThanInt64NanosecondsIsOutOfRange) {
  EXPECT_EQ(*ParseDuration("9223372036854775807ns"), milliseconds(kMaxMs));
  EXPECT_EQ(*ParseDuration("2562047h47m16.854775807s"), milliseconds(kMaxMs));
  for (const char* big : {"9223372036854775808ns", "2562047h47m16.854775808s", "2562048h",
                          "9223372036854775807ns1ns", "99999999999999999999h"}) {
    EXPECT_THAT(DurationErrorOf(big), HasSubstr("out of range")) << big;
  }
}

TEST(DurationTest, ErrorsQuoteTheValue) {
  EXPECT_EQ(DurationErrorOf("10x"),
            "invalid duration \"10x\": unknown unit \"x\" (examples: 10s, 1m30s, 500ms)");
  EXPECT_THAT(DurationErrorOf("10"), HasSubstr("missing unit"));
  const std::string error = DurationErrorOf(std::string(1000, '1') + "\nx");
  EXPECT_LT(error.size(), 300U);
  EXPECT_THAT(error, HasSubstr("...(1002 bytes)"));
  EXPECT_THAT(DurationErrorOf("1s\n"), HasSubstr("\"1s\\x0a\""));
}

TEST(DurationTest, FormatsRoundTrip) {
  for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{500}, int64_t{1000}, int64_t{1500},
                     int64_t{60000}, int64_t{90000}, int64_t{3600000}, int64_t{3661001},
                     int64_t{86'400'000'123}, kMaxMs - 1, kMaxMs}) {
    std::string text = FormatDuration(milliseconds(ms));
    auto back = ParseDuration(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    EXPECT_EQ(back->count(), ms) << text;
  }
  // Every millisecond count over a range that crosses each unit.
  for (int64_t ms = 0; ms < 3'700'000; ms += 997) {
    EXPECT_EQ(ParseDuration(FormatDuration(milliseconds(ms)))->count(), ms);
  }
  EXPECT_EQ(FormatDuration(milliseconds(90000)), "1m30s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5s");
}

}  // namespace
}  // namespace topologyd::config
