#include "lib/engine/engine_events.h"

namespace topologyd::engine {

std::string_view ReloadOutcomeName(ReloadOutcome outcome) {
  switch (outcome) {
    case ReloadOutcome::kApplied:
      return "applied";
    case ReloadOutcome::kPartial:
      return "partial";
    case ReloadOutcome::kRejected:
      return "rejected";
  }
  return "applied";
}

}  // namespace topologyd::engine
