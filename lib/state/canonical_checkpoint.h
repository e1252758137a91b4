// The fast path of DecodeState() (checkpoint_codec.h) for checkpoints laid out the way
// EncodeState() writes them, which is every checkpoint topologyd reads at start-up.
//
// DecodeState() reads a document into a JSON tree, sums the tree's canonical text and then
// walks it, so that any damage gets a message with its JSON path. For a file with thousands
// of containers, building and freeing that tree is most of the start-up's decoding time.
// DecodeCanonicalCheckpoint() instead reads the file once, as a stream of JSON events, into
// the State, summing the canonical text as it goes. It takes only files whose every object
// within "data" lists its members in canonical (sorted) order, once each, and whose strings
// need no escaping; the canonical text is then the events written back compactly.
//
// It never reports an error: for anything else, damage included, it returns nullopt and
// DecodeState() reads the file the careful way, which accepts or refuses it with its message.
// Whenever it returns a State, that careful reading returns the same State (checked by tests
// and by the state fuzzer).
//
// Pure function; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "lib/state/state.h"

namespace topologyd::state {

std::optional<State> DecodeCanonicalCheckpoint(std::string_view bytes);

}  // namespace topologyd::state
