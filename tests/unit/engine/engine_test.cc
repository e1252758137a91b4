// The engine end to end, in process: admission -> durable checkpoint -> cpusets in a fake
// cgroup v2 tree, restart recovery, refusal to start on state the config cannot keep, and
// failed checkpoint writes that must not acknowledge anything.
#include "lib/engine/engine.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "lib/state/file_store.h"
#include "lib/state/file_system.h"
#include "lib/topology/hwloc_source.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/manual_clock.h"
#include "tests/support/pod_builder.h"
#include "tests/support/temp_dir.h"

namespace topologyd::engine {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// A v2 cgroup directory as the kernel would show it, with the cpuset controller enabled.
void MakeCgroup(const std::string& dir, const std::string& cpus) {
  WriteText(dir + "/cgroup.controllers", "cpuset cpu memory\n");
  WriteText(dir + "/cgroup.subtree_control", "cpuset\n");
  WriteText(dir + "/cgroup.procs", "");
  WriteText(dir + "/cpuset.cpus", cpus + "\n");
  WriteText(dir + "/cpuset.mems", "0-1\n");
  WriteText(dir + "/cpuset.cpus.effective", cpus + "\n");
}

// Container "app" asking for `cpu` and 1Gi, requests == limits.
pod::Pod MakePod(const std::string& uid, const std::string& cpu) {
  return testing::Pod(uid, {testing::Ctr("app", {{"cpu", cpu}, {"memory", "1Gi"}})});
}

// Starts an Admit and returns its reply, which arrives once the checkpoint is durable.
std::future<absl::StatusOr<AdmitReply>> AdmitAsync(Engine& engine, const pod::Pod& pod) {
  auto reply = std::make_shared<std::promise<absl::StatusOr<AdmitReply>>>();
  std::future<absl::StatusOr<AdmitReply>> future = reply->get_future();
  engine.AdmitAsync(pod, [reply](absl::StatusOr<AdmitReply> r) { reply->set_value(std::move(r)); });
  return future;
}

// An admission answered when decided; nullopt when `done` was not called before AdmitAsync
// returned.
std::optional<absl::StatusOr<AdmitReply>> AdmitWhenDecided(Engine& engine, const pod::Pod& pod) {
  std::optional<absl::StatusOr<AdmitReply>> reply;
  engine.AdmitAsync(
      pod, [&](absl::StatusOr<AdmitReply> r) { reply = std::move(r); }, AnswerWhen::kDecided);
  return reply;
}

// Forwards to another FileSystem, except that while closed every SyncDir — the last step of
// a checkpoint write — waits until Open(): a checkpoint write the test holds open.
class GatedFileSystem final : public state::FileSystem {
 public:
  explicit GatedFileSystem(state::FileSystem* base) : base_(base) {}
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    opened_.notify_all();
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return base_->ReadFile(path);
  }
  absl::Status WriteNewFileAndSync(const std::string& path, std::string_view contents,
                                   mode_t mode) override {
    return base_->WriteNewFileAndSync(path, contents, mode);
  }
  absl::Status OverwriteUnsharedFileAndSync(const std::string& path,
                                            std::string_view contents) override {
    return base_->OverwriteUnsharedFileAndSync(path, contents);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    return base_->Rename(from, to);
  }
  absl::Status Exchange(const std::string& a, const std::string& b) override {
    return base_->Exchange(a, b);
  }
  absl::Status SyncDir(const std::string& dir) override {
    std::unique_lock<std::mutex> lock(mu_);
    opened_.wait(lock, [&] { return open_; });
    return base_->SyncDir(dir);
  }
  absl::Status Remove(const std::string& path) override { return base_->Remove(path); }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    return base_->ListDir(dir);
  }
  absl::Status MakeDir(const std::string& dir, mode_t mode) override {
    return base_->MakeDir(dir, mode);
  }

 private:
  state::FileSystem* base_;
  std::mutex mu_;
  std::condition_variable opened_;
  bool open_ = true;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = topology::LoadTopology(
        topology::TopologySource::Synthetic("pack:2 numa:1 core:4 pu:2"));  // 16 CPUs, 2 nodes
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    topology_ = std::make_shared<const topology::Topology>(*loaded);
    config_.state_dir = dir_.path() + "/state";
    config_.cpu_manager_policy = "static";
    config_.reserved_system_cpus = "0";
    config_.topology_manager_policy = "best-effort";
    config_.cgroup.root = dir_.path() + "/cgroup";
    config_.cgroup.driver = cgroup::CgroupDriver::kCgroupfs;
    config_.cgroup.version = "v2";
    config_.source_file = "test.yaml";
    MakeCgroup(config_.cgroup.root, "0-15");
  }

  absl::StatusOr<std::unique_ptr<Engine>> StartEngine(state::FileSystem* fs = nullptr) {
    EngineOptions options;
    options.config = std::make_shared<const config::Config>(config_);
    options.topology = topology_;
    options.fs = fs ? fs : &posix_;
    auto enforcer = CpusetEnforcer::Open(config_.cgroup, [this](const cgroup::WriteRecord&) {
      std::function<void()> hook;
      {
        std::lock_guard<std::mutex> lock(log_mu_);
        hook = std::exchange(on_next_cgroup_write_, nullptr);
      }
      if (hook) hook();
    });
    if (!enforcer.ok()) return enforcer.status();
    options.enforcer = *std::move(enforcer);
    options.stalled_write_after = stalled_write_after_;
    options.clock = clock_;
    options.log = [this](const std::string& line) { Log(&info_log_, line); };
    options.log_warning = [this](const std::string& line) { Log(&warning_log_, line); };
    options.log_error = [this](const std::string& line) { Log(&error_log_, line); };
    return Engine::Start(std::move(options));
  }

  // The engine logs from its writer thread.
  void Log(std::vector<std::string>* to, const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu_);
    to->push_back(line);
  }
  std::vector<std::string> Logged(const std::vector<std::string>& from) {
    std::lock_guard<std::mutex> lock(log_mu_);
    return from;
  }

  std::string Cg(const std::string& rel) { return config_.cgroup.root + "/" + rel; }

  topologyd::testing::TempDir dir_{"topologyd-engine"};
  config::Config config_;
  std::shared_ptr<const topology::Topology> topology_;
  state::PosixFileSystem posix_;
  std::mutex log_mu_;
  std::vector<std::string> info_log_;     // guarded by log_mu_
  std::vector<std::string> warning_log_;  // guarded by log_mu_
  std::vector<std::string> error_log_;    // guarded by log_mu_
  // Runs once, inside the engine's next cgroup write (guarded by log_mu_).
  std::function<void()> on_next_cgroup_write_;
  std::chrono::milliseconds stalled_write_after_ = std::chrono::seconds(10);
  const os::Clock* clock_ = nullptr;  // null: the engine's default, the steady clock
};

