// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of topologyd's state
// file. The standard check value is Crc32c("123456789") == 0xE3069283.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace topologyd::state {

// CRC-32C of `data`. To checksum data given in pieces, pass the previous result as `crc`.
// Uses the CPU's CRC-32C instruction where there is one (x86-64 with SSE 4.2).
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

namespace internal {
// The same CRC from a lookup table, byte by byte: what Crc32c() falls back to. For tests.
uint32_t Crc32cByTable(std::string_view data, uint32_t crc = 0);
}  // namespace internal

}  // namespace topologyd::state
