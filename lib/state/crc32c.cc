#include "lib/state/crc32c.h"

#include <array>

namespace topologyd::state {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  // Pre- and post-inversion make the function chainable: Crc32c(b, Crc32c(a)) == Crc32c(a+b).
  crc = ~crc;
  for (unsigned char byte : data) crc = (crc >> 8) ^ kTable[(crc ^ byte) & 0xFFu];
  return ~crc;
}

}  // namespace topologyd::state
