// Table tests for Quantity::Parse against apimachinery's resource.ParseQuantity semantics
// (quantity grammar, rounding up to nano units, Value()/MilliValue()/AsInt64()).
#include "lib/pod/quantity.h"

#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::pod {
namespace {

using ::testing::HasSubstr;

struct ValueCase {
  const char* text;
  int64_t milli;
  int64_t value;
  std::optional<int64_t> as_int64;
};

TEST(QuantityTest, ParsesKubernetesQuantities) {
  const ValueCase cases[] = {
      {"2", 2000, 2, 2},
      {"1500m", 1500, 2, std::nullopt},
      {"0.5", 500, 1, std::nullopt},
      {"1Gi", 1073741824000, 1073741824, 1073741824},
      {"2Mi", 2097152000, 2097152, 2097152},
      {"1G", 1000000000000, 1000000000, 1000000000},
      {"1e3", 1000000, 1000, 1000},
      {"1E3", 1000000, 1000, 1000},
      {"1e-3", 1, 1, std::nullopt},
      {"1e+3", 1000000, 1000, 1000},
      {"128974848", 128974848000, 128974848, 128974848},
      {"129e6", 129000000000, 129000000, 129000000},
      {"123Mi", 128974848000, 128974848, 128974848},
      {"1.5Gi", 1610612736000, 1610612736, 1610612736},
      {"1k", 1000000, 1000, 1000},
      {"1Ki", 1024000, 1024, 1024},
      {"1M", 1000000000, 1000000, 1000000},
      {"1Ti", (int64_t{1} << 40) * 1000, int64_t{1} << 40, int64_t{1} << 40},
      {"1E", Quantity::kMaxWhole, 1000000000000000000, 1000000000000000000},  // milli saturates
      {"4Ei", Quantity::kMaxWhole, int64_t{1} << 62, int64_t{1} << 62},
      {"0", 0, 0, 0},
      {"00100", 100000, 100, 100},
      {"100m", 100, 1, std::nullopt},
      {"0.1", 100, 1, std::nullopt},
      {"0.0001", 1, 1, std::nullopt},  // MilliValue rounds up
      {"1n", 1, 1, std::nullopt},
      {"1u", 1, 1, std::nullopt},
      {"1e-20", 1, 1, std::nullopt},  // rounded up to the smallest nano value
      {"+1", 1000, 1, 1},
      {"1.", 1000, 1, 1},  // apimachinery quirk: empty fraction accepted
      {".5", 500, 1, std::nullopt},
      {"Gi", 0, 0, 0},  // apimachinery quirk: missing number means 0
      {"-", 0, 0, 0},   // likewise
      {"2000m", 2000, 2, 2},
      {"977m", 977, 1, std::nullopt},
  };
  for (const ValueCase& c : cases) {
    auto q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << c.text << ": " << q.status();
    EXPECT_EQ(q->Value(), c.value) << c.text;
    EXPECT_EQ(q->AsInt64(), c.as_int64) << c.text;
    EXPECT_EQ(q->MilliValue(), c.milli) << c.text;
  }
}

TEST(QuantityTest, FractionalBinaryValuesRoundUp) {
  // 0.1Gi = 107374182.4 bytes: Value() rounds up, AsInt64() refuses (memory manager rule).
  auto q = Quantity::Parse("0.1Gi");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->Value(), 107374183);
  EXPECT_EQ(q->AsInt64(), std::nullopt);
}

TEST(QuantityTest, NegativeValuesRoundAwayFromZero) {
  auto q = Quantity::Parse("-1500m");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->IsNegative());
  EXPECT_EQ(q->MilliValue(), -1500);
  EXPECT_EQ(q->Value(), -2);
}

TEST(QuantityTest, ComparesExactly) {
  auto parse = [](const char* s) { return *Quantity::Parse(s); };
  EXPECT_EQ(parse("1"), parse("1000m"));
  EXPECT_EQ(parse("1Gi"), parse("1073741824"));
  EXPECT_EQ(parse("1e3"), parse("1k"));
  EXPECT_LT(parse("999m"), parse("1"));
  EXPECT_LT(parse("1G"), parse("1Gi"));
  EXPECT_LT(parse("-1"), parse("-0.5"));
  EXPECT_LT(parse("-0.5"), parse("0.3"));
  EXPECT_NE(parse("1n"), parse("0"));
}

TEST(QuantityTest, AddsWithCarry) {
  auto parse = [](const char* s) { return *Quantity::Parse(s); };
  EXPECT_EQ(parse("500m") + parse("500m"), parse("1"));
  EXPECT_EQ(parse("1500m") + parse("2"), parse("3.5"));
  EXPECT_EQ(parse("4Ei") + parse("4Ei"), parse("4Ei"));  // saturates
  EXPECT_EQ(parse("1") + parse("-1500m"), parse("-500m"));
}

TEST(QuantityTest, FormatsForMessages) {
  EXPECT_EQ(Quantity::Parse("1Gi")->ToString(), "1073741824");
  EXPECT_EQ(Quantity::Parse("1500m")->ToString(), "1500m");
  EXPECT_EQ(Quantity::Parse("1n")->ToString(), "1n");
  EXPECT_EQ(Quantity::FromMilli(2500).ToString(), "2500m");
  EXPECT_EQ(Quantity::FromInt(3).ToString(), "3");
}

