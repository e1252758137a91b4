#include "lib/cpuset/cpuset.h"

#include <random>
#include <set>

#include "gtest/gtest.h"

namespace topologyd {
namespace {

TEST(CpuSetTest, ParsesAndFormatsLinuxListSyntax) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"", ""},           {"0", "0"},         {"0-3", "0-3"},    {"0-3,8,10-11", "0-3,8,10-11"},
      {"3,2,1,0", "0-3"}, {"0,2,4", "0,2,4"}, {"5-5", "5"},      {"0-1,1-2", "0-2"},
      {"63-65", "63-65"}, {"1023", "1023"},   {" 0-2\n", "0-2"}, {"0,1,3-4,6", "0-1,3-4,6"},
  };
  for (const auto& c : cases) {
    auto set = CpuSet::Parse(c.in);
    ASSERT_TRUE(set.ok()) << c.in << ": " << set.status();
    EXPECT_EQ(set->ToString(), c.out) << c.in;
  }
}

TEST(CpuSetTest, RejectsMalformedListsNamingTheElement) {
  for (const char* bad : {"a", "1-", "-1", "1--2", "3-1", ",", "1,,2", "1 ,2", "0x1", "+1", "1-2-3",
                          "99999999", "1,", "2000000"}) {
    auto set = CpuSet::Parse(bad);
    EXPECT_FALSE(set.ok()) << "accepted \"" << bad << "\"";
    if (!set.ok()) {
      EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(set.status().message().find("invalid CPU list"), std::string::npos);
    }
  }
}

// Each range used to be added one id at a time: this list of 999 bytes took seconds, 1 MB of
// it tens of minutes.
TEST(CpuSetTest, ManyOverlappingBigRangesParseToTheirUnion) {
  std::string list = "0-1048575";
  for (int i = 0; i < 100000; ++i) list += ",0-1048575";
  absl::StatusOr<CpuSet> set = CpuSet::Parse(list);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->Size(), 1 << 20);
  EXPECT_EQ(set->ToString(), "0-1048575");
  EXPECT_EQ(*set, CpuSet::Range(0, CpuSet::kMaxCpuId));
}

TEST(CpuSetTest, RangesAreFilledAcrossWordBoundaries) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"0-63", "0-63"},
      {"1-62", "1-62"},
      {"63-64", "63-64"},
      {"0-64", "0-64"},
      {"64-127", "64-127"},
      {"5-200,100-300", "5-300"},
      {"7-9,1-3,4-6", "1-9"},
      {"10-20,0-1,30", "0-1,10-20,30"},
      {"128-128,0", "0,128"},
      {"1048575", "1048575"},
      {"1048512-1048575", "1048512-1048575"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<CpuSet> set = CpuSet::Parse(c.in);
    ASSERT_TRUE(set.ok()) << c.in << ": " << set.status();
    EXPECT_EQ(set->ToString(), c.out) << c.in;
  }
  EXPECT_EQ(CpuSet::Range(3, 130).ToVector().size(), 128u);
  EXPECT_EQ(CpuSet::Range(-2, 1), CpuSet({0, 1}));
}

TEST(CpuSetTest, MatchesAddingOneIdAtATime) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string list;
    CpuSet expect;
    for (int i = 0; i < 5; ++i) {
      const int first = static_cast<int>(rng() % 400);
      const int last = first + static_cast<int>(rng() % 150);
      list += (list.empty() ? "" : ",") + std::to_string(first) + "-" + std::to_string(last);
      for (int id = first; id <= last; ++id) expect.Add(id);
    }
    absl::StatusOr<CpuSet> set = CpuSet::Parse(list);
    ASSERT_TRUE(set.ok()) << list;
    EXPECT_EQ(*set, expect) << list;
  }
}

