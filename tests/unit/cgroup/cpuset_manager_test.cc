#include "lib/cgroup/cpuset_manager.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "lib/cgroup/naming.h"
#include "tests/support/cpuset_literal.h"
#include "tests/unit/cgroup/fake_cgroupfs.h"

namespace topologyd::cgroup {
namespace {

using testing::MakeDirs;
using testing::MakeV1Cgroup;
using testing::MakeV2Cgroup;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

constexpr char kUidA[] = "11111111-2222-4333-8444-555555555555";
constexpr char kUidB[] = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";

using topologyd::testing::S;

std::string Trimmed(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

struct Param {
  CgroupVersion version;
  CgroupDriver driver;
  PathResolver resolver;
};

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return std::string(ToString(info.param.version)) + "_" +
         std::string(ToString(info.param.driver)) + "_" +
         (info.param.resolver == PathResolver::kWalk ? "walk" : "openat2");
}

// A node laid out like the real thing: /sys/fs/cgroup-like root with the cpuset hierarchy
// (v1: under cpuset/, beside a unified/ mount; v2: the root itself), kubelet's pod cgroups for
// the chosen driver, and three containers: two shared-pool ones in a Burstable pod and one
// exclusive one in a Guaranteed pod.
class CpusetManagerTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Param p = GetParam();
    hierarchy_ = p.version == CgroupVersion::kV1 ? tmp_.path() + "/cpuset" : tmp_.path();
    if (p.version == CgroupVersion::kV1) {
      MakeV1Cgroup(hierarchy_, "0-7", "0-1");
      MakeDirs(tmp_.path() + "/unified");
      WriteText(tmp_.path() + "/unified/cgroup.controllers", "");
    } else {
      MakeV2Cgroup(hierarchy_, "", "", "cpuset cpu memory", false);
    }
    shared1_ = Container(QosClass::kBurstable, kUidA, "c0ffee01");
    shared2_ = Container(QosClass::kBurstable, kUidA, "c0ffee02");
    exclusive_ = Container(QosClass::kGuaranteed, kUidB, "c0ffee03");
    for (const std::string& c : {shared1_, shared2_, exclusive_}) MakeCgroupWithParents(c);
    Open(CpusetManager::Options{});
  }

  std::string Container(QosClass qos, const char* uid, const char* id) {
    absl::StatusOr<std::string> path =
        ContainerCgroupPath(GetParam().driver, qos, uid, id, Runtime::kContainerd);
    EXPECT_TRUE(path.ok()) << path.status();
    return *path;
  }

  void MakeCgroupWithParents(const std::string& cgroup) {
    std::vector<std::string> chain = CgroupAncestors(cgroup);
    chain.push_back(cgroup);
    for (const std::string& c : chain) {
      if (std::filesystem::exists(hierarchy_ + "/" + c)) continue;
      if (GetParam().version == CgroupVersion::kV1) {
        MakeV1Cgroup(hierarchy_ + "/" + c, "0-7", "0-1");
      } else {
        MakeV2Cgroup(hierarchy_ + "/" + c, "", "", c == cgroup ? "" : "cpuset cpu memory");
      }
    }
  }

  void Open(CpusetManager::Options options) {
    options.sink = [this](const WriteRecord& r) { sunk_.push_back(r); };
    CpusetManager::Config config;
    config.root = tmp_.path();
    config.resolver = GetParam().resolver;
    config.options = options;
    absl::StatusOr<std::unique_ptr<CpusetManager>> m = CpusetManager::Open(config);
    ASSERT_TRUE(m.ok()) << m.status();
    manager_ = std::move(*m);
    ASSERT_EQ(manager_->version(), GetParam().version);
    for (const std::string& c : {shared1_, shared2_, exclusive_}) {
      ASSERT_TRUE(manager_->Register(c).ok());
    }
  }

  std::string Cpus(const std::string& cgroup) {
    return Trimmed(ReadText(hierarchy_ + "/" + cgroup + "/cpuset.cpus"));
  }
  std::string Mems(const std::string& cgroup) {
    return Trimmed(ReadText(hierarchy_ + "/" + cgroup + "/cpuset.mems"));
  }