TEST_F(EngineTest, AdmitsDurablyAndIdempotentlyAndReleases) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto reply = (*engine)->Admit(MakePod("pod-a", "2"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_TRUE(reply->admitted) << reply->reason << ": " << reply->message;
  ASSERT_EQ(reply->containers.size(), 1u);
  EXPECT_TRUE(reply->containers[0].exclusive);
  EXPECT_EQ(reply->containers[0].cpus.Size(), 2);
  EXPECT_FALSE(reply->containers[0].cpus.Contains(0)) << "reserved CPU given out";
  EXPECT_EQ(reply->generation, 1u);
  // Acknowledged means on disk.
  EXPECT_THAT(ReadText(config_.state_dir + "/state.json"), HasSubstr("pod-a"));
  EXPECT_EQ((*engine)->Status().checkpoint.durable_generation, 1u);

  auto again = (*engine)->Admit(MakePod("pod-a", "2"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->containers[0].cpus, reply->containers[0].cpus);
  EXPECT_EQ(again->generation, 1u) << "idempotent admit changed state";

  AllocationsView view = (*engine)->ListAllocations();
  EXPECT_EQ(view.reserved, CpuSet({0}));
  EXPECT_FALSE(view.shared_pool.Intersects(reply->containers[0].cpus));

  auto released = (*engine)->Release("pod-a", std::nullopt);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 2u);
  EXPECT_TRUE((*engine)->ListAllocations().shared_pool.IsSubsetOf(CpuSet::Range(0, 15)));
  EXPECT_EQ((*engine)->ListAllocations().shared_pool.Size(), 16);
  EXPECT_EQ((*engine)->Release("pod-a", std::nullopt).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(EngineTest, RefusedAdmissionChangesNothing) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  auto reply = (*engine)->Admit(MakePod("big", "64"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_FALSE(reply->admitted);
  EXPECT_FALSE(reply->reason.empty());
  EXPECT_EQ((*engine)->Status().state_generation, 0u);
  EXPECT_TRUE((*engine)->ListAllocations().state.pods.empty());
  EXPECT_FALSE(std::filesystem::exists(config_.state_dir + "/state.json"));
}

TEST_F(EngineTest, AllocatePinsCgroupsAndSharedPoolFollowsExclusiveAdmissions) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  // A burstable pod in the shared pool, bound to its cgroup.
  pod::Pod shared = MakePod("shared", "500m");
  shared.containers[0].limits.clear();
  ASSERT_TRUE((*engine)->Admit(shared).ok());
  MakeCgroup(Cg("kubepods"), "0-15");
  MakeCgroup(Cg("kubepods/burstable"), "0-15");
  MakeCgroup(Cg("kubepods/burstable/podshared"), "0-15");
  MakeCgroup(Cg("kubepods/burstable/podshared/c1"), "0-15");
  auto bound = (*engine)->Allocate("shared", "app", "c1", "kubepods/burstable/podshared/c1");
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_FALSE(bound->exclusive);
  EXPECT_EQ(ReadText(Cg("kubepods/burstable/podshared/c1/cpuset.cpus")), "0-15");

  // An exclusive admission shrinks the shared container's cpuset.
  auto excl = (*engine)->Admit(MakePod("excl", "4"));
  ASSERT_TRUE(excl.ok() && excl->admitted);
  CpuSet pool = CpuSet::Range(0, 15).Difference(excl->containers[0].cpus);
  EXPECT_EQ(ReadText(Cg("kubepods/burstable/podshared/c1/cpuset.cpus")), pool.ToString());

  // Drift is repaired by reconcile.
  WriteText(Cg("kubepods/burstable/podshared/c1/cpuset.cpus"), "0-15\n");
  (*engine)->ReconcileOnce(std::chrono::steady_clock::now());
  EXPECT_EQ(ReadText(Cg("kubepods/burstable/podshared/c1/cpuset.cpus")), pool.ToString());
  EXPECT_GE((*engine)->Status().cgroup.drift_repairs, 1u);

  // Releasing the exclusive pod gives the CPUs back to the shared container.
  ASSERT_TRUE((*engine)->Release("excl", std::nullopt).ok());
  EXPECT_EQ(ReadText(Cg("kubepods/burstable/podshared/c1/cpuset.cpus")), "0-15");
}

// A parent narrowed behind topologyd's back (v2): the container's cpuset.cpus still reads as
// written, so it is no drift, but cpuset.cpus.effective lacks CPUs. Reconcile reports it in
// Status and logs it once, and logs the recovery.
TEST_F(EngineTest, ReconcileReportsContainersRunningOnLessThanTheirCpuset) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Admit(MakePod("excl", "4")).ok());
  for (const char* cg : {"kubepods", "kubepods/podexcl", "kubepods/podexcl/c1"}) {
    MakeCgroup(Cg(cg), "0-15");
  }
  auto bound = (*engine)->Allocate("excl", "app", "c1", "kubepods/podexcl/c1");
  ASSERT_TRUE(bound.ok()) << bound.status();
  const CpuSet mine = bound->cpus;
  ASSERT_EQ(mine.Size(), 4);
  (*engine)->ReconcileOnce(std::chrono::steady_clock::now());
  EXPECT_EQ((*engine)->Status().cgroup.constrained, 0u);

  // The kernel now runs the container on one of its four CPUs only.
  CpuSet left;
  left.Add(*mine.begin());
  WriteText(Cg("kubepods/podexcl/c1/cpuset.cpus.effective"), left.ToString() + "\n");
  for (int pass = 0; pass < 2; ++pass) {
    (*engine)->ReconcileOnce(std::chrono::steady_clock::now());
    EXPECT_EQ((*engine)->Status().cgroup.constrained, 1u);
    EXPECT_EQ(ReadText(Cg("kubepods/podexcl/c1/cpuset.cpus")), mine.ToString());  // not drift
  }
  std::vector<std::string> errors = Logged(error_log_);
  ASSERT_EQ(errors.size(), 1u) << "logged once, not at every pass";
  EXPECT_THAT(errors[0],
              HasSubstr("kubepods/podexcl/c1 holds its assigned CPUs " + mine.ToString() +
                        ", but the kernel gives its tasks CPUs " + left.ToString()));

  WriteText(Cg("kubepods/podexcl/c1/cpuset.cpus.effective"), "0-15\n");
  (*engine)->ReconcileOnce(std::chrono::steady_clock::now());
  EXPECT_EQ((*engine)->Status().cgroup.constrained, 0u);
  EXPECT_THAT(Logged(info_log_).back(), HasSubstr("1 cgroup(s) no longer run on less"));
}

// The binding rules are the ledger's (tests/unit/ledger); here, that a refused binding reaches
// no cgroup.
TEST_F(EngineTest, AllocateToAnUnsafePathWritesNothing) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Admit(MakePod("p", "1")).ok());
  for (const char* bad : {"../escape", "/etc", "a/../../b", "a\nb"}) {
    EXPECT_EQ((*engine)->Allocate("p", "app", "c1", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ((*engine)->Status().cgroup.writes, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/escape"));
}

TEST_F(EngineTest, ACgroupBehindASymlinkIsNotWrittenAndCountsAsAFailure) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Admit(MakePod("p", "2")).ok());
  MakeCgroup(Cg("real/leaf"), "0-15");
  std::filesystem::create_directory_symlink(Cg("real"), Cg("link"));
  ASSERT_TRUE((*engine)->Allocate("p", "app", "c1", "link/leaf").ok());
  EXPECT_EQ(ReadText(Cg("real/leaf/cpuset.cpus")), "0-15") << "written through a symlink";
  EXPECT_EQ((*engine)->Status().cgroup.failed_writes, 1u);
  EXPECT_EQ((*engine)->Status().cgroup.writes, 0u);
}

TEST_F(EngineTest, DerivedCgroupsFollowTheConfiguredRuntime) {
  config_.cgroup.runtime = cgroup::Runtime::kCrio;
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::string uid = "0c2b6a5e-1d2f-4c3b-9a8e-7f6d5c4b3a21";
  ASSERT_TRUE((*engine)->Admit(MakePod(uid, "2")).ok());  // Guaranteed
  auto bound = (*engine)->Allocate(uid, "app", "c1", "");
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->cgroup, "kubepods/pod" + uid + "/crio-c1");
}

