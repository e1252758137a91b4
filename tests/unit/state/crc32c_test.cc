#include "lib/state/crc32c.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace topologyd::state {
namespace {

TEST(Crc32cTest, StandardCheckValue) { EXPECT_EQ(Crc32c("123456789"), 0xE3069283u); }

TEST(Crc32cTest, KnownVectors) {
  for (auto crc : {Crc32c, internal::Crc32cByTable}) {
    EXPECT_EQ(crc("", 0), 0u);
    EXPECT_EQ(crc("123456789", 0), 0xE3069283u);
    // RFC 3720 (iSCSI) B.4: 32 bytes of zeros and of 0xFF.
    EXPECT_EQ(crc(std::string(32, '\0'), 0), 0x8A9136AAu);
    EXPECT_EQ(crc(std::string(32, '\xFF'), 0), 0x62A8AB43u);
  }
}

// The instruction path (8 bytes at a time, then single bytes) against the table, on every
// length around the word size, at unaligned starts and from chained seeds.
TEST(Crc32cTest, InstructionAndTableAgree) {
  std::mt19937 rng(7);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t length = 0; length <= 70; ++length) {
      const std::string_view piece = std::string_view(bytes).substr(offset, length);
      const uint32_t seed = static_cast<uint32_t>(rng());
      EXPECT_EQ(Crc32c(piece, seed), internal::Crc32cByTable(piece, seed))
          << offset << " " << length;
    }
  }
  EXPECT_EQ(Crc32c(bytes), internal::Crc32cByTable(bytes));
}

TEST(Crc32cTest, Chains) {
  const std::string text = "topologyd state checkpoint";
  for (size_t split = 0; split <= text.size(); ++split) {
    EXPECT_EQ(Crc32c(text.substr(split), Crc32c(text.substr(0, split))), Crc32c(text)) << split;
  }
}

}  // namespace
}  // namespace topologyd::state
