// The size pre-check of hwloc synthetic descriptions: every description the repository uses and
// the grammar forms of hwloc 2.9 pass; too many PUs or NUMA nodes, indexes above the CpuSet
// limit and over-long text are refused with a message naming the description.
#include "lib/topology/synthetic_precheck.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace topologyd::topology {
namespace {

using namespace std::string_literals;

constexpr char kWhat[] = "hwloc synthetic topology \"test\"";

absl::Status Precheck(const std::string& description) {
  return PrecheckSyntheticDescription(description, kWhat);
}

TEST(SyntheticPrecheckTest, Limits) {
  EXPECT_EQ(kMaxSyntheticPus, 8192u);
  EXPECT_EQ(kMaxSyntheticArity, 1024u);
  EXPECT_EQ(kMaxSyntheticBytes, 65536u);
}

TEST(SyntheticPrecheckTest, AcceptsTheRepositorysDescriptions) {
  // config/, docs/ and tests/ (grep "synthetic").
  for (const char* description :
       {"pack:2 numa:2 core:4 pu:2", "pack:2 numa:2 l3:1 core:4 pu:2",
        "pack:2 numa:2(memory=8GB) l3:1 core:4 pu:2", "pack:2 numa:1 core:4 pu:2",
        "pack:2 numa:2 core:2 pu:2", "pack:2 numa:2 core:8 pu:2", "pack:2 numa:4 core:8 pu:2",
        "pack:2 numa:1 pu:2", "pack:1 core:2 pu:1", "pack:2 pu:4", "numa:2 pu:4", "numa:2 pu:3",
        "numa:2 core:2 pu:2", "pu:2", "pack:2 l3:2 core:3 pu:1", "pack:2 l3:2 core:3 pu:2",
        "pack:2 l3:2 core:3 pu:4", "pack:2 l3:2 core:3 pu:8", "pack:1 pu:2(indexes=0,1048575)"}) {
    EXPECT_TRUE(Precheck(description).ok()) << description << ": " << Precheck(description);
  }
}

TEST(SyntheticPrecheckTest, AcceptsHwlocGrammarForms) {
  for (const char* description : {
           "numa:2(memory=1GB) pu:4",                  // attributes
           "pack:2 l3:2(size=32MB) core:2 pu:2",       // cache size
           "pu:4(indexes=0,2,4,6)",                    // explicit indexes
           "pack:2 core:2 pu:2(indexes=pack:core)",    // interleaving by levels
           "pack:2 core:2 pu:2(indexes=4*2:2*2:1*2)",  // interleaving by step*count
           "pack:2 [numa(memory=2GB)] core:2 pu:2",    // attached NUMA node
           "pack:2 [numa(indexes=3,7)] [numa] core:2 pu:2",
           "(memory=1GB) pack:2 pu:2",  // root attributes
           "2 2 4 2",                   // no types
           "pack:0x2 pu:010",           // strtoul base 0, as hwloc reads counts
           "Package:2 Group:2 [NUMANode(memory=1073741824)] Core:4 PU:2",  // lstopo's export
           "pack:2\ncore:2 pu:2",             // hwloc also skips newlines
           "pack:8 core:512 pu:2",            // exactly kMaxSyntheticPus
           "pack:8 pu:1024",                  // exactly kMaxSyntheticArity
           "pu:2(indexes=0,00000001048575)",  // leading zeros
       }) {
    EXPECT_TRUE(Precheck(description).ok()) << description << ": " << Precheck(description);
  }
}

TEST(SyntheticPrecheckTest, LeavesGrammarErrorsToHwloc) {
  for (const char* description : {"", "pack:2 bogus:3", "pack:x", "pu:0", "pu", "pu:2(indexes=1",
                                  "pack:2 [numa pu:2", "pu:2(foo=1)", "pu:2)"}) {
    EXPECT_TRUE(Precheck(description).ok()) << description << ": " << Precheck(description);
  }
}

TEST(SyntheticPrecheckTest, IgnoresIndexListsHwlocIgnores) {
  // hwloc uses a list only when it has an entry for every object of the level, and only the
  // first ones; of two lists it keeps the last. Interleavings stay below the level's width. The
  // root's indexes are not used at all.
  for (const char* description :
       {"pack:2 pu:2(indexes=0,5000000)", "pu:2(indexes=0,1,4000000000)",
        "pu:2(indexes=0,,4000000000)", "pu:2(indexes=0,4000000000 indexes=0,1)",
        "pack:2(indexes=0,4000000000x) pu:1", "(indexes=4000000000) pu:2"}) {
    EXPECT_TRUE(Precheck(description).ok()) << description << ": " << Precheck(description);
  }
}

TEST(SyntheticPrecheckTest, RefusesTooManyPus) {
  struct Case {
    std::string description;
    std::string count;
  };
  for (const Case& c : std::vector<Case>{
           {"pack:1000 core:1000 pu:1000", "at least 1000000"},
           {"pack:8 core:512 pu:3", "at least 12288"},
           {"pu:8193", "at least 8193"},
           {"pack:4294967295 pu:4294967295", "at least 4294967295"},
           {"pack:2 pu:18446744073709551615", "more than 18446744073709551615"},
           {"pack:2 pu:99999999999999999999999", "more than 18446744073709551615"},
           {"pu:-18446744069414584321", "at least 4294967295"},  // hwloc reads 2^32-1
           {"2 1024 1024", "at least 2097152"},
           {"pack:0x100000 pu:2", "at least 1048576"},
       }) {
    absl::Status status = Precheck(c.description);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.description;
    EXPECT_EQ(status.message(),
              std::string(kWhat) + " describes " + c.count +
                  " PUs (the product of the level counts); at most 8192 are supported")
        << c.description;
  }
}

TEST(SyntheticPrecheckTest, RefusesTooManyAttachedNumaNodes) {
  absl::Status status = Precheck("pack:8 core:1024 [numa] [numa] pu:1");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            std::string(kWhat) + " attaches at least 16384 NUMA nodes; at most 8192 are supported");
}

