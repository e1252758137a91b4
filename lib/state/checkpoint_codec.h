// The state checkpoint format: State <-> bytes.
//
// A checkpoint is one JSON document:
//
//   {
//     "version": 2,
//     "generation": 42,
//     "checksum": "crc32c:1a2b3c4d",
//     "data": {"pods": [{"uid": "...", "namespace": "...", "name": "...", "qos": "Guaranteed",
//                        "containers": [{"name": "app", "init": false, "restartable": false,
//                                        "cpus": "2-3", "exclusive": true, "numa_affinity": [0],
//                                        "memory": [{"numa_node": 0, "resource": "memory",
//                                                    "bytes": 1073741824}],
//                                        "devices": {"nvidia.com/gpu": ["GPU-a"]},
//                                        "container_id": "", "cgroup": ""}]}]}
//   }
//
// `checksum` is the CRC-32C of the canonical serialization (compact JSON, object keys sorted,
// as nlohmann::json::dump() writes it) of the document without its `checksum` member, i.e. of
// {"data": ..., "generation": N, "version": 2}. Covering generation and version as well as the
// data means no single flipped byte anywhere in the file goes unnoticed. Because the checksum is
// over the canonical form, not the file's bytes, a file re-indented by hand still loads.
//
// Pods are listed in uid order; containers in their record order. CPU sets use the Linux list
// syntax ("0-3,8"). Every version ever written stays loadable; its fixture lives in
// tests/fixtures/state/v<N>/. Versions:
//  1: the first.
//  2: adds the container member "restartable" (required; true only with "init": true). Version
//     1 files are read with restartable false: version 1 did not record sidecars.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "lib/state/state.h"

namespace topologyd::state {

// The format version EncodeState writes and the newest DecodeState reads.
inline constexpr uint64_t kCheckpointVersion = 2;
// Generations above this are refused on load (the engine adds one per change).
inline constexpr uint64_t kMaxGeneration = uint64_t{1} << 62;
// Largest NUMA node OS id a checkpoint may name; Linux's MAX_NUMNODES is at most 1024.
inline constexpr int kMaxCheckpointNumaId = 1 << 16;

// Serializes `state` (pretty-printed, newline-terminated) in format version kCheckpointVersion.
// INVALID_ARGUMENT when a string in the state is not valid UTF-8 (JSON cannot carry it), or a
// container is restartable but not an init container (no reader would take the file).
[[nodiscard]] absl::StatusOr<std::string> EncodeState(const State& state);

// Parses a checkpoint. `source` names the file in messages. Errors, each saying what the
// operator can do:
//  - DATA_LOSS: not JSON, arrays or objects nested deeper than kMaxJsonNesting
//    (json_limits.h), checksum mismatch, or a member missing / of the wrong type / with a bad
//    value (the message gives its JSON path, e.g.
//    `data.pods[3].containers[0].cpus: invalid CPU list "x"`; values from the file are shown
//    escaped and cut to 64 bytes);
//  - FAILED_PRECONDITION: the file's version is newer than kCheckpointVersion (written by a
//    newer topologyd), or the decoded state breaks an invariant of Validate() (state.h).
[[nodiscard]] absl::StatusOr<State> DecodeState(std::string_view bytes,
                                                std::string_view source = "state checkpoint");

namespace internal {
// DecodeState() without its fast path for canonical files (canonical_checkpoint.h): the
// reference that fast path is tested against.
[[nodiscard]] absl::StatusOr<State> DecodeStateByDocument(std::string_view bytes,
                                                          std::string_view source);
}  // namespace internal

// "crc32c:" and eight lower-case hex digits: the checksum EncodeState would write for `state`.
// INVALID_ARGUMENT as for EncodeState.
[[nodiscard]] absl::StatusOr<std::string> StateChecksum(const State& state);

}  // namespace topologyd::state
