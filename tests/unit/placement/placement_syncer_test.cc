// The daemon's Placement syncer against the in-memory FakePlacement: a sync at start, periodic
// syncs that write nothing on a converged node, a reload that changes the tree (and one that
// does not), a failure counted and logged once then recovered, a target that cannot be built,
// and Stop() during a call that would not end by itself.
#include "lib/placement/placement_syncer.h"

#include <condition_variable>
#include <mutex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/mapping.h"
#include "tests/unit/placement/fake_placement.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::topologyd::placement::testing::FakePlacement;

constexpr milliseconds kLong{std::chrono::hours(1)};
constexpr milliseconds kPatience{std::chrono::seconds(30)};  // only ever waited out on failure

// The fake and the target, shared by the test and the syncer's thread.
class World {
 public:
  World() : options_(testing::TestHostOptions()) {}

  // The syncer's view: a target built from the current options, over the locked fake.
  PlacementSyncerOptions SyncerOptions() {
    PlacementSyncerOptions o;
    o.target = [this]() -> absl::StatusOr<SyncTarget> {
      std::lock_guard lock(mu_);
      ++targets_built_;
      changed_.notify_all();
      if (!target_error_.ok()) return target_error_;
      absl::StatusOr<ProviderTree> tree =
          BuildProviderTree(testing::TestHost(), testing::TestHostOffer(), options_);
      if (!tree.ok()) return tree.status();
      return SyncTarget{.tree = *tree, .url = "http://fake", .token = "admin"};
    };
    o.period = [this] {
      std::lock_guard lock(mu_);
      return period_;
    };
    o.transport =
        [this](const SyncTarget&,
               const std::atomic<bool>*) -> absl::StatusOr<std::unique_ptr<PlacementTransport>> {
      return std::make_unique<Locked>(this);
    };
    o.first_retry = milliseconds(10);
    o.log_info = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      info_.push_back(line);
    };
    o.log_error = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      errors_.push_back(line);
    };
    return o;
  }

  // Runs `change` on the fake, the options and the rest, with the syncer's thread kept out.
  template <class F>
  void Change(F change) {
    std::lock_guard lock(mu_);
    change(*this);
  }

  // Waits until the syncer has built `count` targets (a reload looked at), or kPatience.
  bool WaitForTargets(int count) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kPatience, [&] { return targets_built_ >= count; });
  }

  FakePlacement fake;
  PlacementOptions options_;
  milliseconds period_ = kLong;
  absl::Status target_error_;
  std::vector<std::string> info_;
  std::vector<std::string> errors_;

 private:
  class Locked : public PlacementTransport {
   public:
    explicit Locked(World* world) : world_(world) {}
    absl::StatusOr<HttpResponse> Send(const HttpRequest& r, const std::string& mv) override {
      std::lock_guard lock(world_->mu_);
      return world_->fake.Send(r, mv);
    }

   private:
    World* world_;
  };

  std::mutex mu_;
  std::condition_variable changed_;
  int targets_built_ = 0;
};

TEST(PlacementSyncer, SyncsAtStartUp) {
  World world;
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(world.SyncerOptions());
  ASSERT_TRUE(syncer->WaitForSyncs(1, kPatience));
  const PlacementSyncStatus s = syncer->Status();
  EXPECT_EQ(s.syncs, 1u);
  EXPECT_EQ(s.failed_syncs, 0u);
  EXPECT_TRUE(s.last_ok) << s.last_error;
  EXPECT_EQ(s.last_trigger, "start-up");
  EXPECT_EQ(s.endpoint, "http://fake");
  EXPECT_EQ(s.root_provider_name, "e2e-host");
  EXPECT_EQ(s.root_provider_uuid, "0102dcb9-f457-5456-a113-77a7f45bf491");
  EXPECT_EQ(s.microversion, "1.39");
  EXPECT_EQ(s.providers, 17u);
  EXPECT_EQ(s.providers_written, 17u);
  EXPECT_EQ(s.providers_deleted, 0u);
  EXPECT_TRUE(s.last_sync_time.has_value());
  EXPECT_EQ(s.last_success_time, s.last_sync_time);
  syncer->Stop();
  world.Change([](World& w) { EXPECT_THAT(w.fake.providers, SizeIs(17)); });
}

TEST(PlacementSyncer, PeriodicSyncsOfAConvergedNodeWriteNothing) {
  World world;
  world.period_ = milliseconds(20);
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(world.SyncerOptions());
  ASSERT_TRUE(syncer->WaitForSyncs(1, kPatience));
  size_t writes_after_first = 0;
  world.Change([&](World& w) { writes_after_first = w.fake.Writes().size(); });
  ASSERT_TRUE(syncer->WaitForSyncs(3, kPatience));
  syncer->Stop();
  const PlacementSyncStatus s = syncer->Status();
  EXPECT_GE(s.syncs, 3u);
  EXPECT_EQ(s.last_trigger, "period");
  EXPECT_TRUE(s.last_ok);
  EXPECT_EQ(s.providers_written, 0u);
  world.Change([&](World& w) { EXPECT_EQ(w.fake.Writes().size(), writes_after_first); });
}

