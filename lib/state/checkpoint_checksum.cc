#include "lib/state/checkpoint_checksum.h"

#include "fmt/format.h"

#include "lib/state/crc32c.h"

namespace topologyd::state {

// The members in sorted order, as the canonical form has them; the data comes first.
CheckpointChecksum::CheckpointChecksum() : crc_(Crc32c(R"({"data":)")) {}

void CheckpointChecksum::AddData(std::string_view piece) { crc_ = Crc32c(piece, crc_); }

std::string CheckpointChecksum::Finish(uint64_t generation, uint64_t version) const {
  const uint32_t crc =
      Crc32c(fmt::format(R"(,"generation":{},"version":{}}})", generation, version), crc_);
  return fmt::format("crc32c:{:08x}", crc);
}

}  // namespace topologyd::state