TEST(SyntheticPrecheckTest, RefusesLevelsWithTooManyChildren) {
  for (const char* description : {"pu:1025", "pack:2 core:2000 pu:2", "numa:4 pu:2048"}) {
    absl::Status status = Precheck(description);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << description;
    EXPECT_THAT(std::string(status.message()),
                ::testing::EndsWith(" children per object; at most 1024 are supported"))
        << description;
  }
  EXPECT_EQ(
      Precheck("pack:2 core:2000 pu:2").message(),
      std::string(kWhat) + " gives one level 2000 children per object; at most 1024 are supported");
}

TEST(SyntheticPrecheckTest, RefusesIndexesAboveTheCpuSetLimit) {
  struct Case {
    std::string description;
    std::string index;
  };
  for (const Case& c : std::vector<Case>{
           {"pu:2(indexes=0,4000000000)", "4000000000"},
           {"pack:1 pu:2(indexes=0,1048576)", "1048576"},
           {"pack:2 core:1 pu:1(indexes=5,3000000)", "3000000"},
           {"pack:2 numa:2(indexes=0,1,2,2000000) pu:1", "2000000"},
           {"pack:2(memory=1GB indexes=7,1048576) pu:2", "1048576"},
           {"pack:2 [numa(indexes=0,2000000)] pu:2", "2000000"},
           {"pack:2(indexes=0,1) pu:2(indexes=9999999,0,1,2)", "9999999"},
           {"pu:1(indexes=123456789012345678901234567890)",
            "\"12345678901234567890\"...(30 bytes)"},
       }) {
    absl::Status status = Precheck(c.description);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.description;
    EXPECT_EQ(status.message(),
              std::string(kWhat) + " lists index " + c.index + "; the largest supported is 1048575")
        << c.description;
  }
}

TEST(SyntheticPrecheckTest, RefusesOverlongDescriptions) {
  std::string longest = "pu:2" + std::string(kMaxSyntheticBytes - 4, ' ');
  EXPECT_TRUE(Precheck(longest).ok());
  absl::Status status = Precheck(longest + " ");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            std::string(kWhat) + " is 65537 bytes long; at most 65536 are supported");
}

TEST(SyntheticPrecheckTest, ReadsUpToTheFirstNulLikeHwloc) {
  // hwloc gets the C string, so nothing after the NUL is built.
  EXPECT_TRUE(Precheck("pu:2\0 pu:99999999"s).ok());
  EXPECT_FALSE(Precheck("pu:99999999\0 pu:2"s).ok());
}

}  // namespace
}  // namespace topologyd::topology
