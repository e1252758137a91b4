#include "lib/engine/group_commit.h"

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "tests/support/manual_clock.h"

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

// Operators tell the daemon's writer from gRPC's threads in `top -H` by this name.
TEST(GroupCommitTest, WritesRunOnAThreadNamedTpdCommit) {
  std::string writer_name;
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> {
    std::array<char, 16> name{};
    if (pthread_getname_np(pthread_self(), name.data(), name.size()) == 0) {
      writer_name = name.data();
    }
    return 1;
  });
  ASSERT_TRUE(committer.WaitDurable(1).ok());
  EXPECT_EQ(writer_name, "tpd-commit");
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

// A write the test holds open until it says so, recording what each write covered.
class GatedWrites {
 public:
  // The write function for a GroupCommitter: snapshots `current`, then waits for Open().
  absl::StatusOr<uint64_t> Write() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t snapshot = current_;
    ++started_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return opened_ >= started_; });
    written_.push_back(snapshot);
    return snapshot;
  }
  // Applies the next change in memory and returns its generation.
  uint64_t Apply() {
    std::lock_guard<std::mutex> lock(mu_);
    return ++current_;
  }
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return started_ >= n; });
  }
  // Lets the `n`-th write (1-based) finish.
  void Open(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    opened_ = n;
    changed_.notify_all();
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  std::vector<uint64_t> written() {
    std::lock_guard<std::mutex> lock(mu_);
    return written_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t current_ = 0;
  int started_ = 0;
  int opened_ = 0;
  std::vector<uint64_t> written_;
};

void WaitUntilWaiting(const GroupCommitter& committer, size_t n) {
  while (committer.waiting() < n) std::this_thread::yield();
}

// Polls `done` until it holds or 10 s pass; whether it held.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  return done();
}

// Moves `clock` on by `step` at most `steps` times until `done`; whether it came. In steps,
// because the writer reads the clock when it starts gathering, which the test cannot see: a
// single move could come before that and be lost. Each step lasts a little longer than `step`
// in real time too: a gathering writer looks at the clock again when its timed wait, as long as
// what it had left to gather, runs out.
bool AdvanceUntil(topologyd::testing::ManualClock& clock, std::chrono::milliseconds step, int steps,
                  const std::function<bool()>& done) {
  for (int i = 0; i < steps && !done(); ++i) {
    clock.Advance(step);
    std::this_thread::sleep_for(step + std::chrono::milliseconds(2));
  }
  return done();
}