TEST(CpuSetTest, MessagesAboutHugeListsAreShortAndEscaped) {
  std::string list;
  for (int i = 0; i < 20000; ++i) list += "1\n2,";  // ~100 KB
  for (const std::string& bad :
       {list, list + "x", "0-3," + std::string(100000, '9'), std::string(100000, '5') + "-1"}) {
    absl::StatusOr<CpuSet> set = CpuSet::Parse(bad);
    ASSERT_FALSE(set.ok());
    const std::string message(set.status().message());
    EXPECT_LT(message.size(), 400u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("invalid CPU list \""), std::string::npos) << message;
    EXPECT_NE(message.find("bytes)"), std::string::npos) << message;
  }
  absl::StatusOr<CpuSet> set = CpuSet::Parse("0-3,1\n2");
  EXPECT_EQ(set.status().message(), "invalid CPU list \"0-3,1\\x0a2\": bad element \"1\\x0a2\"");
  EXPECT_EQ(CpuSet::Parse("4-2").status().message(),
            "invalid CPU list \"4-2\": range \"4-2\" is descending");
}

TEST(CpuSetTest, SetAlgebra) {
  CpuSet a{0, 1, 2, 3, 64, 65};
  CpuSet b{2, 3, 4, 65, 130};
  EXPECT_EQ(a.Union(b).ToString(), "0-4,64-65,130");
  EXPECT_EQ(a.Intersection(b).ToString(), "2-3,65");
  EXPECT_EQ(a.IntersectionSize(b), 3);
  EXPECT_EQ(b.IntersectionSize(a), 3);
  EXPECT_EQ(a.IntersectionSize(CpuSet()), 0);
  EXPECT_EQ(a.Difference(b).ToString(), "0-1,64");
  EXPECT_EQ(b.Difference(a).ToString(), "4,130");
  EXPECT_TRUE(CpuSet({2, 65}).IsSubsetOf(a));
  EXPECT_FALSE(b.IsSubsetOf(a));
  EXPECT_TRUE(CpuSet().IsSubsetOf(a));
  EXPECT_TRUE(a.Intersects(b));
  EXPECT_FALSE(CpuSet({0}).Intersects(CpuSet({130})));
  EXPECT_EQ(a.Size(), 6);
  EXPECT_EQ(a.Min(), 0);
  EXPECT_EQ(b.Max(), 130);
  EXPECT_EQ(CpuSet().Min(), -1);
  EXPECT_EQ(CpuSet().Max(), -1);
}

TEST(CpuSetTest, EqualityIgnoresHowTheSetWasBuilt) {
  CpuSet a{1, 200};
  a.Remove(200);
  EXPECT_EQ(a, CpuSet({1}));
  EXPECT_EQ(CpuSet::Range(3, 1), CpuSet());
  EXPECT_TRUE(a.Difference(a).IsEmpty());
}

TEST(CpuSetTest, IteratesAscendingAndMatchesStdSet) {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::set<int> ref_a, ref_b;
    CpuSet a, b;
    for (int i = 0; i < 40; ++i) {
      int x = static_cast<int>(rng() % 300);
      int y = static_cast<int>(rng() % 300);
      ref_a.insert(x);
      a.Add(x);
      ref_b.insert(y);
      b.Add(y);
    }
    EXPECT_EQ(a.ToVector(), std::vector<int>(ref_a.begin(), ref_a.end()));
    std::set<int> ref_union = ref_a;
    ref_union.insert(ref_b.begin(), ref_b.end());
    EXPECT_EQ(a.Union(b).ToVector(), std::vector<int>(ref_union.begin(), ref_union.end()));
    std::vector<int> inter, diff;
    for (int x : ref_a) (ref_b.count(x) ? inter : diff).push_back(x);
    EXPECT_EQ(a.Intersection(b).ToVector(), inter);
    EXPECT_EQ(a.IntersectionSize(b), static_cast<int>(inter.size()));
    EXPECT_EQ(a.Difference(b).ToVector(), diff);
    // Round trip through text.
    auto parsed = CpuSet::Parse(a.ToString());
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
    EXPECT_EQ(a < b,
              std::lexicographical_compare(ref_a.begin(), ref_a.end(), ref_b.begin(), ref_b.end()));
  }
}

}  // namespace
}  // namespace topologyd