TEST_F(EngineTest, AnUnknownQosClassIsNotGuessedForADerivedCgroup) {
  // Pods imported from kubelet's device checkpoint alone have no QoS class recorded.
  const std::string uid = "0c2b6a5e-1d2f-4c3b-9a8e-7f6d5c4b3a21";
  state::State written;
  written.generation = 1;
  written.pods[uid] =
      state::PodRecord{.uid = uid, .containers = {state::ContainerRecord{.name = "app"}}};
  auto store = state::CheckpointStore::Open(&posix_, config_.state_dir);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(written).ok());
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto derived = (*engine)->Allocate(uid, "app", "c1", "");
  EXPECT_EQ(derived.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(derived.status().message()), HasSubstr("pass the cgroup path"));
  EXPECT_TRUE((*engine)->Allocate(uid, "app", "c1", "kubepods/besteffort/pod" + uid + "/c1").ok());
}

TEST_F(EngineTest, ContainerGoneLongerThanGraceIsReleased) {
  config_.cgroup.release_grace = std::chrono::seconds(30);
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Admit(MakePod("gone", "2")).ok());
  MakeCgroup(Cg("pods/gone"), "0-15");
  ASSERT_TRUE((*engine)->Allocate("gone", "app", "c9", "pods/gone").ok());
  std::filesystem::remove_all(Cg("pods/gone"));
  auto t0 = std::chrono::steady_clock::now();
  (*engine)->ReconcileOnce(t0);
  EXPECT_EQ((*engine)->ListAllocations().state.pods.count("gone"), 1u) << "released too early";
  (*engine)->ReconcileOnce(t0 + std::chrono::seconds(31));
  EXPECT_EQ((*engine)->ListAllocations().state.pods.count("gone"), 0u);
  // A warning that says why: the pod lost its CPUs, perhaps to a cgroup path given by hand.
  ASSERT_EQ(Logged(warning_log_).size(), 1u);
  EXPECT_THAT(Logged(warning_log_)[0],
              HasSubstr("released pod gone container app: its cgroup pods/gone (under the cgroup "
                        "root) does not exist"));
}

