#include "lib/hints/policy.h"

#include "gtest/gtest.h"

namespace topologyd::hints {
namespace {

TEST(PolicyTest, ParsesKubeletNames) {
  for (Policy p :
       {Policy::kNone, Policy::kBestEffort, Policy::kRestricted, Policy::kSingleNumaNode}) {
    absl::StatusOr<Policy> parsed = ParsePolicy(PolicyName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  absl::StatusOr<Policy> bad = ParsePolicy("preferred");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown policy: \"preferred\"");
  EXPECT_FALSE(ParsePolicy("Best-Effort").ok());
  EXPECT_FALSE(ParsePolicy("").ok());
}

TEST(PolicyTest, AdmitRules) {
  EXPECT_TRUE(Admits(Policy::kNone, false));
  EXPECT_TRUE(Admits(Policy::kBestEffort, false));
  EXPECT_FALSE(Admits(Policy::kRestricted, false));
  EXPECT_TRUE(Admits(Policy::kRestricted, true));
  EXPECT_FALSE(Admits(Policy::kSingleNumaNode, false));
  EXPECT_TRUE(Admits(Policy::kSingleNumaNode, true));
}

TEST(PolicyTest, GoParseBool) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) EXPECT_TRUE(*ParseGoBool(t)) << t;
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_FALSE(*ParseGoBool(f)) << f;
  }
  for (const char* bad : {"yes", "tRUE", "", " true", "2", "on"}) {
    absl::StatusOr<bool> b = ParseGoBool(bad);
    ASSERT_FALSE(b.ok()) << bad;
  }
  EXPECT_EQ(ParseGoBool("yes").status().message(),
            "strconv.ParseBool: parsing \"yes\": invalid syntax");
}

TEST(PolicyTest, GoAtoi) {
  EXPECT_EQ(*ParseGoInt("16"), 16);
  EXPECT_EQ(*ParseGoInt("+8"), 8);
  EXPECT_EQ(*ParseGoInt("-3"), -3);
  EXPECT_EQ(*ParseGoInt("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(*ParseGoInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseGoInt("9223372036854775808").status().message(),
            "strconv.Atoi: parsing \"9223372036854775808\": value out of range");
  for (const char* bad : {"", "+", "1.5", " 1", "0x10", "1_0", "abc"}) {
    EXPECT_FALSE(ParseGoInt(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseGoInt("x").status().message(), "strconv.Atoi: parsing \"x\": invalid syntax");
}

TEST(PolicyTest, OptionsWithKubeletErrorTexts) {
  absl::StatusOr<PolicyOptions> none = ParsePolicyOptions({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->prefer_closest_numa_nodes);
  EXPECT_EQ(none->max_allowable_numa_nodes, 64);

  absl::StatusOr<PolicyOptions> both = ParsePolicyOptions(
      {{"prefer-closest-numa-nodes", "True"}, {"max-allowable-numa-nodes", "16"}});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->prefer_closest_numa_nodes);
  EXPECT_EQ(both->max_allowable_numa_nodes, 16);

  struct Case {
    std::map<std::string, std::string> options;
    const char* message;
  } cases[] = {
      {{{"prefer-most-allocated-numa-node", "true"}},
       "unknown Topology Manager Policy option: \"prefer-most-allocated-numa-node\""},
      {{{"prefer-closest-numa-nodes", "yes"}},
       "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: parsing \"yes\": "
       "invalid syntax"},
      {{{"max-allowable-numa-nodes", "many"}},
       "unable to convert policy option to integer \"max-allowable-numa-nodes\": strconv.Atoi: "
       "parsing \"many\": invalid syntax"},
      {{{"max-allowable-numa-nodes", "7"}},
       "the minimum value of \"max-allowable-numa-nodes\" should not be less than 8"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PolicyOptions> parsed = ParsePolicyOptions(c.options);
    ASSERT_FALSE(parsed.ok()) << c.message;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
  EXPECT_EQ(ParsePolicyOptions({{"max-allowable-numa-nodes", "8"}})->max_allowable_numa_nodes, 8);
}

TEST(PolicyTest, NumaNodeLimit) {
  PolicyOptions opts;
  EXPECT_TRUE(CheckNumaNodeLimit(64, Policy::kRestricted, opts).ok());
  opts.max_allowable_numa_nodes = 8;
  EXPECT_TRUE(CheckNumaNodeLimit(8, Policy::kRestricted, opts).ok());
  absl::Status s = CheckNumaNodeLimit(9, Policy::kBestEffort, opts);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "unsupported on machines with more than 8 NUMA Nodes");
  EXPECT_TRUE(CheckNumaNodeLimit(9, Policy::kNone, opts).ok());
}

TEST(PolicyTest, GoQuoteEscapes) {
  EXPECT_EQ(GoQuote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(GoQuote(std::string("\x01", 1)), "\"\\x01\"");
}

}  // namespace
}  // namespace topologyd::hints
