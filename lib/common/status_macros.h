// Status propagation helpers in the shape of upstream absl/status/status_macros.h,
// which the Debian 12 abseil (20220623) does not ship yet.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TOPOLOGYD_STATUS_CONCAT_INNER(a, b) a##b
#define TOPOLOGYD_STATUS_CONCAT(a, b) TOPOLOGYD_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` yields a non-OK absl::Status.
#define TOPOLOGYD_RETURN_IF_ERROR(expr)        \
  do {                                         \
    ::absl::Status topologyd_status_ = (expr); \
    if (!topologyd_status_.ok()) {             \
      return topologyd_status_;                \
    }                                          \
  } while (false)

// `lhs = value of (rexpr)` or returns its error. `lhs` may be a declaration.
#define TOPOLOGYD_ASSIGN_OR_RETURN(lhs, rexpr)                                                 \
  TOPOLOGYD_ASSIGN_OR_RETURN_IMPL(TOPOLOGYD_STATUS_CONCAT(topologyd_statusor_, __LINE__), lhs, \
                                  rexpr)

#define TOPOLOGYD_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (!statusor.ok()) {                                       \
    return std::move(statusor).status();                      \
  }                                                           \
  lhs = std::move(statusor).value()
