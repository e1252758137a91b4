// Real-kernel test of the cpuset executor on the cgroup v1 cpuset hierarchy.
//
// Builds a private tree under /sys/fs/cgroup/cpuset/topologyd-test-<pid>-<random>/ laid out like
// kubelet's cgroupfs driver, moves a forked sleeping child into a "container" cgroup and checks
// that the kernel's view of the child's affinity (/proc/<pid>/status Cpus_allowed_list) follows
// what the executor writes, including narrowing and widening a parent, where a wrong write order
// is refused by the kernel with EINVAL. Everything created is removed in TearDown, children
// before parents, after the child is killed and reaped. Needs root and >= 2 CPUs; skips otherwise.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"

#include "lib/cgroup/cpuset_manager.h"
#include "lib/cgroup/naming.h"
#include "tests/support/cpuset_literal.h"
#include "tests/unit/cgroup/fake_cgroupfs.h"

namespace topologyd::cgroup {
namespace {

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";
constexpr char kCpusetMount[] = "/sys/fs/cgroup/cpuset";
constexpr char kUid[] = "5e1f0000-0000-4000-8000-00000000c0de";

using topologyd::testing::S;

std::string CpusAllowed(pid_t pid) {
  const std::string status = testing::ReadText(fmt::format("/proc/{}/status", pid));
  const std::string key = "Cpus_allowed_list:";
  const size_t at = status.find(key);
  if (at == std::string::npos) return "?";
  const size_t end = status.find('\n', at);
  std::string value = status.substr(at + key.size(), end - at - key.size());
  value.erase(0, value.find_first_not_of(" \t"));
  return value;
}

std::string ResolverName(const ::testing::TestParamInfo<PathResolver>& param) {
  return param.param == PathResolver::kWalk ? "Walk" : "Auto";
}

class KernelCpusetTest : public ::testing::TestWithParam<PathResolver> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cpuset cgroups";
    std::error_code ec;
    if (!std::filesystem::exists(std::string(kCpusetMount) + "/cpuset.cpus", ec)) {
      GTEST_SKIP() << "no cgroup v1 cpuset hierarchy at " << kCpusetMount;
    }
    absl::StatusOr<CpuSet> cpus =
        CpuSet::Parse(testing::ReadText(std::string(kCpusetMount) + "/cpuset.effective_cpus"));
    absl::StatusOr<CpuSet> mems =
        CpuSet::Parse(testing::ReadText(std::string(kCpusetMount) + "/cpuset.effective_mems"));
    ASSERT_TRUE(cpus.ok() && mems.ok());
    if (!cpus->Contains(0) || !cpus->Contains(1)) GTEST_SKIP() << "needs CPUs 0 and 1";
    mem_ = CpuSet({mems->Min()});

    std::random_device rd;
    base_ = fmt::format("{}/topologyd-test-{}-{:08x}", kCpusetMount, ::getpid(), rd());
    ASSERT_TRUE(MakeCgroup(base_));
    // The test's own root must hold CPUs before anything below it can; the executor never
    // writes the root of its hierarchy, so this one is written here.
    testing::WriteText(base_ + "/cpuset.mems", mem_.ToString());
    testing::WriteText(base_ + "/cpuset.cpus", "0-1");

    pod_ = "kubepods/burstable/pod" + std::string(kUid);
    a_ = *ContainerCgroupPath(CgroupDriver::kCgroupfs, QosClass::kBurstable, kUid, "aaaa",
                              Runtime::kContainerd);
    b_ = *ContainerCgroupPath(CgroupDriver::kCgroupfs, QosClass::kBurstable, kUid, "bbbb",
                              Runtime::kContainerd);
    for (const std::string& c :
         {std::string("kubepods"), std::string("kubepods/burstable"), pod_, a_, b_}) {
      ASSERT_TRUE(MakeCgroup(base_ + "/" + c)) << c;
    }

    CpusetManager::Config config;
    config.root = base_;
    config.resolver = GetParam();
    config.options.sink = [this](const WriteRecord& w) { log_.push_back(w); };
    absl::StatusOr<std::unique_ptr<CpusetManager>> m = CpusetManager::Open(config);
    ASSERT_TRUE(m.ok()) << m.status();
    manager_ = std::move(*m);
    ASSERT_EQ(manager_->version(), CgroupVersion::kV1);
    for (const std::string& c : Parents()) ASSERT_TRUE(manager_->Register(c).ok());
    ASSERT_TRUE(manager_->Register(a_).ok());
    ASSERT_TRUE(manager_->Register(b_).ok());
  }