TEST(PlacementSyncer, AReloadSyncsOnlyWhenTheTreeChanged) {
  World world;
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(world.SyncerOptions());
  ASSERT_TRUE(syncer->WaitForSyncs(1, kPatience));

  // A reload that leaves the tree as it was: the target is built again, nothing is synced.
  syncer->Refresh();
  ASSERT_TRUE(world.WaitForTargets(2));
  EXPECT_EQ(syncer->Status().syncs, 1u);

  // The VCPU ratio changes: the two NUMA nodes with shared CPUs get new inventories.
  size_t writes_before = 0;
  world.Change([&](World& w) {
    w.options_.vcpu_allocation_ratio = 2.0;
    writes_before = w.fake.Writes().size();
  });
  syncer->Refresh();
  ASSERT_TRUE(syncer->WaitForSyncs(2, kPatience));
  syncer->Stop();
  const PlacementSyncStatus s = syncer->Status();
  EXPECT_EQ(s.syncs, 2u);
  EXPECT_EQ(s.last_trigger, "reload");
  EXPECT_TRUE(s.last_ok) << s.last_error;
  EXPECT_EQ(s.providers_written, 2u);
  world.Change([&](World& w) {
    const std::vector<HttpRequest> writes = w.fake.Writes();
    ASSERT_EQ(writes.size(), writes_before + 2);
    for (size_t i = writes_before; i < writes.size(); ++i) {
      EXPECT_EQ(writes[i].method, "PUT");
      EXPECT_THAT(writes[i].path, HasSubstr("/inventories"));
      EXPECT_EQ((*writes[i].body)["inventories"]["VCPU"]["allocation_ratio"], 2.0);
    }
  });
}

TEST(PlacementSyncer, FailuresAreCountedAndLoggedOnceThenRecovered) {
  World world;
  world.fake.overrides["/"] = HttpResponse{503, "Service Unavailable"};
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(world.SyncerOptions());
  ASSERT_TRUE(syncer->WaitForSyncs(3, kPatience));
  PlacementSyncStatus s = syncer->Status();
  EXPECT_FALSE(s.last_ok);
  EXPECT_GE(s.failed_syncs, 3u);
  EXPECT_EQ(s.failed_syncs, s.syncs);
  EXPECT_EQ(s.consecutive_failures, s.failed_syncs);
  EXPECT_EQ(s.last_trigger, "retry");
  EXPECT_THAT(s.last_error, HasSubstr("GET /: HTTP 503"));
  EXPECT_FALSE(s.last_success_time.has_value());
  world.Change([](World& w) {
    ASSERT_THAT(w.errors_, SizeIs(1));  // one line per episode
    EXPECT_THAT(w.errors_[0], HasSubstr("placement: sync to http://fake failed (start-up)"));
    w.fake.overrides.clear();
  });

  // Placement is back: the next retry succeeds, the counters show the episode.
  for (uint64_t n = s.syncs + 1; !syncer->Status().last_ok; ++n) {
    ASSERT_TRUE(syncer->WaitForSyncs(n, kPatience));
  }
  syncer->Stop();
  s = syncer->Status();
  EXPECT_EQ(s.consecutive_failures, 0u);
  EXPECT_EQ(s.failed_syncs, s.syncs - 1);
  EXPECT_TRUE(s.last_success_time.has_value());
  EXPECT_EQ(s.providers_written, 17u);
  world.Change([](World& w) {
    EXPECT_THAT(w.errors_, SizeIs(1));
    ASSERT_FALSE(w.info_.empty());
    EXPECT_THAT(w.info_[0], HasSubstr("placement: sync to http://fake succeeds again after"));
  });
}

TEST(PlacementSyncer, ATargetThatCannotBeBuiltIsAFailedSync) {
  World world;
  world.target_error_ =
      absl::FailedPreconditionError("placement.tokenFile: cannot read /nowhere: No such file");
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(world.SyncerOptions());
  ASSERT_TRUE(syncer->WaitForSyncs(1, kPatience));
  syncer->Stop();
  const PlacementSyncStatus s = syncer->Status();
  EXPECT_FALSE(s.last_ok);
  EXPECT_EQ(s.last_error, "placement.tokenFile: cannot read /nowhere: No such file");
  world.Change([](World& w) { EXPECT_THAT(w.fake.requests, IsEmpty()); });
}

// A call that only ends when cancelled (or after a minute): Stop() cancels it and returns.
std::atomic<bool> hanging_entered{false};
std::atomic<bool> hanging_saw_cancel{false};

TEST(PlacementSyncer, StopCancelsACallInProgress) {
  struct Hanging : PlacementTransport {
    explicit Hanging(const std::atomic<bool>* c) : cancel(c) {}
    absl::StatusOr<HttpResponse> Send(const HttpRequest&, const std::string&) override {
      hanging_entered.store(true);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
      while (!cancel->load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(milliseconds(1));
      }
      hanging_saw_cancel.store(cancel->load());
      return absl::UnavailableError("cancelled");
    }
    const std::atomic<bool>* cancel;
  };
  World world;
  PlacementSyncerOptions options = world.SyncerOptions();
  options.transport =
      [](const SyncTarget&,
         const std::atomic<bool>* cancel) -> absl::StatusOr<std::unique_ptr<PlacementTransport>> {
    return std::make_unique<Hanging>(cancel);
  };
  std::unique_ptr<PlacementSyncer> syncer = PlacementSyncer::Start(std::move(options));
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!hanging_entered.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  ASSERT_TRUE(hanging_entered.load());
  syncer->Stop();
  EXPECT_TRUE(hanging_saw_cancel.load());
  // A sync cut short by the shutdown is neither counted nor logged as a failure.
  EXPECT_EQ(syncer->Status().syncs, 0u);
  world.Change([](World& w) { EXPECT_THAT(w.errors_, IsEmpty()); });
}

}  // namespace
}  // namespace topologyd::placement