  std::vector<CpusetTarget> Pool(std::string_view shared, std::string_view exclusive) {
    return {{shared1_, S(shared), S("0-1")},
            {shared2_, S(shared), S("0-1")},
            {exclusive_, S(exclusive), S("1")}};
  }

  TempDir tmp_;
  std::string hierarchy_;
  std::string shared1_, shared2_, exclusive_;
  std::unique_ptr<CpusetManager> manager_;
  std::vector<WriteRecord> sunk_;
};

TEST_P(CpusetManagerTest, AppliesAndRepinsTheSharedPool) {
  ApplyResult r = manager_->Apply(Pool("0-3", "4-7"));
  ASSERT_TRUE(r.ok()) << r.failures.front().status;
  EXPECT_EQ(Cpus(shared1_), "0-3");
  EXPECT_EQ(Cpus(shared2_), "0-3");
  EXPECT_EQ(Cpus(exclusive_), "4-7");
  EXPECT_EQ(Mems(exclusive_), "1");
  EXPECT_EQ(r.writes_failed, 0);
  EXPECT_EQ(sunk_.size(), r.writes.size());

  // The pool shrinks: both shared containers are narrowed; nothing else is written.
  sunk_.clear();
  r = manager_->Apply(Pool("0-1", "4-7"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.unchanged, 1);
  ASSERT_EQ(r.writes.size(), 2u);
  EXPECT_EQ(r.writes[0].cgroup, std::min(shared1_, shared2_));
  EXPECT_EQ(r.writes[0].file, "cpuset.cpus");
  EXPECT_EQ(r.writes[0].value, "0-1");
  EXPECT_EQ(Cpus(shared1_), "0-1");
  EXPECT_EQ(Cpus(shared2_), "0-1");

  // And grows back.
  r = manager_->Apply(Pool("0-5", "6-7"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Cpus(shared1_), "0-5");
  EXPECT_EQ(Cpus(exclusive_), "6-7");
}

TEST_P(CpusetManagerTest, WritesOnlyRegisteredCgroups) {
  manager_->Unregister(shared2_);
  const std::string before = ReadText(hierarchy_ + "/" + shared2_ + "/cpuset.cpus");
  ApplyResult r = manager_->Apply(Pool("0-3", "4-7"));
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].cgroup, shared2_);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadText(hierarchy_ + "/" + shared2_ + "/cpuset.cpus"), before);
  EXPECT_EQ(Cpus(shared1_), "0-3");  // the rest of the batch went through
  for (const WriteRecord& w : r.writes) EXPECT_NE(w.cgroup, shared2_);
}

// The engine's whole desired picture becomes the registered set: what it no longer lists is
// forgotten, and a target whose path is not valid is never registered.
TEST_P(CpusetManagerTest, RegisterOnlyOwnsExactlyTheDesiredCgroups) {
  std::vector<CpusetTarget> desired = Pool("0-3", "4-7");
  desired.erase(desired.begin() + 1);  // shared2_ was released
  desired.push_back({"../escape", S("0-3"), std::nullopt});
  manager_->RegisterOnly(desired);
  EXPECT_TRUE(manager_->IsRegistered(shared1_));
  EXPECT_FALSE(manager_->IsRegistered(shared2_));
  EXPECT_TRUE(manager_->IsRegistered(exclusive_));
  EXPECT_FALSE(manager_->IsRegistered("../escape"));
  ApplyResult r = manager_->Apply(desired);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].cgroup, "../escape");
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Cpus(shared1_), "0-3");
  EXPECT_EQ(Cpus(exclusive_), "4-7");
  // Listed again, a cgroup is registered again.
  manager_->RegisterOnly(Pool("0-3", "4-7"));
  EXPECT_TRUE(manager_->IsRegistered(shared2_));
}