// Reconcile decides from a snapshot and releases afterwards; a container bound to a new,
// live cgroup in between (an acknowledged Allocate) must keep its allocation.
TEST_F(EngineTest, ReconcileKeepsAContainerBoundAgainWhileItLooked) {
  config_.cgroup.release_grace = std::chrono::seconds(30);
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  Engine& e = **engine;
  ASSERT_TRUE(e.Admit(MakePod("other", "2")).ok());
  MakeCgroup(Cg("pods"), "0-15");
  MakeCgroup(Cg("pods/other"), "0-15");
  ASSERT_TRUE(e.Allocate("other", "app", "c0", "pods/other").ok());
  ASSERT_TRUE(e.Admit(MakePod("victim", "2")).ok());
  MakeCgroup(Cg("pods/v1"), "0-15");
  ASSERT_TRUE(e.Allocate("victim", "app", "c1", "pods/v1").ok());
  std::filesystem::remove_all(Cg("pods/v1"));  // the container restarts
  const auto t0 = std::chrono::steady_clock::now();
  e.ReconcileOnce(t0);  // notes pods/v1 missing

  // During the next pass (while it repairs drift on pods/other), the new container is bound.
  WriteText(Cg("pods/other/cpuset.cpus"), "0-15\n");
  MakeCgroup(Cg("pods/v2"), "0-15");
  std::promise<absl::Status> bound;
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    on_next_cgroup_write_ = [&] {
      e.AllocateAsync(
          "victim", "app", "c2", "pods/v2",
          [&](absl::StatusOr<state::ContainerRecord> v) { bound.set_value(v.status()); });
    };
  }
  e.ReconcileOnce(t0 + std::chrono::seconds(31));
  std::future<absl::Status> acknowledged = bound.get_future();
  if (acknowledged.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    std::lock_guard<std::mutex> lock(log_mu_);
    on_next_cgroup_write_ = nullptr;
    FAIL() << "reconcile wrote no cgroup, so the Allocate never ran";
  }
  ASSERT_TRUE(acknowledged.get().ok());
  const auto pods = e.ListAllocations().state.pods;
  ASSERT_EQ(pods.count("victim"), 1u) << "an acknowledged Allocate was undone";
  EXPECT_EQ(pods.at("victim").containers.at(0).cgroup, "pods/v2");
  EXPECT_THAT(Logged(info_log_), Contains(HasSubstr("kept pod victim container app")));
  // Its exclusive CPUs are still its own: pods/v2 is pinned to them.
  EXPECT_EQ(ReadText(Cg("pods/v2/cpuset.cpus")),
            pods.at("victim").containers.at(0).cpus.ToString());
}

TEST_F(EngineTest, RestartRestoresEveryAllocation) {
  AllocationsView before;
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok());
    for (std::string uid : {"a", "b", "c"}) ASSERT_TRUE((*engine)->Admit(MakePod(uid, "2")).ok());
    ASSERT_TRUE((*engine)->Release("b", std::nullopt).ok());
    before = (*engine)->ListAllocations();
  }
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  AllocationsView after = (*engine)->ListAllocations();
  EXPECT_EQ(after.state, before.state);
  EXPECT_EQ(after.shared_pool, before.shared_pool) << "free pool not recomputed from entries";
  // New admissions do not reuse restored CPUs.
  auto d = (*engine)->Admit(MakePod("d", "2"));
  ASSERT_TRUE(d.ok() && d->admitted);
  for (const auto& [uid, pod] : after.state.pods) {
    EXPECT_FALSE(pod.containers[0].cpus.Intersects(d->containers[0].cpus)) << uid;
  }
}