// Drives the committer into "the last write served three callers": write 1 is held while
// changes 2..4 queue up behind it, and write 2 (covering them) takes `took` on the committer's
// clock.
void ServeABatchOfThree(GroupCommitter& committer, GatedWrites& gate,
                        topologyd::testing::ManualClock& clock, std::chrono::milliseconds took) {
  std::vector<std::thread> callers;
  callers.emplace_back([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  gate.WaitStarted(1);
  for (int i = 0; i < 3; ++i) {
    callers.emplace_back([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  }
  WaitUntilWaiting(committer, 4);
  gate.Open(1);
  gate.WaitStarted(2);
  clock.Advance(took);
  gate.Open(2);
  for (auto& t : callers) t.join();
  ASSERT_EQ(gate.written(), (std::vector<uint64_t>{1, 4}));
  ASSERT_EQ(committer.last_batch(), 3u);
}

TEST(GroupCommitTest, WriterWaitsForAsManyChangesAsTheLastWriteServed) {
  GatedWrites gate;
  topologyd::testing::ManualClock clock;
  GroupCommitter committer([&] { return gate.Write(); }, 0, std::chrono::seconds(30), nullptr,
                           &clock);
  // The last write took 2 s, so the next writer may gather that long; the clock stands still
  // meanwhile, so only the two more changes this test adds end its gathering.
  ServeABatchOfThree(committer, gate, clock, std::chrono::seconds(2));

  std::vector<std::thread> callers;
  callers.emplace_back([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  WaitUntilWaiting(committer, 1);
  // A writer that did not gather would start writing change 5 alone at once.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(gate.started(), 2);
  for (int i = 0; i < 2; ++i) {
    callers.emplace_back([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  }
  gate.Open(100);
  for (auto& t : callers) t.join();
  // One write for changes 5..7, not one for change 5 and another for 6 and 7.
  EXPECT_EQ(gate.written(), (std::vector<uint64_t>{1, 4, 7}));
  EXPECT_EQ(committer.writes(), 3u);
  EXPECT_EQ(committer.last_batch(), 3u);
}

// A caller told of a decision before it is durable waits for the same generation as the
// change's own waiter: that is one change, and the next lone change is not kept waiting for a
// second one.
TEST(GroupCommitTest, WaitersOfOneGenerationCountAsOneChange) {
  GatedWrites gate;
  topologyd::testing::ManualClock clock;
  GroupCommitter committer([&] { return gate.Write(); }, 0, std::chrono::seconds(30), nullptr,
                           &clock);
  const uint64_t g = gate.Apply();
  std::atomic<int> completed{0};
  for (int i = 0; i < 2; ++i) {
    committer.WhenDurable(g, [&](const absl::Status& s) {
      EXPECT_TRUE(s.ok()) << s;
      ++completed;
    });
  }
  gate.WaitStarted(1);
  // The write takes 2 s: a writer gathering for a second change would wait that long, and on
  // this clock that never ends by itself.
  clock.Advance(std::chrono::seconds(2));
  gate.Open(1);
  while (completed.load() < 2) std::this_thread::yield();
  EXPECT_EQ(committer.last_batch(), 1u);

  std::thread lone([&, next = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(next).ok()); });
  WaitUntilWaiting(committer, 1);
  EXPECT_TRUE(Eventually([&] { return gate.started() == 2; })) << "the lone change was held back";
  clock.Advance(std::chrono::hours(1));  // ends a wrong gathering, so that the test ends
  gate.Open(2);
  lone.join();
  EXPECT_EQ(gate.written(), (std::vector<uint64_t>{1, 2}));
}

TEST(GroupCommitTest, LoneWriterStopsGatheringAfterTheLastWriteTime) {
  GatedWrites gate;
  topologyd::testing::ManualClock clock;
  GroupCommitter committer([&] { return gate.Write(); }, 0, std::chrono::seconds(30), nullptr,
                           &clock);
  ServeABatchOfThree(committer, gate, clock, std::chrono::milliseconds(20));
  gate.Open(100);
  // Nobody else comes: once the 20 ms the last write took have passed, the change is written
  // alone, and the committer stops expecting company.
  std::thread lone([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  WaitUntilWaiting(committer, 1);
  EXPECT_EQ(gate.started(), 2) << "written before the gathering time was over";
  // A few times the 20 ms, not forever.
  EXPECT_TRUE(AdvanceUntil(clock, std::chrono::milliseconds(21), 5, [&] {
    return gate.started() == 3;
  })) << "still gathering";
  clock.Advance(std::chrono::hours(1));  // ends a wrong gathering, so that the test ends
  lone.join();
  EXPECT_EQ(gate.written(), (std::vector<uint64_t>{1, 4, 5}));
  EXPECT_EQ(committer.last_batch(), 1u);
  EXPECT_EQ(committer.waiting(), 0u);
}

TEST(GroupCommitTest, GatheringIsCappedByMaxGather) {
  GatedWrites gate;
  topologyd::testing::ManualClock clock;
  // The last write took 3 s, but the cap is 1 ms: a lone writer gathers 1 ms, not 3 s.
  GroupCommitter committer([&] { return gate.Write(); }, 0, std::chrono::milliseconds(1), nullptr,
                           &clock);
  ServeABatchOfThree(committer, gate, clock, std::chrono::seconds(3));
  gate.Open(100);
  std::thread lone([&, g = gate.Apply()] { EXPECT_TRUE(committer.WaitDurable(g).ok()); });
  WaitUntilWaiting(committer, 1);
  // 100 ms at most: past the cap, far from the 3 s.
  EXPECT_TRUE(AdvanceUntil(clock, std::chrono::milliseconds(2), 50, [&] {
    return gate.started() == 3;
  })) << "gathered past the cap";
  clock.Advance(std::chrono::hours(1));  // ends a wrong gathering, so that the test ends
  lone.join();
}

// WaitWritten waits for the `written` callback, which runs after the waiters were answered:
// what a shutdown needs before it stops the callback's listeners.
TEST(GroupCommitTest, WaitWrittenReturnsOnlyOnceTheWrittenCallbackHasReturned) {
  std::atomic<uint64_t> current{0};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<bool> in_written{false};
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> { return current.load(); }, 0,
                           GroupCommitter::kDefaultMaxGather,
                           [&] {
                             in_written = true;
                             std::unique_lock<std::mutex> lock(mu);
                             cv.wait(lock, [&] { return release; });
                           });
  current = 1;
  ASSERT_TRUE(committer.WaitDurable(1).ok());  // answered before `written` runs
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(committer.WaitWritten(1).ok());
    returned = true;
  });
  while (!in_written.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load()) << "returned while `written` was still running";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  waiter.join();
  EXPECT_TRUE(returned.load());
  // The generation the committer started from counts as written.
  GroupCommitter restored([] { return absl::StatusOr<uint64_t>(7); }, 7);
  EXPECT_TRUE(restored.WaitWritten(7).ok());
}

TEST(GroupCommitTest, WhenDurableCompletesOnTheWriterThreadOnlyAfterTheWrite) {
  GatedWrites gate;
  GroupCommitter committer([&] { return gate.Write(); });
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::Status> result;
  std::thread::id completed_on;
  committer.WhenDurable(gate.Apply(), [&](const absl::Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    result = s;
    completed_on = std::this_thread::get_id();
    cv.notify_all();
  });
  gate.WaitStarted(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_FALSE(result.has_value()) << "acknowledged before the write finished";
  }
  gate.Open(1);
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return result.has_value(); });
  EXPECT_TRUE(result->ok());
  EXPECT_NE(completed_on, std::this_thread::get_id());
  EXPECT_EQ(committer.durable_generation(), 1u);
}

TEST(GroupCommitTest, AnAlreadyDurableGenerationCompletesAtOnceOnTheCallersThread) {
  GroupCommitter committer([]() -> absl::StatusOr<uint64_t> { return uint64_t{5}; }, 5);
  std::thread::id completed_on;
  bool ok = false;
  committer.WhenDurable(3, [&](const absl::Status& s) {
    ok = s.ok();
    completed_on = std::this_thread::get_id();
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(completed_on, std::this_thread::get_id());
  EXPECT_EQ(committer.writes(), 0u);
}

TEST(GroupCommitTest, AFailedWriteFailsTheWaitersItWasForAndLaterOnesAreWrittenAgain) {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  bool release_first = false;
  uint64_t current = 0;
  GroupCommitter committer([&]() -> absl::StatusOr<uint64_t> {
    std::unique_lock<std::mutex> lock(mu);
    const uint64_t snapshot = current;
    if (++started == 1) {
      cv.notify_all();
      cv.wait(lock, [&] { return release_first; });
      return absl::UnavailableError("disk full");
    }
    return snapshot;
  });
  auto apply = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return ++current;
  };
  std::vector<absl::Status> results(3);
  std::vector<std::thread> callers;
  callers.emplace_back([&, g = apply()] { results[0] = committer.WaitDurable(g); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started == 1; });
  }
  // Arrives while the write meant for change 1 is under way: that write does not hold it.
  callers.emplace_back([&, g = apply()] { results[1] = committer.WaitDurable(g); });
  WaitUntilWaiting(committer, 2);
  {
    std::lock_guard<std::mutex> lock(mu);
    release_first = true;
    cv.notify_all();
  }
  callers[0].join();
  callers[1].join();
  EXPECT_EQ(results[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(results[1].ok()) << results[1];
  EXPECT_EQ(committer.durable_generation(), 2u);
  EXPECT_EQ(committer.writes(), 2u);
  EXPECT_EQ(committer.failed_writes(), 1u);
}

TEST(GroupCommitTest, DestroyingTheCommitterServesTheWaitersStillPending) {
  GatedWrites gate;
  std::atomic<int> acknowledged{0};
  {
    GroupCommitter committer([&] { return gate.Write(); });
    for (int i = 0; i < 3; ++i) {
      committer.WhenDurable(gate.Apply(), [&](const absl::Status& s) {
        if (s.ok()) ++acknowledged;
      });
    }
    gate.WaitStarted(1);
    gate.Open(100);
  }
  EXPECT_EQ(acknowledged.load(), 3);
  EXPECT_EQ(gate.written().back(), 3u);
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
  EXPECT_EQ(committer.failed_writes(), 1u);
  EXPECT_EQ(committer.waiting(), 0u) << "the failed caller still counted as waiting";
  EXPECT_TRUE(committer.WaitDurable(1).ok());
  EXPECT_EQ(committer.durable_generation(), 1u);
  EXPECT_TRUE(committer.last_write_status().ok());
  EXPECT_EQ(committer.writes(), 2u);
  EXPECT_EQ(committer.failed_writes(), 1u);
}

}  // namespace
}  // namespace topologyd::engine