// ToString() used to compute whole * 10^9 in 64 bits, so large values with a fraction printed
// as other values ("0.1Ei" as "4611686018427387904m").
TEST(QuantityTest, LargeValuesWithAFractionFormatExactly) {
  struct Case {
    const char* text;
    const char* shown;
  } cases[] = {
      {"0.0633Ei", "72979931241613413580800000n"},  // 0.0633 * 2^60, exact in nanos
      {"0.1Ei", "115292150460684697600m"},
      {"20000000000.000000001", "20000000000000000001n"},
      {"-20000000000.000000001", "-20000000000000000001n"},
      {"4611686018427387903.999999999", "4611686018427387903999999999n"},
      {"18446744073.709551616", "18446744073709551616n"},  // just above 2^64 nanos
      {"0.5", "500m"},
      {"-0.000000001", "-1n"},
      {"1.000001", "1000001000n"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << c.text << ": " << q.status();
    EXPECT_EQ(q->ToString(), c.shown) << c.text;
    absl::StatusOr<Quantity> back = Quantity::Parse(q->ToString());
    ASSERT_TRUE(back.ok()) << c.text << ": " << back.status();
    EXPECT_EQ(*back, *q) << c.text << " -> " << q->ToString();
  }
}

TEST(QuantityTest, ToStringRoundTripsAcrossTheRange) {
  for (int64_t whole : {int64_t{0}, int64_t{1}, int64_t{18446744073}, int64_t{18446744074},
                        int64_t{1} << 40, Quantity::kMaxWhole - 1}) {
    for (const char* fraction : {"", ".000000001", ".5", ".123", ".999999999", ".0001"}) {
      for (const char* sign : {"", "-"}) {
        const std::string text = sign + std::to_string(whole) + fraction;
        absl::StatusOr<Quantity> q = Quantity::Parse(text);
        ASSERT_TRUE(q.ok()) << text << ": " << q.status();
        absl::StatusOr<Quantity> back = Quantity::Parse(q->ToString());
        ASSERT_TRUE(back.ok()) << text << " -> " << q->ToString() << ": " << back.status();
        EXPECT_EQ(*back, *q) << text << " -> " << q->ToString();
      }
    }
  }
}

// Every suffix doubled the whole digit string 10 to 60 times before its size was checked.
TEST(QuantityTest, LongDigitStringsAreDecidedFromTheirLength) {
  const std::string nines(100'000, '9');
  for (const std::string& text :
       {nines + "Ei", nines + "Ki", nines, nines + "E", "1" + nines + "m"}) {
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    ASSERT_FALSE(q.ok()) << text.substr(0, 20);
    EXPECT_THAT(std::string(q.status().message()), HasSubstr("too large"));
  }
  // A long fraction is read exactly: only its first digits and whether the rest is zero count.
  const std::string zeros(100'000, '0');
  EXPECT_EQ(*Quantity::Parse("1." + zeros + "Ei"), Quantity::FromInt(int64_t{1} << 60));
  EXPECT_EQ(Quantity::Parse("0." + zeros + "1Ei")->ToString(), "1n");
  EXPECT_EQ(Quantity::Parse("0." + zeros + "1")->ToString(), "1n");
  EXPECT_EQ(Quantity::Parse("1" + zeros + "e-100000")->ToString(), "1");
  EXPECT_EQ(Quantity::Parse("0.5" + zeros + "Ki")->ToString(), "512");
  EXPECT_EQ(Quantity::Parse("0.5" + zeros + "1Ki")->ToString(), "512000000001n");
  EXPECT_EQ(Quantity::Parse("0.0000000000001" + zeros + "1Ki")->ToString(), "1n");
  // 2^-60 Ei is exactly 1: the cut tail must not round it up.
  EXPECT_EQ(Quantity::Parse("0.000000000000000000867361737988403547205962240695953369140625" +
                            zeros + "Ei")
                ->ToString(),
            "1");
}

TEST(QuantityTest, RejectsMalformedQuantitiesNamingTheText) {
  struct Bad {
    const char* text;
    const char* reason;
  } cases[] = {
      {"", "regular expression"},
      {"abc", "regular expression"},
      {"1 Gi", "regular expression"},
      {"1.5.5", "regular expression"},
      {" 1", "regular expression"},
      {"1K", "suffix"},  // only lower-case k is a decimal SI suffix
      {"1Gii", "suffix"},
      {"1e", "suffix"},
      {"1e+", "suffix"},
      {"1ee3", "suffix"},
      {"--1", "suffix"},
      {"1e99999999999", "suffix"},  // exponent outside int32
      {"Ei", "numeric"},            // apimachinery's slow path needs a digit
      {"1e1000", "too large"},
      {"5Ei", "too large"},
      {"12345678901234567890", "too large"},
  };
  for (const Bad& c : cases) {
    auto q = Quantity::Parse(c.text);
    ASSERT_FALSE(q.ok()) << c.text;
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(q.status().message()),
                HasSubstr(std::string("invalid quantity \"") + c.text + "\""));
    EXPECT_THAT(std::string(q.status().message()), HasSubstr(c.reason)) << c.text;
  }
}

TEST(QuantityTest, MessagesShortenAndEscapeTheText) {
  // The text may come from an RPC: a huge one must not make a huge message (gRPC metadata).
  auto q = Quantity::Parse(std::string(100'000, '1') + "x");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(q.status().message());
  EXPECT_LT(message.size(), 250U) << message.substr(0, 300);
  EXPECT_THAT(message, HasSubstr("invalid quantity \"" + std::string(64, '1') +
                                 "\"...(100001 bytes): quantities must match"));
  q = Quantity::Parse(std::string("1\0\n\"\\", 5));
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(std::string(q.status().message()),
              HasSubstr("invalid quantity \"1\\x00\\x0a\\\"\\\\\": "));
}

}  // namespace
}  // namespace topologyd::pod