// Which init containers are sidecars is recorded, survives a restart, and is what Explain of
// the admitted pod shows.
TEST_F(EngineTest, SidecarsAreRecordedAcrossARestart) {
  pod::Pod p = MakePod("s", "2");
  p.init_containers = {p.containers[0], p.containers[0]};
  p.init_containers[0].name = "setup";
  p.init_containers[1].name = "proxy";
  p.init_containers[1].restart_always = true;
  auto flags = [](const std::vector<state::ContainerRecord>& containers) {
    std::vector<std::pair<bool, bool>> out;  // init, restartable
    for (const state::ContainerRecord& c : containers) out.emplace_back(c.init, c.restartable);
    return out;
  };
  const std::vector<std::pair<bool, bool>> expected = {{true, false}, {true, true}, {false, false}};
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok());
    auto reply = (*engine)->Admit(p);
    ASSERT_TRUE(reply.ok() && reply->admitted) << reply->message;
    EXPECT_EQ(flags(reply->containers), expected);
  }
  EXPECT_THAT(ReadText(config_.state_dir + "/state.json"), HasSubstr("\"restartable\": true"));
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(flags((*engine)->ListAllocations().state.pods.at("s").containers), expected);
  auto explained = (*engine)->Explain(p);
  ASSERT_TRUE(explained.ok()) << explained.status();
  ASSERT_EQ(explained->result.containers.size(), 3u);
  EXPECT_TRUE(explained->result.containers[1].restartable);
  EXPECT_FALSE(explained->result.containers[0].restartable);
}

TEST_F(EngineTest, RefusesToStartWhenAnAllocatedCpuBecomesReserved) {
  CpuSet given;
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok());
    auto r = (*engine)->Admit(MakePod("victim", "2"));
    ASSERT_TRUE(r.ok() && r->admitted);
    given = r->containers[0].cpus;
  }
  config_.reserved_system_cpus = CpuSet({0, given.Min()}).ToString();
  auto engine = StartEngine();
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(engine.status().message(), HasSubstr("state.json"));
  EXPECT_THAT(engine.status().message(), HasSubstr("drain"));
}

TEST_F(EngineTest, StartsAfterAChangeTheAllocationsSurvive) {
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Admit(MakePod("keep", "2")).ok());
  }
  config_.topology_manager_policy = "restricted";
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->ListAllocations().state.pods.count("keep"), 1u);
}

TEST_F(EngineTest, CorruptCheckpointStopsStartUp) {
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Admit(MakePod("x", "2")).ok());
  }
  std::string path = config_.state_dir + "/state.json";
  std::string text = ReadText(path);
  text[text.find("\"x\"") + 1] = 'y';
  WriteText(path, text);
  auto engine = StartEngine();
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(EngineTest, FailedCheckpointWriteAcknowledgesNothingAndRetries) {
  state::FaultInjectingFileSystem faulty(&posix_);
  auto engine = StartEngine(&faulty);
  ASSERT_TRUE(engine.ok()) << engine.status();
  for (const char* uid : {"p1", "p2"}) {
    faulty.ResetCountForTest();
    faulty.FailOperation(1, ENOSPC);
    auto reply = (*engine)->Admit(MakePod(uid, "2"));
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_FALSE((*engine)->Healthy());
  }
  EngineStatus failing = (*engine)->Status();
  EXPECT_FALSE(failing.healthy);
  EXPECT_THAT(failing.problem, HasSubstr("the state checkpoint cannot be written: "));
  EXPECT_THAT(failing.problem, HasSubstr("No space left on device"));
  EXPECT_EQ(failing.checkpoint.path, config_.state_dir + "/state.json");
  EXPECT_EQ(failing.checkpoint.writes, 2u);
  EXPECT_EQ(failing.checkpoint.failed_writes, 2u);
  EXPECT_EQ(failing.checkpoint.durable_generation, 0u);
  EXPECT_EQ(failing.checkpoint.last_batch, 0u) << "no write has succeeded yet";
  EXPECT_THAT(failing.checkpoint.last_error, HasSubstr("No space left on device"));
  // A failing disk is logged when it starts failing, not at every write.
  ASSERT_EQ(Logged(error_log_).size(), 1u);
  EXPECT_THAT(Logged(error_log_)[0], HasSubstr("No space left on device"));

  // The client retries (same uid): now it is written and acknowledged.
  auto retry = (*engine)->Admit(MakePod("p1", "2"));
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_TRUE(retry->admitted);
  EXPECT_TRUE((*engine)->Healthy());
  EXPECT_THAT(ReadText(config_.state_dir + "/state.json"), HasSubstr("p1"));
  EngineStatus recovered = (*engine)->Status();
  EXPECT_TRUE(recovered.healthy);
  EXPECT_EQ(recovered.problem, "");
  EXPECT_EQ(recovered.checkpoint.writes, 3u);
  EXPECT_EQ(recovered.checkpoint.failed_writes, 2u);
  EXPECT_EQ(recovered.checkpoint.durable_generation, recovered.state_generation);
  EXPECT_EQ(recovered.checkpoint.last_batch, 1u);
  EXPECT_EQ(recovered.checkpoint.last_error, "");
  EXPECT_THAT(Logged(info_log_), Contains(HasSubstr("succeed again, after 2 failed")));
  EXPECT_EQ(Logged(error_log_).size(), 1u);
}