TEST_P(CpusetManagerTest, RefusesBadTargetsWithInvalidArgumentAndWritesNothingForThem) {
  EXPECT_EQ(manager_->Register("../escape").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Register("/kubepods").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Register("kubepods/a\nb").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Register(std::string("kubepods\0x", 10)).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<CpusetTarget> desired = {{"../escape", S("1"), std::nullopt},
                                       {shared1_, S(""), std::nullopt},
                                       {shared2_, S("1"), S("")},
                                       {exclusive_, S("2"), std::nullopt},
                                       {exclusive_, S("3"), std::nullopt}};
  ApplyResult r = manager_->Apply(desired);
  ASSERT_EQ(r.failures.size(), 4u);
  for (const TargetFailure& f : r.failures) {
    EXPECT_EQ(f.status.code(), absl::StatusCode::kInvalidArgument) << f.status;
  }
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_EQ(Cpus(exclusive_), "2");
}

TEST_P(CpusetManagerTest, RefusesARegisteredCgroupThatIsASymlink) {
  TempDir elsewhere;
  MakeV1Cgroup(elsewhere.path() + "/c", "0-7", "0-1");
  const std::string link = CgroupAncestors(shared1_).back() + "/evil";
  ASSERT_EQ(::symlink((elsewhere.path() + "/c").c_str(), (hierarchy_ + "/" + link).c_str()), 0);
  ASSERT_TRUE(manager_->Register(link).ok());
  ApplyResult r = manager_->Apply({{link, S("1"), S("0")}});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(r.writes.empty());
  EXPECT_EQ(ReadText(elsewhere.path() + "/c/cpuset.cpus"), "0-7\n");
}

TEST_P(CpusetManagerTest, ACgroupGoneBeforeTheBatchIsCountedNotFatal) {
  std::filesystem::remove_all(hierarchy_ + "/" + shared2_);
  ApplyResult r = manager_->Apply(Pool("0-3", "4-7"));
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].cgroup, shared2_);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Cpus(shared1_), "0-3");
  EXPECT_EQ(Cpus(exclusive_), "4-7");
  EXPECT_FALSE(std::filesystem::exists(hierarchy_ + "/" + shared2_));  // nothing created
}

TEST_P(CpusetManagerTest, AContainerDyingMidBatchIsCountedAndItsOtherWritesSkipped) {
  // The sink runs after each write; the first write to another container removes the victim,
  // as if it exited between our read and our write. The two shared containers are written one
  // after the other (same depth, path order), so the victim is the later one.
  const std::string victim = std::max(shared1_, shared2_);
  bool removed = false;
  std::vector<WriteRecord> seen;
  CpusetManager::Options killing;
  killing.sink = [&](const WriteRecord& w) {
    seen.push_back(w);
    if (!removed && w.cgroup != victim) {
      std::filesystem::remove_all(hierarchy_ + "/" + victim);
      removed = true;
    }
  };
  CpusetManager m(*CgroupRoot::Open(hierarchy_, GetParam().resolver), GetParam().version, killing);
  for (const std::string& c : {shared1_, shared2_, exclusive_}) ASSERT_TRUE(m.Register(c).ok());
  // Both files change for every target, so the victim has two writes planned.
  ApplyResult r = m.Apply(
      {{shared1_, S("0-5"), S("1")}, {shared2_, S("0-5"), S("1")}, {exclusive_, S("6-7"), S("1")}});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].cgroup, victim);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kNotFound) << r.failures[0].status;
  EXPECT_EQ(r.writes_failed, 1);
  EXPECT_EQ(r.writes_skipped, 1);
  EXPECT_EQ(r.writes_ok, 4);
  EXPECT_EQ(seen.size(), r.writes.size());
  for (const std::string& c : {shared1_, shared2_, exclusive_}) {
    if (c != victim) {
      EXPECT_EQ(Mems(c), "1") << c;
    }
  }
}

