// What the engine tells its EngineEvents observer: each decided admission (and a repeat that
// decided nothing), each checkpoint write, reconcile passes and reload outcomes; and Usage(),
// the pools and per-NUMA use of the durable state.
#include "lib/engine/engine_events.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/engine/engine.h"
#include "lib/state/file_system.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/pod_builder.h"
#include "tests/support/temp_dir.h"

namespace topologyd::engine {
namespace {

using ::testing::ElementsAre;

// Records every event; the engine calls it from several threads.
class RecordingEvents final : public EngineEvents {
 public:
  struct Admission {
    bool admitted;
    std::string reason;
    bool decided;
    hints::Policy policy;
    size_t containers;
    admission::ManagerCounts counts;
    bool timed;
  };
  void AdmissionDecided(const AdmissionEvent& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    admissions_.push_back({e.admitted, std::string(e.reason), e.decided, e.policy, e.containers,
                           e.counts, e.duration.count() > 0});
  }
  void CheckpointWritten(std::chrono::nanoseconds, bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.push_back(ok);
  }
  void Reconciled(std::chrono::nanoseconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++reconciles_;
  }
  void Reloaded(ReloadOutcome outcome) override {
    std::lock_guard<std::mutex> lock(mu_);
    reloads_.push_back(std::string(ReloadOutcomeName(outcome)));
  }
  std::vector<Admission> admissions() {
    std::lock_guard<std::mutex> lock(mu_);
    return admissions_;
  }
  std::vector<bool> writes() {
    std::lock_guard<std::mutex> lock(mu_);
    return writes_;
  }
  int reconciles() {
    std::lock_guard<std::mutex> lock(mu_);
    return reconciles_;
  }
  std::vector<std::string> reloads() {
    std::lock_guard<std::mutex> lock(mu_);
    return reloads_;
  }

 private:
  std::mutex mu_;
  std::vector<Admission> admissions_;
  std::vector<bool> writes_;
  int reconciles_ = 0;
  std::vector<std::string> reloads_;
};

void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

pod::Pod GuaranteedPod(const std::string& uid, const std::string& cpu) {
  return testing::Pod(uid, {testing::Ctr("app", {{"cpu", cpu}, {"memory", "1Gi"}})});
}

class EngineEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = topology::LoadTopology(
        topology::TopologySource::Synthetic("pack:2 numa:1 core:4 pu:2"));  // 16 CPUs, 2 nodes
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    topology_ = std::make_shared<const topology::Topology>(*loaded);
    config_.state_dir = dir_ + "/state";
    config_.cpu_manager_policy = "static";
    config_.reserved_system_cpus = "0";
    config_.topology_manager_policy = "single-numa-node";
    config_.cgroup.root = dir_ + "/cgroup";
    config_.cgroup.driver = cgroup::CgroupDriver::kCgroupfs;
    config_.cgroup.version = "v2";
    config_.source_file = "test.yaml";
    const std::string root = config_.cgroup.root;
    WriteText(root + "/cgroup.controllers", "cpuset cpu memory\n");
    WriteText(root + "/cgroup.subtree_control", "cpuset\n");
    WriteText(root + "/cgroup.procs", "");
    WriteText(root + "/cpuset.cpus", "0-15\n");
    WriteText(root + "/cpuset.mems", "0-1\n");
    WriteText(root + "/cpuset.cpus.effective", "0-15\n");
    EngineOptions options;
    options.config = std::make_shared<const config::Config>(config_);
    options.topology = topology_;
    options.fs = &fs_;
    auto enforcer = CpusetEnforcer::Open(config_.cgroup, nullptr);
    ASSERT_TRUE(enforcer.ok()) << enforcer.status();
    options.enforcer = *std::move(enforcer);
    options.events = &events_;
    auto started = Engine::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    engine_ = *std::move(started);
  }
  topologyd::testing::TempDir tmp_{"topologyd-events"};
  const std::string dir_ = tmp_.path();
  std::shared_ptr<const topology::Topology> topology_;
  config::Config config_;
  state::PosixFileSystem fs_;
  RecordingEvents events_;  // outlives the engine
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineEventsTest, EachAdmitReportsItsDecision) {
  ASSERT_TRUE(engine_->Admit(GuaranteedPod("a", "2")).ok());
  ASSERT_TRUE(engine_->Admit(GuaranteedPod("a", "2")).ok());  // held already: nothing decided
  auto refused = engine_->Admit(GuaranteedPod("huge", "12"));
  ASSERT_TRUE(refused.ok()) << refused.status();
  ASSERT_FALSE(refused->admitted);

  std::vector<RecordingEvents::Admission> seen = events_.admissions();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[0].admitted);
  EXPECT_TRUE(seen[0].decided);
  EXPECT_EQ(seen[0].policy, hints::Policy::kSingleNumaNode);
  EXPECT_EQ(seen[0].containers, 1u);
  EXPECT_EQ(seen[0].counts.cpu.requests, 1);
  EXPECT_TRUE(seen[0].timed);
  EXPECT_TRUE(seen[1].admitted);
  EXPECT_FALSE(seen[1].decided);
  EXPECT_FALSE(seen[2].admitted);
  EXPECT_TRUE(seen[2].decided);
  // 12 CPUs fit on no single node of 8: the merge refused it, nothing was allocated.
  EXPECT_EQ(seen[2].reason, "TopologyAffinityError");
  EXPECT_EQ(seen[2].counts.cpu.requests, 0);
}