// Watchers see each state once it is durable, never a change whose write failed, and nothing
// once they stopped watching.
TEST_F(EngineTest, WatchersGetEachDurableStateOnlyOnceItIsOnDisk) {
  state::FaultInjectingFileSystem faulty(&posix_);
  auto engine = StartEngine(&faulty);
  ASSERT_TRUE(engine.ok()) << engine.status();
  struct Seen {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<DurableAllocations> states;  // guarded by mu

    AllocationsListener Listener() {
      return [this](DurableAllocations state) {
        std::lock_guard<std::mutex> lock(mu);
        states.push_back(std::move(state));
        cv.notify_all();
      };
    }
    // Waits (the deadline only ends a stuck test) until `generation` was seen.
    bool WaitFor(uint64_t generation) {
      std::unique_lock<std::mutex> lock(mu);
      return cv.wait_for(lock, std::chrono::seconds(60), [&] {
        return !states.empty() && states.back()->state.generation >= generation;
      });
    }
    size_t count() {
      std::lock_guard<std::mutex> lock(mu);
      return states.size();
    }
  };
  Seen seen;
  const AllocationsWatch watch = (*engine)->WatchAllocations(seen.Listener());
  EXPECT_EQ(watch.current->state.generation, 0u);
  EXPECT_TRUE(watch.current->state.pods.empty());
  EXPECT_EQ(watch.current->shared_pool, CpuSet::Range(0, 15));

  auto admitted = (*engine)->Admit(MakePod("p1", "2"));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  ASSERT_TRUE(seen.WaitFor(admitted->generation));
  {
    std::lock_guard<std::mutex> lock(seen.mu);
    ASSERT_EQ(seen.states.size(), 1u);
    const AllocationsView& state = *seen.states.back();
    EXPECT_EQ(state.state.generation, admitted->generation);
    ASSERT_EQ(state.state.pods.count("p1"), 1u);
    EXPECT_EQ(state.state.pods.at("p1").containers[0].cpus, admitted->containers[0].cpus);
    EXPECT_FALSE(state.shared_pool.Intersects(admitted->containers[0].cpus));
  }

  faulty.ResetCountForTest();
  faulty.FailOperation(1, ENOSPC);
  EXPECT_EQ((*engine)->Admit(MakePod("p2", "2")).status().code(), absl::StatusCode::kUnavailable);
  // What was not acknowledged is not durable.
  EXPECT_EQ((*engine)->DurableAllocationsNow()->state.generation, admitted->generation);
  EXPECT_EQ((*engine)->DurableAllocationsNow()->state.pods.count("p2"), 0u);
  auto retried = (*engine)->Admit(MakePod("p2", "2"));
  ASSERT_TRUE(retried.ok()) << retried.status();
  ASSERT_TRUE(seen.WaitFor(retried->generation));
  EXPECT_GE((*engine)->DurableAllocationsNow()->state.generation, retried->generation);
  EXPECT_EQ((*engine)->DurableAllocationsNow()->state.pods.count("p2"), 1u);
  EXPECT_EQ(seen.count(), 2u) << "the failed write told no one";

  (*engine)->StopWatchingAllocations(watch.id);
  Seen other;
  (*engine)->WatchAllocations(other.Listener());
  auto released = (*engine)->Release("p1", std::nullopt);
  ASSERT_TRUE(released.ok()) << released.status();
  ASSERT_TRUE(other.WaitFor(*released));
  EXPECT_EQ(seen.count(), 2u);
}

// A write in progress is shown; it is a health problem only once it runs too long.
// At shutdown the engine is flushed before the NRT file's publisher stops: by then every
// watcher must have been handed what was acknowledged, which it is only after the replies.
TEST_F(EngineTest, FlushReturnsOnceTheWatchersHaveTheAcknowledgedState) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::atomic<uint64_t> handed{0};
  (*engine)->WatchAllocations([&](DurableAllocations view) {
    // A slow listener: the Admit's reply is out well before it has the state.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    handed = view->state.generation;
  });
  auto admitted = (*engine)->Admit(MakePod("p1", "2"));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  ASSERT_TRUE((*engine)->Flush().ok());
  EXPECT_EQ(handed.load(), admitted->generation);
}

TEST_F(EngineTest, ACheckpointWriteInProgressIsHealthyUntilItStalls) {
  GatedFileSystem gated(&posix_);
  auto engine = StartEngine(&gated);  // stalled after the default 10 s
  ASSERT_TRUE(engine.ok()) << engine.status();
  gated.Close();
  std::future<absl::StatusOr<AdmitReply>> reply = AdmitAsync(**engine, MakePod("p1", "2"));
  EngineStatus writing = (*engine)->Status();
  for (int i = 0; i < 1000 && !writing.checkpoint.write_running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    writing = (*engine)->Status();
  }
  ASSERT_TRUE(writing.checkpoint.write_running.has_value()) << "the write never started";
  EXPECT_TRUE(writing.healthy) << writing.problem;
  EXPECT_TRUE((*engine)->Healthy());
  gated.Open();
  ASSERT_TRUE(reply.get().ok());
  EXPECT_FALSE((*engine)->Status().checkpoint.write_running.has_value());
}