  void TearDown() override {
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      int status = 0;
      ::waitpid(child_, &status, 0);
    }
    // Children before parents; a cgroup directory with no tasks and no children rmdirs fine.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
      if (::rmdir(it->c_str()) != 0 && errno != ENOENT) {
        ADD_FAILURE() << "could not remove " << *it << ": " << ::strerror(errno);
      }
    }
  }

  bool MakeCgroup(const std::string& path) {
    if (::mkdir(path.c_str(), 0755) != 0) return false;
    created_.push_back(path);
    return true;
  }

  std::vector<std::string> Parents() const { return {"kubepods", "kubepods/burstable", pod_}; }

  std::vector<CpusetTarget> State(std::string_view parents, std::string_view a,
                                  std::string_view b) {
    std::vector<CpusetTarget> out;
    for (const std::string& p : Parents()) out.push_back({p, S(parents), mem_});
    out.push_back({a_, S(a), mem_});
    out.push_back({b_, S(b), mem_});
    return out;
  }

  void StartChildIn(const std::string& cgroup) {
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      for (;;) ::pause();
    }
    absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(base_);
    ASSERT_TRUE(root.ok());
    ASSERT_TRUE(root->WriteFile(cgroup, "tasks", std::to_string(child_)).ok());
    ASSERT_EQ(testing::ReadText(fmt::format("{}/{}/tasks", base_, cgroup)),
              fmt::format("{}\n", child_));
  }

  std::string Cpus(const std::string& cgroup) {
    std::string text = testing::ReadText(base_ + "/" + cgroup + "/cpuset.cpus");
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  CpuSet mem_;
  std::string base_;
  std::string pod_, a_, b_;
  std::vector<std::string> created_;
  pid_t child_ = -1;
  std::unique_ptr<CpusetManager> manager_;
  std::vector<WriteRecord> log_;
};

TEST_P(KernelCpusetTest, AffinityFollowsWritesThroughPoolAndParentChanges) {
  // Fresh v1 cpusets are empty; the plan fills parents first (a child may not hold CPUs its
  // parent lacks), mems before cpus.
  ApplyResult r = manager_->Apply(State("0-1", "0-1", "0-1"));
  ASSERT_TRUE(r.ok()) << r.failures.front().cgroup << ": " << r.failures.front().status;
  ASSERT_EQ(r.writes.front().cgroup, "kubepods");
  ASSERT_EQ(r.writes.front().file, "cpuset.mems");

  StartChildIn(a_);
  EXPECT_EQ(CpusAllowed(child_), "0-1");

  // B becomes exclusive on CPU 1: the shared pool (A) shrinks to CPU 0.
  r = manager_->Apply(State("0-1", "0", "1"));
  ASSERT_TRUE(r.ok()) << r.failures.front().status;
  EXPECT_EQ(CpusAllowed(child_), "0");
  EXPECT_EQ(Cpus(b_), "1");

  // B is released: the pool grows back.
  r = manager_->Apply(State("0-1", "0-1", "0-1"));
  ASSERT_TRUE(r.ok()) << r.failures.front().status;
  EXPECT_EQ(CpusAllowed(child_), "0-1");

  // The whole pod tree narrows to CPU 0. Parents written first would get EINVAL (their
  // children still hold CPU 1), so success shows the children-first order.
  r = manager_->Apply(State("0", "0", "0"));
  ASSERT_TRUE(r.ok()) << r.failures.front().cgroup << ": " << r.failures.front().status;
  EXPECT_EQ(CpusAllowed(child_), "0");
  EXPECT_EQ(Cpus("kubepods"), "0");
  EXPECT_EQ(r.writes.front().cgroup, std::min(a_, b_));

  // And widens back: parents first.
  r = manager_->Apply(State("0-1", "0-1", "0"));
  ASSERT_TRUE(r.ok()) << r.failures.front().cgroup << ": " << r.failures.front().status;
  EXPECT_EQ(r.writes.front().cgroup, "kubepods");
  EXPECT_EQ(CpusAllowed(child_), "0-1");
}

