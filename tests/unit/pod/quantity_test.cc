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