// A write that does not return (a hung fsync) leaves every change unanswered: the engine
// must say so, or the watchdog would keep a daemon that acknowledges nothing.
TEST_F(EngineTest, AHungCheckpointWriteMakesTheEngineUnhealthyUntilItReturns) {
  stalled_write_after_ = std::chrono::milliseconds(50);
  topologyd::testing::ManualClock clock;
  clock_ = &clock;
  GatedFileSystem gated(&posix_);
  auto engine = StartEngine(&gated);
  ASSERT_TRUE(engine.ok()) << engine.status();
  gated.Close();
  std::future<absl::StatusOr<AdmitReply>> reply = AdmitAsync(**engine, MakePod("p1", "2"));
  EngineStatus writing = (*engine)->Status();
  for (int i = 0; i < 1000 && !writing.checkpoint.write_running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    writing = (*engine)->Status();
  }
  ASSERT_TRUE(writing.checkpoint.write_running.has_value()) << "the write never started";
  clock.Advance(std::chrono::milliseconds(50));
  EXPECT_TRUE((*engine)->Healthy()) << "unhealthy with a write not longer than 50 ms";
  clock.Advance(std::chrono::milliseconds(1));
  ASSERT_FALSE((*engine)->Healthy()) << "still healthy with a write hung for 51 ms";
  EngineStatus hung = (*engine)->Status();
  EXPECT_FALSE(hung.healthy);
  EXPECT_THAT(hung.problem, HasSubstr("a state checkpoint write to " + config_.state_dir +
                                      "/state.json has not finished after"));
  ASSERT_TRUE(hung.checkpoint.write_running.has_value());
  EXPECT_GE(*hung.checkpoint.write_running, std::chrono::milliseconds(50));
  EXPECT_EQ(hung.checkpoint.last_error, "") << "nothing has failed";
  EXPECT_EQ(reply.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

  gated.Open();
  absl::StatusOr<AdmitReply> done = reply.get();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->admitted);
  EXPECT_TRUE((*engine)->Healthy());
  EXPECT_EQ((*engine)->Status().problem, "");
}

TEST_F(EngineTest, ReloadAddingAPoolThatMatchesNothingAppliesItWithAWarning) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  config::Config next = config_;
  next.devices.push_back(
      config::DevicePoolConfig{.resource_name = "example.com/nic",
                               .pci = config::DevicePciMatch{.vendor = 0x8086, .class_id = 0x0200},
                               .devices = {}});
  ReloadRecord record = (*engine)->Reload(next);
  EXPECT_TRUE(record.ok) << record.error;
  EXPECT_EQ(record.applied_keys, std::vector<std::string>{"devices"});
  ASSERT_EQ(record.warnings.size(), 1u);  // the synthetic machine has no PCI devices
  EXPECT_THAT(record.warnings[0], HasSubstr("example.com/nic matches no PCI device"));
  EXPECT_NE((*engine)->policy()->devices.Find("example.com/nic"), nullptr);
}

// A reloaded reconcilePeriod counts from the reload: a loop waiting out an hour reloaded to
// 50 ms repairs drift within seconds, not after the hour.
TEST_F(EngineTest, ReloadedReconcilePeriodAppliesAtOnce) {
  config_.reconcile_period = std::chrono::hours(1);
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  Engine& e = **engine;
  ASSERT_TRUE(e.Admit(MakePod("drift", "2")).ok());
  MakeCgroup(Cg("pods"), "0-15");
  MakeCgroup(Cg("pods/drift"), "0-15");
  ASSERT_TRUE(e.Allocate("drift", "app", "c1", "pods/drift").ok());
  const std::string pinned = ReadText(Cg("pods/drift/cpuset.cpus"));
  ASSERT_NE(pinned, "0-15");
  e.StartReconcileLoop();
  WriteText(Cg("pods/drift/cpuset.cpus"), "0-15\n");
  auto repaired = std::make_shared<std::promise<void>>();
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    on_next_cgroup_write_ = [repaired] { repaired->set_value(); };
  }

  config::Config next = config_;
  next.reconcile_period = std::chrono::milliseconds(50);
  ReloadRecord record = e.Reload(next);
  ASSERT_TRUE(record.ok) << record.error;
  ASSERT_EQ(record.applied_keys, std::vector<std::string>{"reconcilePeriod"});

  const bool ran =
      repaired->get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    on_next_cgroup_write_ = nullptr;
  }
  e.StopReconcileLoop();
  ASSERT_TRUE(ran) << "no reconcile pass within 30 s of the reload; the old period still runs";
  EXPECT_EQ(ReadText(Cg("pods/drift/cpuset.cpus")), pinned);
}

TEST_F(EngineTest, ReloadOfAFileTheDaemonCouldNotStartWithChangesNothing) {
  auto engine = StartEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  config::Config next = config_;
  next.log.level = "debug";            // live
  next.reserved_system_cpus = "0,99";  // restart-only, and not a CPU of this machine
  ReloadRecord record = (*engine)->Reload(next);
  EXPECT_FALSE(record.ok);
  EXPECT_THAT(record.error, HasSubstr("test.yaml: "));
  EXPECT_THAT(record.error, HasSubstr("99"));
  EXPECT_TRUE(record.applied_keys.empty());
  EXPECT_NE((*engine)->config()->log.level, "debug");
}

TEST_F(EngineTest, AsyncAdmitDecidesAtOnceAndCompletesOnlyOnceTheCheckpointIsDurable) {
  GatedFileSystem gated(&posix_);
  auto engine = StartEngine(&gated);
  ASSERT_TRUE(engine.ok()) << engine.status();
  gated.Close();
  std::future<absl::StatusOr<AdmitReply>> reply = AdmitAsync(**engine, MakePod("p1", "2"));
  // AdmitAsync has returned: the decision is made, the reply waits for the checkpoint.
  EXPECT_EQ((*engine)->Status().state_generation, 1u);
  EXPECT_EQ(reply.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "completed before its checkpoint was durable";
  EXPECT_EQ((*engine)->Status().checkpoint.durable_generation, 0u);
  gated.Open();
  absl::StatusOr<AdmitReply> done = reply.get();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->admitted);
  EXPECT_EQ(done->generation, 1u);
  EXPECT_EQ((*engine)->Status().checkpoint.durable_generation, 1u);
  EXPECT_THAT(ReadText(config_.state_dir + "/state.json"), HasSubstr("p1"));
}

