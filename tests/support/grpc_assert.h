// ASSERT_GRPC_OK(expr): asserts that a grpc::Status is OK and shows its message when it is
// not, which ASSERT_TRUE(status.ok()) would not.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#define ASSERT_GRPC_OK(expr)                                        \
  do {                                                              \
    const grpc::Status grpc_status_ = (expr);                       \
    ASSERT_TRUE(grpc_status_.ok()) << grpc_status_.error_message(); \
  } while (false)