TEST_P(KernelCpusetTest, KernelRefusalIsCountedAndTheBatchGoesOn) {
  ASSERT_TRUE(manager_->Apply(State("0-1", "0-1", "0-1")).ok());
  // CPU 1 is outside the pod's set once the pod is narrowed: B's write is refused (v1 answers
  // EACCES for a value outside the parent's set), A's goes through.
  ASSERT_TRUE(manager_->Apply({{pod_, S("0"), mem_}, {a_, S("0"), mem_}, {b_, S("0"), mem_}}).ok());
  ApplyResult r = manager_->Apply({{a_, S("0"), mem_}, {b_, S("1"), mem_}});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].cgroup, b_);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(r.failures[0].status.message()).find("EACCES"), std::string::npos)
      << r.failures[0].status;
  EXPECT_EQ(r.writes_failed, 1);
  EXPECT_EQ(Cpus(b_), "0");

  // CPUs this machine does not have: ERANGE (beyond nr_cpu_ids) or EINVAL, by kernel version.
  r = manager_->Apply({{a_, S("0"), mem_}, {b_, S("0-1023"), mem_}});
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].status.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(r.failures[0].status.message());
  EXPECT_TRUE(message.find("ERANGE") != std::string::npos ||
              message.find("EINVAL") != std::string::npos)
      << message;
}

TEST_P(KernelCpusetTest, ReconcileRepairsDriftAndSeesAGoneContainer) {
  ASSERT_TRUE(manager_->Apply(State("0-1", "0", "1")).ok());
  StartChildIn(a_);
  ASSERT_EQ(CpusAllowed(child_), "0");

  // Someone else widens A behind our back.
  testing::WriteText(base_ + "/" + a_ + "/cpuset.cpus", "0-1");
  ASSERT_EQ(CpusAllowed(child_), "0-1");
  const Timestamp t0 = Timestamp() + std::chrono::seconds(1);
  ReconcileReport report = manager_->Reconcile(State("0-1", "0", "1"), t0);
  EXPECT_EQ(report.drifted, 1);
  EXPECT_EQ(report.repaired, 1);
  EXPECT_EQ(CpusAllowed(child_), "0");

  // B's container exits and its runtime removes the cgroup.
  ASSERT_EQ(::rmdir((base_ + "/" + b_).c_str()), 0);
  report = manager_->Reconcile(State("0-1", "0", "1"), t0);
  ASSERT_EQ(report.gone.size(), 1u);
  EXPECT_EQ(report.gone[0].cgroup, b_);
  EXPECT_EQ(report.gone[0].missing_since, t0);
}

TEST_P(KernelCpusetTest, DryRunLeavesTheKernelAlone) {
  CpusetManager::Config config;
  config.root = base_;
  config.resolver = GetParam();
  config.options.apply = false;
  absl::StatusOr<std::unique_ptr<CpusetManager>> dry = CpusetManager::Open(config);
  ASSERT_TRUE(dry.ok()) << dry.status();
  for (const std::string& c : Parents()) ASSERT_TRUE((*dry)->Register(c).ok());
  ASSERT_TRUE((*dry)->Register(a_).ok());
  ApplyResult r = (*dry)->Apply({{"kubepods", S("0-1"), mem_}, {a_, S("0"), mem_}});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.writes.size(), 4u);
  EXPECT_EQ(Cpus("kubepods"), "");
  EXPECT_EQ(Cpus(a_), "");
}

TEST(KernelLayoutTest, DetectsThisMachinesCpusetHierarchy) {
  std::error_code ec;
  if (!std::filesystem::exists(std::string(kCpusetMount) + "/cpuset.cpus", ec) ||
      std::filesystem::exists(std::string(kCgroupRoot) + "/cgroup.controllers", ec)) {
    GTEST_SKIP() << "not a v1/hybrid machine with cpuset at " << kCpusetMount;
  }
  absl::StatusOr<CgroupRoot> root = CgroupRoot::Open(kCgroupRoot);
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<CgroupLayout> layout = DetectCgroupLayout(*root);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->version, CgroupVersion::kV1);
  EXPECT_EQ(layout->hierarchy, "cpuset");
  EXPECT_EQ(layout->hybrid,
            std::filesystem::exists(std::string(kCgroupRoot) + "/unified/cgroup.controllers", ec));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, KernelCpusetTest,
                         ::testing::Values(PathResolver::kAuto, PathResolver::kWalk), ResolverName);

}  // namespace
}  // namespace topologyd::cgroup