TEST_P(CpusetManagerTest, DryRunWritesNothingAndReportsEverything) {
  CpusetManager::Options options;
  options.apply = false;
  Open(options);
  ASSERT_TRUE(manager_->dry_run());
  ApplyResult r = manager_->Apply(Pool("0-3", "4-7"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.writes.size(), sunk_.size());
  EXPECT_GE(r.writes.size(), 4u);
  for (const WriteRecord& w : sunk_) {
    EXPECT_TRUE(w.dry_run);
    EXPECT_TRUE(w.status.ok());
  }
  if (GetParam().version == CgroupVersion::kV1) {
    for (const std::string& c : {shared1_, shared2_, exclusive_}) {
      EXPECT_EQ(Cpus(c), "0-7");
      EXPECT_EQ(Mems(c), "0-1");
    }
  } else {
    for (const std::string& c : {shared1_, shared2_, exclusive_}) {
      EXPECT_EQ(Cpus(c), "");
      EXPECT_EQ(Mems(c), "");
    }
  }
}

TEST_P(CpusetManagerTest, ReconcileRepairsDriftAndTracksGoneCgroups) {
  ASSERT_TRUE(manager_->Apply(Pool("0-3", "4-7")).ok());
  const Timestamp t0 = Timestamp() + std::chrono::seconds(100);
  const Timestamp t1 = t0 + std::chrono::seconds(10);

  ReconcileReport clean = manager_->Reconcile(Pool("0-3", "4-7"), t0);
  EXPECT_EQ(clean.checked, 3);
  EXPECT_EQ(clean.in_sync, 3);
  EXPECT_EQ(clean.drifted, 0);
  EXPECT_TRUE(clean.apply.writes.empty());

  // Someone else rewrote a container's cpus and another's mems.
  WriteText(hierarchy_ + "/" + shared1_ + "/cpuset.cpus", "0-7\n");
  WriteText(hierarchy_ + "/" + exclusive_ + "/cpuset.mems", "0\n");
  ReconcileReport drift = manager_->Reconcile(Pool("0-3", "4-7"), t0);
  EXPECT_EQ(drift.drifted, 2);
  EXPECT_EQ(drift.repaired, 2);
  EXPECT_EQ(drift.in_sync, 1);
  EXPECT_EQ(Cpus(shared1_), "0-3");
  EXPECT_EQ(Mems(exclusive_), "1");

  // A container's cgroup disappears: reported with the time it was first seen missing.
  std::filesystem::remove_all(hierarchy_ + "/" + shared2_);
  ReconcileReport gone = manager_->Reconcile(Pool("0-3", "4-7"), t0);
  ASSERT_EQ(gone.gone.size(), 1u);
  EXPECT_EQ(gone.gone[0].cgroup, shared2_);
  EXPECT_EQ(gone.gone[0].missing_since, t0);
  EXPECT_EQ(gone.checked, 2);
  gone = manager_->Reconcile(Pool("0-3", "4-7"), t1);
  ASSERT_EQ(gone.gone.size(), 1u);
  EXPECT_EQ(gone.gone[0].missing_since, t0);  // still the first sighting

  // It comes back (e.g. a restart re-created it): forgotten, then repaired.
  MakeCgroupWithParents(shared2_);
  ReconcileReport back = manager_->Reconcile(Pool("0-3", "4-7"), t1);
  EXPECT_TRUE(back.gone.empty());
  EXPECT_EQ(back.repaired, 1);
  std::filesystem::remove_all(hierarchy_ + "/" + shared2_);
  gone = manager_->Reconcile(Pool("0-3", "4-7"), t1 + std::chrono::seconds(5));
  ASSERT_EQ(gone.gone.size(), 1u);
  EXPECT_EQ(gone.gone[0].missing_since, t1 + std::chrono::seconds(5));

  // Back, but unreadable this time (its cpuset.cpus not there yet): present all the same, so
  // the next absence counts from its own start, not from the one before.
  MakeCgroupWithParents(shared2_);
  std::filesystem::remove(hierarchy_ + "/" + shared2_ + "/cpuset.cpus");
  back = manager_->Reconcile(Pool("0-3", "4-7"), t1 + std::chrono::seconds(6));
  EXPECT_TRUE(back.gone.empty());
  EXPECT_FALSE(back.apply.ok());
  std::filesystem::remove_all(hierarchy_ + "/" + shared2_);
  gone = manager_->Reconcile(Pool("0-3", "4-7"), t1 + std::chrono::seconds(7));
  ASSERT_EQ(gone.gone.size(), 1u);
  EXPECT_EQ(gone.gone[0].missing_since, t1 + std::chrono::seconds(7));
}

// The files hold what was written, but the kernel runs the tasks on less: v2 reports it (v1
// cannot get there: it keeps children within their parents).
TEST_P(CpusetManagerTest, ReconcileReportsEffectiveSetsThatLackDesiredMembers) {
  const bool v2 = GetParam().version == CgroupVersion::kV2;
  const std::string cpus_effective = v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus";
  ASSERT_TRUE(manager_->Apply(Pool("0-3", "4-7")).ok());
  EXPECT_TRUE(manager_->Reconcile(Pool("0-3", "4-7"), Timestamp()).constrained.empty());

  WriteText(hierarchy_ + "/" + exclusive_ + "/" + cpus_effective, "4-5\n");
  WriteText(hierarchy_ + "/" + shared1_ + "/" + cpus_effective, "6-7\n");  // the fallback case
  WriteText(hierarchy_ + "/" + shared2_ + "/cpuset.mems.effective", "0\n");
  ReconcileReport r = manager_->Reconcile(Pool("0-3", "4-7"), Timestamp());
  EXPECT_EQ(r.in_sync, 3);
  EXPECT_TRUE(r.apply.writes.empty());
  if (!v2) {
    EXPECT_TRUE(r.constrained.empty());
    return;
  }
  ASSERT_EQ(r.constrained.size(), 3u);
  std::map<std::string, ConstrainedCgroup> by_cgroup;
  for (const ConstrainedCgroup& c : r.constrained) by_cgroup.emplace(c.cgroup, c);
  EXPECT_EQ(by_cgroup.at(exclusive_).cpus, S("4-7"));
  EXPECT_EQ(by_cgroup.at(exclusive_).effective_cpus, S("4-5"));
  EXPECT_EQ(by_cgroup.at(shared1_).effective_cpus, S("6-7"));
  EXPECT_EQ(by_cgroup.at(shared2_).effective_cpus, S("0-7"));
  EXPECT_EQ(by_cgroup.at(shared2_).effective_mems, S("0"));
  EXPECT_EQ(by_cgroup.at(shared2_).mems, S("0-1"));

  // Unreadable or unparsable effective files say nothing.
  std::filesystem::remove(hierarchy_ + "/" + exclusive_ + "/" + cpus_effective);
  WriteText(hierarchy_ + "/" + shared1_ + "/" + cpus_effective, "garbage\n");
  r = manager_->Reconcile(Pool("0-3", "4-7"), Timestamp());
  ASSERT_EQ(r.constrained.size(), 1u);
  EXPECT_EQ(r.constrained[0].cgroup, shared2_);

  // A target that failed this pass is not judged on what it holds.
  std::filesystem::remove(hierarchy_ + "/" + shared2_ + "/cpuset.cpus");
  r = manager_->Reconcile(Pool("0-3", "4-7"), Timestamp());
  EXPECT_FALSE(r.apply.ok());
  EXPECT_TRUE(r.constrained.empty());
}

TEST_P(CpusetManagerTest, DryRunReconcileReportsNoConstrainedCgroups) {
  WriteText(hierarchy_ + "/" + exclusive_ + "/" +
                (GetParam().version == CgroupVersion::kV2 ? "cpuset.cpus.effective"
                                                          : "cpuset.effective_cpus"),
            "4\n");
  CpusetManager::Options options;
  options.apply = false;
  Open(options);
  // Nothing was written, so the effective sets judge the old values, not the desired ones.
  EXPECT_TRUE(manager_->Reconcile(Pool("0-3", "4-7"), Timestamp()).constrained.empty());
}

TEST_P(CpusetManagerTest, DryRunReconcileCountsDriftButRepairsNothing) {
  CpusetManager::Options options;
  options.apply = false;
  Open(options);
  ReconcileReport r = manager_->Reconcile(Pool("0-3", "4-7"), Timestamp());
  EXPECT_EQ(r.drifted, 3);
  EXPECT_EQ(r.repaired, 0);
  EXPECT_FALSE(r.apply.writes.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, CpusetManagerTest,
    ::testing::Values(Param{CgroupVersion::kV1, CgroupDriver::kCgroupfs, PathResolver::kOpenat2},
                      Param{CgroupVersion::kV1, CgroupDriver::kSystemd, PathResolver::kWalk},
                      Param{CgroupVersion::kV2, CgroupDriver::kSystemd, PathResolver::kOpenat2},
                      Param{CgroupVersion::kV2, CgroupDriver::kCgroupfs, PathResolver::kWalk},
                      Param{CgroupVersion::kV1, CgroupDriver::kSystemd, PathResolver::kOpenat2},
                      Param{CgroupVersion::kV2, CgroupDriver::kSystemd, PathResolver::kWalk}),
    ParamName);

// cgroup v2: the cpuset controller must be enabled along the path.
class CpusetControllerV2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeV2Cgroup(tmp_.path(), "", "", "cpu memory", false);
    MakeV2Cgroup(tmp_.path() + "/kubepods.slice", "", "", "cpu memory", false);
    MakeV2Cgroup(tmp_.path() + "/kubepods.slice/kubepods-pod1.slice", "", "", "", false);
    MakeV2Cgroup(tmp_.path() + "/kubepods.slice/kubepods-pod1.slice/c.scope", "", "", "", false);
  }
  std::unique_ptr<CpusetManager> Make(bool enable, bool apply) {
    CpusetManager::Options options;
    options.enable_cpuset_controller = enable;
    options.apply = apply;
    auto m = std::make_unique<CpusetManager>(*CgroupRoot::Open(tmp_.path()), CgroupVersion::kV2,
                                             options);
    EXPECT_TRUE(m->Register(kLeaf).ok());
    return m;
  }
  static constexpr char kLeaf[] = "kubepods.slice/kubepods-pod1.slice/c.scope";
  TempDir tmp_;
};