TEST_F(EngineTest, AnAdmissionAnsweredWhenDecidedIsDurableOnlyOnceAwaitDurableSaysSo) {
  GatedFileSystem gated(&posix_);
  auto engine = StartEngine(&gated);
  ASSERT_TRUE(engine.ok()) << engine.status();
  gated.Close();
  std::optional<absl::StatusOr<AdmitReply>> decided =
      AdmitWhenDecided(**engine, MakePod("p1", "2"));
  ASSERT_TRUE(decided.has_value()) << "not answered when decided";
  ASSERT_TRUE(decided->ok()) << decided->status();
  EXPECT_TRUE((*decided)->admitted);
  EXPECT_FALSE((*decided)->durable);
  EXPECT_EQ((*decided)->generation, 1u);
  ASSERT_EQ((*decided)->containers.size(), 1u);
  EXPECT_EQ((*decided)->containers[0].cpus.Size(), 2);

  std::promise<absl::StatusOr<uint64_t>> durable;
  (*engine)->AwaitDurableAsync(
      1, [&](absl::StatusOr<uint64_t> r) { durable.set_value(std::move(r)); });
  std::future<absl::StatusOr<uint64_t>> durable_reply = durable.get_future();
  EXPECT_EQ(durable_reply.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "told durable before the checkpoint was written";
  std::optional<absl::StatusOr<uint64_t>> unreached;
  (*engine)->AwaitDurableAsync(2, [&](absl::StatusOr<uint64_t> r) { unreached = std::move(r); });
  ASSERT_TRUE(unreached.has_value());
  EXPECT_EQ(unreached->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unreached->status().message(), HasSubstr("state generation 2 has not been reached"));

  gated.Open();
  absl::StatusOr<uint64_t> written = durable_reply.get();
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 1u);
  EXPECT_THAT(ReadText(config_.state_dir + "/state.json"), HasSubstr("p1"));
  // Asked again once written, the same admission is durable at once.
  std::optional<absl::StatusOr<AdmitReply>> again = AdmitWhenDecided(**engine, MakePod("p1", "2"));
  ASSERT_TRUE(again.has_value() && again->ok());
  EXPECT_TRUE((*again)->durable);
  EXPECT_EQ((*again)->containers[0].cpus, (*decided)->containers[0].cpus);
}

TEST_F(EngineTest, AwaitDurableReportsAFailedCheckpointWrite) {
  state::FaultInjectingFileSystem faulty(&posix_);
  auto engine = StartEngine(&faulty);
  ASSERT_TRUE(engine.ok()) << engine.status();
  faulty.FailFrom(1, EIO);
  std::optional<absl::StatusOr<AdmitReply>> decided =
      AdmitWhenDecided(**engine, MakePod("p1", "2"));
  ASSERT_TRUE(decided.has_value() && decided->ok());
  EXPECT_TRUE((*decided)->admitted);
  std::promise<absl::StatusOr<uint64_t>> durable;
  (*engine)->AwaitDurableAsync(
      (*decided)->generation, [&](absl::StatusOr<uint64_t> r) { durable.set_value(std::move(r)); });
  absl::StatusOr<uint64_t> result = durable.get_future().get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(result.status().message(), HasSubstr("is not durable"));
  EXPECT_EQ((*engine)->Status().checkpoint.durable_generation, 0u);
}

TEST_F(EngineTest, EachEngineHasItsOwnInstance) {
  std::string first;
  {
    auto engine = StartEngine();
    ASSERT_TRUE(engine.ok()) << engine.status();
    first = (*engine)->instance();
  }
  auto restarted = StartEngine();
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_THAT(first, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_NE((*restarted)->instance(), first);
}

TEST_F(EngineTest, AsyncRefusalsAndErrorsCompleteBeforeTheCallReturns) {
  GatedFileSystem gated(&posix_);
  auto engine = StartEngine(&gated);
  ASSERT_TRUE(engine.ok()) << engine.status();
  gated.Close();  // nothing below may wait for a write
  std::optional<absl::StatusOr<AdmitReply>> refused;
  (*engine)->AdmitAsync(MakePod("too-big", "64"),
                        [&](absl::StatusOr<AdmitReply> r) { refused = std::move(r); });
  ASSERT_TRUE(refused.has_value());
  ASSERT_TRUE(refused->ok()) << refused->status();
  EXPECT_FALSE((*refused)->admitted);
  std::optional<absl::StatusOr<uint64_t>> unknown;
  (*engine)->ReleaseAsync("nobody", std::nullopt,
                          [&](absl::StatusOr<uint64_t> r) { unknown = std::move(r); });
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->status().code(), absl::StatusCode::kNotFound);
  std::optional<absl::StatusOr<state::ContainerRecord>> bad;
  (*engine)->AllocateAsync("nobody", "app", "not a container id", "",
                           [&](absl::StatusOr<state::ContainerRecord> r) { bad = std::move(r); });
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*engine)->Status().state_generation, 0u);
  gated.Open();
}

}  // namespace
}  // namespace topologyd::engine
