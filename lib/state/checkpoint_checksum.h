// The checkpoint's checksum (checkpoint_codec.h): the CRC-32C of
// {"data":DATA,"generation":G,"version":V}, DATA in canonical form. Summed in pieces, so that
// neither the encoder nor a decoder has to hold DATA's canonical text whole.
//
// Thread-compatible value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace topologyd::state {

class CheckpointChecksum {
 public:
  CheckpointChecksum();

  // Appends the next piece of DATA's canonical text.
  void AddData(std::string_view piece);

  // "crc32c:" and eight lower-case hex digits, for the data added so far.
  std::string Finish(uint64_t generation, uint64_t version) const;

 private:
  uint32_t crc_;
};

}  // namespace topologyd::state