TEST_F(CpusetControllerV2Test, ReportsADisabledControllerNamingTheAncestor) {
  ApplyResult r = Make(false, true)->Apply({{kLeaf, S("1"), std::nullopt}});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(r.failures[0].status.message()).find("cgroup.subtree_control"),
            std::string::npos);
  EXPECT_TRUE(r.writes.empty());
}

TEST_F(CpusetControllerV2Test, EnablesItTopDownWhenConfigured) {
  // A real kernel then creates cpuset.* in the children; the fake needs them made by hand.
  auto m = Make(true, true);
  std::vector<std::string> order;
  ApplyResult first = m->Apply({{kLeaf, S("1"), std::nullopt}});
  for (const WriteRecord& w : first.writes)
    order.push_back(w.cgroup + "|" + w.file + "|" + w.value);
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], "|cgroup.subtree_control|+cpuset");
  EXPECT_EQ(order[1], "kubepods.slice|cgroup.subtree_control|+cpuset");
  EXPECT_EQ(order[2], "kubepods.slice/kubepods-pod1.slice|cgroup.subtree_control|+cpuset");
  ASSERT_EQ(first.failures.size(), 1u);  // the fake has no cpuset.cpus in the leaf
  EXPECT_EQ(first.failures[0].status.code(), absl::StatusCode::kNotFound);

  WriteText(tmp_.path() + "/" + kLeaf + "/cpuset.cpus", "\n");
  WriteText(tmp_.path() + "/" + kLeaf + "/cpuset.mems", "\n");
  for (const char* dir : {"", "/kubepods.slice", "/kubepods.slice/kubepods-pod1.slice"}) {
    WriteText(tmp_.path() + dir + "/cgroup.subtree_control", "cpuset cpu memory\n");
  }
  ApplyResult second = m->Apply({{kLeaf, S("1"), std::nullopt}});
  ASSERT_TRUE(second.ok()) << second.failures[0].status;
  ASSERT_EQ(second.writes.size(), 1u);
  EXPECT_EQ(ReadText(tmp_.path() + "/" + kLeaf + "/cpuset.cpus"), "1");
}

TEST_F(CpusetControllerV2Test, DryRunWouldEnableAndWriteButTouchesNothing) {
  ApplyResult r = Make(true, false)->Apply({{kLeaf, S("1"), S("0")}});
  ASSERT_TRUE(r.ok()) << r.failures[0].status;
  ASSERT_EQ(r.writes.size(), 5u);
  EXPECT_EQ(r.writes[3].file, "cpuset.mems");
  EXPECT_EQ(r.writes[4].file, "cpuset.cpus");
  EXPECT_EQ(ReadText(tmp_.path() + "/cgroup.subtree_control"), "cpu memory\n");
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() + "/" + kLeaf + "/cpuset.cpus"));
}

}  // namespace
}  // namespace topologyd::cgroup
