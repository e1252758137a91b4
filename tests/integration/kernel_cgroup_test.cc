// The real kernel, through the real daemon: a sleeping process in a shared-pool container's
// cgroup v1 cpuset loses the CPU an exclusive admission takes and gets it back on release.
// Needs root and a writable cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset; skips
// otherwise. Everything it creates lives in one uniquely named subtree, removed at the end.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using std::chrono::seconds;

constexpr char kCpusetRoot[] = "/sys/fs/cgroup/cpuset";

std::string Trimmed(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// "Cpus_allowed_list:\t0-1" from /proc/<pid>/status.
std::string CpusAllowed(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return Trimmed(line.substr(line.find('\t') + 1));
  }
  return "";
}

bool WriteCgroupFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// A v1 cpuset cgroup inherits nothing: cpus and mems must be set before tasks can join.
bool MakeCpuset(const std::string& dir, const std::string& cpus, const std::string& mems) {
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  return !ec && WriteCgroupFile(dir + "/cpuset.mems", mems) &&
         WriteCgroupFile(dir + "/cpuset.cpus", cpus);
}

class KernelCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root to write the kernel's cpusets";
    if (!std::filesystem::exists(std::string(kCpusetRoot) + "/cpuset.cpus")) {
      GTEST_SKIP() << "no cgroup v1 cpuset hierarchy at " << kCpusetRoot;
    }
    root_cpus_ = Trimmed(ReadFile(std::string(kCpusetRoot) + "/cpuset.cpus"));
    root_mems_ = Trimmed(ReadFile(std::string(kCpusetRoot) + "/cpuset.mems"));
    if (root_cpus_.find_first_of(",-") == std::string::npos) {
      GTEST_SKIP() << "needs at least 2 CPUs, the cpuset root has " << root_cpus_;
    }
    subtree_ = "topologyd-it-" + std::to_string(::getpid());
    ASSERT_TRUE(MakeCpuset(Path(subtree_), root_cpus_, root_mems_));
    ASSERT_TRUE(MakeCpuset(Path(subtree_ + "/pod-shared"), root_cpus_, root_mems_));
    ASSERT_TRUE(MakeCpuset(Path(subtree_ + "/pod-shared/ctr"), root_cpus_, root_mems_));
  }

  void TearDown() override {
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
    if (subtree_.empty()) return;
    // Children before parents; a cgroup with no tasks can be removed.
    for (const char* rel : {"/pod-shared/ctr", "/pod-shared", ""}) {
      ::rmdir(Path(subtree_ + rel).c_str());
    }
  }

  std::string Path(const std::string& rel) const { return std::string(kCpusetRoot) + "/" + rel; }

  std::string root_cpus_, root_mems_, subtree_;
  pid_t child_ = -1;
};

TEST_F(KernelCgroupTest, SharedContainerFollowsExclusiveAdmissionAndRelease) {
  // A sleeping "container" process in the shared pod's container cgroup.
  child_ = ::fork();
  if (child_ == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(WriteCgroupFile(Path(subtree_ + "/pod-shared/ctr/tasks"), std::to_string(child_)));
  ASSERT_EQ(CpusAllowed(child_), root_cpus_);

  TempDir dir;
  // The live machine; CPU 0 reserved, so an exclusive CPU can only come from the others.
  WriteFile(dir.File("config.yaml"), "listen: unix://" + dir.File("topologyd.sock") +
                                         "\n"
                                         "allowedPeers: {uids: [0]}\n"
                                         "stateDir: " +
                                         dir.File("state") +
                                         "\n"
                                         "topology: {source: live}\n"
                                         "cpuManagerPolicy: static\n"
                                         "reservedSystemCPUs: \"0\"\n"
                                         "topologyManagerPolicy: best-effort\n"
                                         "cgroup: {root: " +
                                         kCpusetRoot +
                                         ", driver: cgroupfs, version: v1, apply: true}\n");
  WriteFile(dir.File("shared.json"), R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"uid": "shared-pod", "name": "shared", "namespace": "default"},
    "spec": {"containers": [{"name": "app",
      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}})");
  WriteFile(dir.File("exclusive.json"), R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"uid": "exclusive-pod", "name": "exclusive", "namespace": "default"},
    "spec": {"containers": [{"name": "app", "resources": {
      "requests": {"cpu": "1", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "64Mi"}}}]}})");

  DaemonProcess daemon;
  daemon.Start(dir.File("config.yaml"), dir.File("log"),
               {{"HWLOC_PLUGINS_BLACKLIST", "hwloc_pci"}});
  std::string socket = dir.File("topologyd.sock");
  ASSERT_TRUE(daemon.WaitUntilServing(socket, seconds(30))) << ReadFile(dir.File("log"));
  auto topoctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {TopoctlBinary(), "--socket", socket});
    return RunCommand(args);
  };

  CommandResult r = topoctl({"admit", "-f", dir.File("shared.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = topoctl({"allocate", "--pod", "shared-pod", "--container", "app", "--container-id", "ctr1",
               "--cgroup", subtree_ + "/pod-shared/ctr"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << ReadFile(dir.File("log"));
  EXPECT_EQ(CpusAllowed(child_), root_cpus_);

  r = topoctl({"admit", "-f", dir.File("exclusive.json"), "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string exclusive = nlohmann::json::parse(r.out)["containers"][0]["cpus"];
  ASSERT_FALSE(exclusive.empty());
  std::string shared_now = CpusAllowed(child_);
  EXPECT_NE(shared_now, root_cpus_) << "the shared container kept the exclusive CPU";
  EXPECT_EQ(Trimmed(ReadFile(Path(subtree_ + "/pod-shared/ctr/cpuset.cpus"))), shared_now);
  EXPECT_EQ(shared_now.find(exclusive), std::string::npos);

  r = topoctl({"release", "--pod", "exclusive-pod"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(CpusAllowed(child_), root_cpus_) << "the CPU did not come back on release";

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.WaitForExit(seconds(30)), std::optional<int>(0)) << ReadFile(dir.File("log"));
}

}  // namespace
}  // namespace topologyd::testing
