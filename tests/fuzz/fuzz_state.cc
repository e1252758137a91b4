// DecodeState on arbitrary bytes (topologyd's own state file, read at every start). With an odd
// first byte the rest is JSON whose "checksum" the harness recomputes first, so that the fuzzer
// gets past the CRC check to the decoder proper (and, the harness writing it compactly with
// sorted members, to the fast path for canonical files). Whatever that fast path takes, the
// careful reader must read the same; accepted states must re-encode and decode to the same
// State, the re-encoding through the fast path.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/state/canonical_checkpoint.h"
#include "lib/state/checkpoint_codec.h"
#include "lib/state/crc32c.h"
#include "lib/state/json_limits.h"

namespace {

// `text` with its checksum set to what DecodeState computes (checkpoint_codec.cc: crc32c of
// {"data":DATA,"generation":G,"version":V} in compact form); `text` itself when that cannot be
// done.
std::string WithValidChecksum(std::string_view text) {
  // The harness's own dump() would overflow the stack on deep nesting, as the decoder did.
  if (!topologyd::state::CheckJsonNesting(text).ok()) return std::string(text);
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("data")) return std::string(text);
  const auto generation = doc.find("generation");
  const auto version = doc.find("version");
  if (generation == doc.end() || version == doc.end() || !generation->is_number_unsigned() ||
      !version->is_number_unsigned()) {
    return std::string(text);
  }
  const std::string unsummed =
      fmt::format(R"({{"data":{},"generation":{},"version":{}}})", doc["data"].dump(),
                  generation->get<uint64_t>(), version->get<uint64_t>());
  doc["checksum"] = fmt::format("crc32c:{:08x}", topologyd::state::Crc32c(unsummed));
  return doc.dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string input = (data[0] & 1) ? WithValidChecksum(text) : std::string(text);
  const auto fast = topologyd::state::DecodeCanonicalCheckpoint(input);
  const auto state = topologyd::state::internal::DecodeStateByDocument(input, "fuzz");
  if (fast && (!state.ok() || !(*fast == *state))) {
    fprintf(stderr, "the fast path took a file the careful reader %s\n",
            state.ok() ? "reads differently" : std::string(state.status().message()).c_str());
    abort();
  }
  if (!state.ok()) return 0;
  // A sidecar is an init container: no reader may take a file that says otherwise.
  for (const auto& [uid, pod] : state->pods) {
    for (const auto& c : pod.containers) {
      if (c.restartable && !c.init) {
        fprintf(stderr, "a restartable container that is not an init container was accepted\n");
        abort();
      }
    }
  }
  const auto encoded = topologyd::state::EncodeState(*state);
  if (!encoded.ok()) {
    fprintf(stderr, "EncodeState failed: %s\n", std::string(encoded.status().message()).c_str());
    abort();
  }
  const auto again = topologyd::state::DecodeState(*encoded, "fuzz re-encoded");
  if (!again.ok() || !(*again == *state)) {
    fprintf(stderr, "round trip failed: %s\n",
            again.ok() ? "different state" : std::string(again.status().message()).c_str());
    abort();
  }
  // Strings that need escaping keep an encoding off the fast path; all else takes it.
  const auto fast_again = topologyd::state::DecodeCanonicalCheckpoint(*encoded);
  if (fast_again && !(*fast_again == *state)) {
    fprintf(stderr, "the fast path read an encoded state differently\n");
    abort();
  }
  return 0;
}
