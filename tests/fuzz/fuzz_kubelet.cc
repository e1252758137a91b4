// kubelet's checkpoint files as `topoctl state import-kubelet` reads them. The first byte picks
// the file (% 3: cpu_manager_state, memory_manager_state, kubelet_internal_checkpoint); the
// rest is its content. Accepted checkpoints are printed as kubelet's checksum input and
// imported; an imported state must encode and decode back to itself.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

#include "lib/kubelet_import/kubelet_checkpoints.h"
#include "lib/kubelet_import/kubelet_checksum.h"
#include "lib/kubelet_import/kubelet_import.h"
#include "lib/state/checkpoint_codec.h"

using namespace topologyd::state::kubelet;

namespace {

void Import(const CpuCheckpoint& cpu, const MemoryCheckpoint* memory,
            const DeviceCheckpoint* devices) {
  const auto state = ImportKubeletState(cpu, memory, devices);
  if (!state.ok()) return;
  const auto encoded = topologyd::state::EncodeState(*state);
  if (!encoded.ok()) return;  // e.g. an id that is not UTF-8: refused, which is fine
  const auto back = topologyd::state::DecodeState(*encoded, "imported");
  if (!back.ok() || !(*back == *state)) {
    fprintf(stderr, "imported state does not round-trip: %s\n",
            back.ok() ? "different state" : std::string(back.status().message()).c_str());
    abort();
  }
}

// The CPU checkpoint imported along with a fuzzed memory or device checkpoint.
const CpuCheckpoint& StaticCpu() {
  static const CpuCheckpoint* const checkpoint = [] {
    auto* c = new CpuCheckpoint;
    c->policy_name = "static";
    c->default_cpu_set = "0-63";
    c->entries.emplace();
    return c;
  }();
  return *checkpoint;
}

// The device checkpoint's checksum (FNV-1a over go-spew's rendering of its data) is beyond the
// fuzzer, so on a mismatch the text is read again with the checksum the reader reports
// ("... its contents hash to N; ...") in place of the member encoding/json would match.
absl::StatusOr<DeviceCheckpoint> ParseWithReportedChecksum(std::string_view text,
                                                           const absl::Status& mismatch) {
  const std::string message(mismatch.message());
  const size_t at = message.find("hash to ");
  if (at == std::string::npos) return mismatch;
  const unsigned long long hash = strtoull(message.c_str() + at + 8, nullptr, 10);
  // The reader parsed this text, so it is JSON of bounded nesting.
  auto doc = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return mismatch;
  bool replaced = false;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    std::string key = it.key();
    for (char& c : key) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    if (key == "checksum") {
      *it = hash;
      replaced = true;
    }
  }
  if (!replaced) doc["Checksum"] = hash;
  return ParseDeviceCheckpoint(doc.dump(), "kubelet_internal_checkpoint");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: {
      const auto checkpoint = ParseCpuCheckpoint(text, "cpu_manager_state");
      if (!checkpoint.ok()) break;
      (void)SpewCpuCheckpoint(*checkpoint);
      Import(*checkpoint, nullptr, nullptr);
      break;
    }
    case 1: {
      const auto checkpoint = ParseMemoryCheckpoint(text, "memory_manager_state");
      if (!checkpoint.ok()) break;
      (void)SpewMemoryCheckpoint(*checkpoint, /*with_pod_entries=*/true);
      Import(StaticCpu(), &*checkpoint, nullptr);
      break;
    }
    default: {
      auto checkpoint = ParseDeviceCheckpoint(text, "kubelet_internal_checkpoint");
      if (!checkpoint.ok()) checkpoint = ParseWithReportedChecksum(text, checkpoint.status());
      if (!checkpoint.ok()) break;
      (void)SpewDeviceData(*checkpoint);
      Import(StaticCpu(), nullptr, &*checkpoint);
      break;
    }
  }
  return 0;
}
