#include "shim/durability_wait.h"

#include <thread>

#include "gtest/gtest.h"

namespace topologyd::shim {
namespace {

TEST(DurabilityWaitTest, UnsettledUntilTheFirstOutcomeWhichStays) {
  DurabilityWait wait;
  EXPECT_FALSE(wait.outcome().has_value());
  wait.Settle(absl::UnavailableError("the checkpoint could not be written"));
  wait.Settle(absl::OkStatus());  // too late: the first outcome counts
  ASSERT_TRUE(wait.outcome().has_value());
  EXPECT_EQ(wait.outcome()->code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(wait.Wait().code(), absl::StatusCode::kUnavailable);
}

TEST(DurabilityWaitTest, WaitReturnsWhenAnotherThreadSettles) {
  DurabilityWait wait;
  std::thread settler([&] { wait.Settle(absl::OkStatus()); });
  EXPECT_TRUE(wait.Wait().ok());
  settler.join();
}

}  // namespace
}  // namespace topologyd::shim