TEST_F(EngineEventsTest, CheckpointWritesAreReported) {
  ASSERT_TRUE(engine_->Admit(GuaranteedPod("a", "2")).ok());
  ASSERT_TRUE(engine_->Release("a", std::nullopt).ok());
  const std::vector<bool> writes = events_.writes();
  ASSERT_GE(writes.size(), 2u);
  for (bool ok : writes) EXPECT_TRUE(ok);
}

TEST_F(EngineEventsTest, ReconcileAndReloadAreReported) {
  engine_->ReconcileOnce(std::chrono::steady_clock::now());
  EXPECT_EQ(events_.reconciles(), 1);
  config::Config same = config_;
  config::Config restart_only = config_;
  restart_only.cpu_manager_policy = "none";
  engine_->Reload(same);
  engine_->Reload(restart_only);
  engine_->Reload(absl::InvalidArgumentError("test.yaml:1: bad"));
  EXPECT_THAT(events_.reloads(), ElementsAre("applied", "partial", "rejected"));
}

TEST_F(EngineEventsTest, UsageShowsTheDurableState) {
  // Usage() reads the state the watchers are given, which is published just after the
  // replies: wait for it.
  std::promise<void> published;
  std::once_flag once;
  AllocationsWatch watch = engine_->WatchAllocations(
      [&](DurableAllocations) { std::call_once(once, [&] { published.set_value(); }); });
  ASSERT_TRUE(engine_->Admit(GuaranteedPod("a", "2")).ok());
  published.get_future().wait();
  engine_->StopWatchingAllocations(watch.id);
  const EngineUsage usage = engine_->Usage();
  EXPECT_EQ(usage.reserved.ToString(), "0");
  EXPECT_EQ(usage.exclusive_cpus.Size(), 2);
  EXPECT_FALSE(usage.shared_pool.Intersects(usage.exclusive_cpus));
  EXPECT_EQ(usage.shared_pool.Size(), 14);
  ASSERT_EQ(usage.per_numa.size(), 2u);
  EXPECT_EQ(usage.per_numa[0].exclusive_cpus.Size() + usage.per_numa[1].exclusive_cpus.Size(), 2);
  EXPECT_EQ(usage.per_numa[0].reserved_cpus.ToString(), "0");
}

}  // namespace
}  // namespace topologyd::engine
