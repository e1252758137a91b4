// SyncProviderTree: makes a Placement service hold the desired provider tree, reading what it
// holds, planning the writes (sync_plan.h) and running them over a PlacementTransport (the
// libcurl one is placement_http.h; tests use fakes). The daemon and `topoctl placement sync`
// call the same function.
//
// Behaviour (docs/placement.md, "Sync"):
//   - `GET /` first: a server below microversion 1.36 is refused (FAILED_PRECONDITION) before
//     anything is written; requests then carry min(1.39, the server's maximum).
//   - A write refused with 409 placement.concurrent_update re-reads that provider and writes
//     again against the new generation (nothing when it already holds the desired state), at
//     most `max_conflict_retries` times, calling `wait_before_retry` before each.
//   - Providers of the tree no longer wanted are deleted, deepest first, unless they hold
//     allocations: those are reported as kept, as is one that gains some before its deletion.
//   - A failed write is reported and the sync goes on with the other providers (children of a
//     provider that could not be created are skipped).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "lib/placement/provider_tree.h"
#include "lib/placement/sync_plan.h"

namespace topologyd::placement {

struct HttpResponse {
  long status = 0;
  std::string body;
};

// One HTTP exchange with Placement. Implementations add the base URL, the token, the
// `OpenStack-API-Version: placement <microversion>` header (none when `microversion` is
// empty) and the JSON headers. A non-OK status is for a call that got no HTTP answer.
class PlacementTransport {
 public:
  virtual ~PlacementTransport() = default;
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request,
                                            const std::string& microversion) = 0;
};

inline constexpr char kNewestMicroversion[] = "1.39";
inline constexpr int kMinimumMinorVersion = 36;  // same_subtree, needed by every NUMA query

struct SyncOptions {
  bool dry_run = false;  // read and plan only
  int max_conflict_retries = 5;
  std::function<void(int attempt)> wait_before_retry;  // may be empty (no wait)
};

struct SyncReport {
  std::string microversion;
  SyncPlan plan;                    // as planned from the first read
  std::vector<std::string> done;    // DescribeCall() of each write that succeeded
  std::vector<std::string> kept;    // unwanted providers left in place, with why
  std::vector<std::string> errors;  // failed writes, with Placement's error code and detail
  int conflicts = 0;                // 409 concurrent_update answers met (and retried)
  std::set<std::string> written;    // uuids of providers created or changed
  int deleted = 0;                  // providers deleted
  bool ok() const { return errors.empty(); }
};

// Errors before any write: UNAVAILABLE when Placement cannot be reached or answers a read with
// an error, FAILED_PRECONDITION for a too old Placement, INVALID_ARGUMENT for an answer that
// cannot be read. Failed writes are in the report.
[[nodiscard]] absl::StatusOr<SyncReport> SyncProviderTree(PlacementTransport& transport,
                                                          const ProviderTree& desired,
                                                          const SyncOptions& options);

// What Placement holds for `desired`'s tree (custom classes and traits, the root's tree with
// inventories and traits, usages of providers that are not desired).
[[nodiscard]] absl::StatusOr<ObservedState> ReadObservedState(PlacementTransport& transport,
                                                              const ProviderTree& desired,
                                                              const std::string& microversion);

// The microversion to speak with a server whose `GET /` answered `body`.
[[nodiscard]] absl::StatusOr<std::string> NegotiateMicroversion(const std::string& body);

// "placement.concurrent_update: <detail>" from an error body (1.23+), or the raw body.
std::string ErrorText(const HttpResponse& response);
// The first error's code, "" when there is none.
std::string ErrorCode(const HttpResponse& response);

}  // namespace topologyd::placement
