#include "lib/engine/group_commit.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace topologyd::engine {
namespace {

TEST(GroupCommitTest, EachChangeAloneIsWrittenBeforeItIsAcknowledged) {
  std::atomic<uint64_t> current{0};
  std::vector<uint64_t> written;
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> {
    written.push_back(current.load());
    return current.load();
  });
  for (uint64_t g = 1; g <= 3; ++g) {
    current = g;
    ASSERT_TRUE(committer.WaitDurable(g).ok());
    EXPECT_EQ(committer.durable_generation(), g);
  }
  EXPECT_EQ(written, (std::vector<uint64_t>{1, 2, 3}));
  // Already durable: no further write.
  EXPECT_TRUE(committer.WaitDurable(2).ok());
  EXPECT_EQ(committer.writes(), 3u);
}

TEST(GroupCommitTest, ConcurrentChangesShareWritesAndAllBecomeDurable) {
  std::mutex state_mu;
  uint64_t generation = 0;
  std::atomic<int> in_write{0};
  std::atomic<bool> overlapped{false};
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> {
    if (in_write.fetch_add(1) != 0) overlapped = true;
    uint64_t snapshot;
    {
      std::lock_guard<std::mutex> lock(state_mu);
      snapshot = generation;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow fsync
    in_write.fetch_sub(1);
    return snapshot;
  });
  constexpr int kThreads = 8;
  constexpr int kChanges = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kChanges; ++i) {
        uint64_t mine;
        {
          std::lock_guard<std::mutex> lock(state_mu);
          mine = ++generation;
        }
        if (!committer.WaitDurable(mine).ok() || committer.durable_generation() < mine) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(overlapped.load()) << "two writers ran at once";
  EXPECT_EQ(committer.durable_generation(), uint64_t{kThreads * kChanges});
  EXPECT_LT(committer.writes(), uint64_t{kThreads * kChanges}) << "no write was shared";
}

TEST(GroupCommitTest, FailedWriteFailsItsCallerAndTheNextCallerRetries) {
  int calls = 0;
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> {
    if (++calls == 1) return absl::UnavailableError("disk full");
    return uint64_t{1};
  });
  absl::Status first = committer.WaitDurable(1);
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(committer.durable_generation(), 0u);
  EXPECT_FALSE(committer.last_write_status().ok());
  EXPECT_TRUE(committer.WaitDurable(1).ok());
  EXPECT_EQ(committer.durable_generation(), 1u);
  EXPECT_TRUE(committer.last_write_status().ok());
}

}  // namespace
}  // namespace topologyd::engine
