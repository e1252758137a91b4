// The containerd harness against a real containerd, with no relay in between: what containerd
// does with kubelet's requests for a cpuset, which a kubelet shim's end-to-end tests build on.
// Every case runs on Debian's containerd 1.6 and on containerd 2.x built from source
// (tools/build-containerd.sh) with NRI on. Skips unless root with containerd, runc and
// busybox-static (ContainerdSkipReason).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/pod/pod.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/grpc_assert.h"
#include "tests/support/pod_builder.h"
#include "tests/support/require_component.h"

namespace topologyd::testing::containerd {
namespace {

namespace cri = runtime::v1;

pod::Quantity Q(const char* text) { return *pod::Quantity::Parse(text); }

std::string Str(const absl::StatusOr<std::string>& value) {
  return value.ok() ? *value : "<" + value.status().ToString() + ">";
}

// For the record, not asserted.
void PrintTiming(const char* what, std::chrono::steady_clock::time_point start) {
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  std::cout << "timing " << what << ": " << ms.count() << " ms\n";
}

// The containerd a case runs on: Debian's (1.6), or 2.x built from source with NRI serving
// (no plugin connected), where the NRI front end runs.
enum class Runtime { kDebian, kContainerd2 };

ContainerdOptions OptionsFor(Runtime runtime) {
  if (runtime == Runtime::kDebian) return {};
  return {.bin_dir = Containerd2BinDir(), .nri = true};
}

class ContainerdDirectTest : public ::testing::TestWithParam<Runtime> {
 protected:
  ContainerdDirectTest() : containerd_(OptionsFor(GetParam())) {}

  void SetUp() override {
    if (GetParam() == Runtime::kContainerd2 && Containerd2BinDir().empty()) {
      SKIP_OR_FAIL() << "containerd 2.x is not built: run tools/build-containerd.sh and "
                        "configure with -DTOPOLOGYD_CONTAINERD2_BIN_DIR=DIR";
    }
    if (std::string reason = ContainerdSkipReason(OptionsFor(GetParam())); !reason.empty()) {
      SKIP_OR_FAIL() << reason;
    }
    auto start = std::chrono::steady_clock::now();
    auto socket = containerd_.Start();
    ASSERT_TRUE(socket.ok()) << socket.status();
    PrintTiming("containerd first start (image built and imported)", start);
    if (GetParam() == Runtime::kContainerd2) {
      ASSERT_TRUE(std::filesystem::is_socket(containerd_.nri_socket())) << containerd_.log();
    }
    kubelet_ = std::make_unique<KubeletEmulator>(EmulatorOptions{
        .endpoint = *socket, .fallback_endpoint = *socket, .image = containerd_.image_id()});
  }

  void TearDown() override {
    if (kubelet_ == nullptr) return;
    EXPECT_TRUE(kubelet_->Cleanup().ok());
    for (const auto& mount : CgroupMountPoints()) {
      EXPECT_FALSE(std::filesystem::exists(mount + kubelet_->cgroup_root())) << mount;
    }
    // Per-call wall times, for the record (not asserted).
    std::map<std::string, std::pair<int, int64_t>> totals;
    for (const auto& call : kubelet_->timings()) {
      totals[call.method].first++;
      totals[call.method].second += call.duration.count();
    }
    for (const auto& [method, total] : totals) {
      std::cout << "timing " << method << ": " << total.first << " calls, mean "
                << total.second / total.first / 1000.0 << " ms\n";
    }
  }

  // Runs pod `uid` with one Guaranteed 1-CPU container "app" created with cpuset_cpus `cpus`.
  void RunPinnedApp(const char* uid, const char* cpus) {
    ASSERT_GRPC_OK(kubelet_->RunPod(Pod(uid, {Guaranteed("app", "1", "64Mi")})));
    grpc::Status status = kubelet_->RunContainer(uid, "app", 0, &id_, {.cpuset_cpus = cpus});
    ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << containerd_.log();
    ASSERT_GRPC_OK(kubelet_->ContainerPid(id_, &pid_));
    auto dir = CgroupDir(pid_, "cpuset");
    ASSERT_TRUE(dir.ok()) << dir.status();
    cpuset_dir_ = *dir;
  }

  std::string StoredCpuset() {
    cri::LinuxContainerResources stored;
    grpc::Status status = kubelet_->StoredResources(id_, &stored);
    return status.ok() ? stored.cpuset_cpus() : "<" + status.error_message() + ">";
  }

  ContainerdInstance containerd_;  // outlives the emulator, which cleans up through it
  std::unique_ptr<KubeletEmulator> kubelet_;
  std::string id_;
  pid_t pid_ = 0;
  std::string cpuset_dir_;
};

TEST_P(ContainerdDirectTest, GuaranteedContainerRunsOnTheCpusetItWasCreatedWith) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g1", "1"));
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "1");
  EXPECT_EQ(Str(ReadCgroupValue(cpuset_dir_, "cpuset.cpus")), "1");
  EXPECT_EQ(StoredCpuset(), "1");
  // The container cgroup is cgroup_parent/<container id>, the parent kubelet's Guaranteed one.
  EXPECT_EQ(cpuset_dir_, "/sys/fs/cgroup/cpuset" + kubelet_->CgroupParent("uid-g1") + "/" + id_);
  EXPECT_EQ(kubelet_->CgroupParent("uid-g1"), kubelet_->cgroup_root() + "/kubepods/poduid-g1");
  // The rest of kubelet's resources reached the kernel too.
  auto cpu_dir = CgroupDir(pid_, "cpu");
  ASSERT_TRUE(cpu_dir.ok());
  EXPECT_EQ(Str(ReadCgroupValue(*cpu_dir, "cpu.shares")), "1024");
  EXPECT_EQ(Str(ReadCgroupValue(*cpu_dir, "cpu.cfs_quota_us")), "100000");
  auto memory_dir = CgroupDir(pid_, "memory");
  ASSERT_TRUE(memory_dir.ok());
  EXPECT_EQ(Str(ReadCgroupValue(*memory_dir, "memory.limit_in_bytes")),
            std::to_string(64 * 1024 * 1024));
  if (!containerd_.restricts_oom_score_adj()) {
    EXPECT_EQ(Str(ReadCgroupValue("/proc/" + std::to_string(pid_), "oom_score_adj")), "-997");
  }
}

TEST_P(ContainerdDirectTest, AnUpdateWithoutCpusetKeepsTheStoredCpuset) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g2", "1"));
  cri::LinuxContainerResources shares_only;
  shares_only.set_cpu_shares(512);
  ASSERT_GRPC_OK(kubelet_->UpdateResources(id_, shares_only));
  // containerd merges the update into its stored spec and applies all of it.
  EXPECT_EQ(StoredCpuset(), "1");
  EXPECT_EQ(Str(ReadCgroupValue(cpuset_dir_, "cpuset.cpus")), "1");
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "1");
  auto cpu_dir = CgroupDir(pid_, "cpu");
  ASSERT_TRUE(cpu_dir.ok());
  EXPECT_EQ(Str(ReadCgroupValue(*cpu_dir, "cpu.shares")), "512");
}

TEST_P(ContainerdDirectTest, TheCpuManagersUpdateIsStoredAndApplied) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g3", "1"));
  ASSERT_GRPC_OK(kubelet_->UpdateCpuset(id_, "0"));
  EXPECT_EQ(StoredCpuset(), "0");
  EXPECT_EQ(Str(ReadCgroupValue(cpuset_dir_, "cpuset.cpus")), "0");
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "0");
}

// Why a shim must change a cpuset through the runtime: containerd re-applies its stored spec
// on the next update and undoes a change made directly in the cgroup.
TEST_P(ContainerdDirectTest, ADirectCgroupWriteIsRevertedByTheNextUpdate) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g4", "1"));
  ASSERT_TRUE(WriteCgroupValue(cpuset_dir_, "cpuset.cpus", "0").ok());
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "0");
  EXPECT_EQ(StoredCpuset(), "1");

  cri::LinuxContainerResources shares_only;
  shares_only.set_cpu_shares(1024);
  ASSERT_GRPC_OK(kubelet_->UpdateResources(id_, shares_only));
  EXPECT_EQ(Str(ReadCgroupValue(cpuset_dir_, "cpuset.cpus")), "1");
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "1");
}

TEST_P(ContainerdDirectTest, ARestartIsANewContainerAndRemovalTakesItsCgroup) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g5", "1"));
  const std::string first = id_;
  const std::string first_cgroup = cpuset_dir_;
  ASSERT_GRPC_OK(kubelet_->StopContainer(first));
  ASSERT_GRPC_OK(kubelet_->WaitForState(first, cri::CONTAINER_EXITED, std::chrono::seconds(30)));

  std::string second;
  ASSERT_GRPC_OK(kubelet_->RunContainer("uid-g5", "app", 1, &second, {.cpuset_cpus = "1"}));
  EXPECT_NE(second, first);
  cri::ContainerStatusResponse status;
  ASSERT_GRPC_OK(kubelet_->ContainerStatus(second, &status));
  EXPECT_EQ(status.status().metadata().attempt(), 1u);
  EXPECT_EQ(status.status().state(), cri::CONTAINER_RUNNING);
  EXPECT_EQ(status.status().resources().linux().cpuset_cpus(), "1");

  ASSERT_GRPC_OK(kubelet_->RemoveContainer(first));
  cri::ContainerFilter in_pod;
  in_pod.set_pod_sandbox_id(kubelet_->SandboxId("uid-g5"));
  std::vector<cri::Container> containers;
  ASSERT_GRPC_OK(kubelet_->ListContainers(in_pod, &containers));
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0].id(), second);
  EXPECT_FALSE(std::filesystem::exists(first_cgroup));

  pid_t pid = 0;
  ASSERT_GRPC_OK(kubelet_->ContainerPid(second, &pid));
  auto second_cgroup = CgroupDir(pid, "cpuset");
  ASSERT_TRUE(second_cgroup.ok());
  ASSERT_GRPC_OK(kubelet_->StopContainer(second));
  ASSERT_GRPC_OK(kubelet_->RemoveContainer(second));
  ASSERT_GRPC_OK(kubelet_->ListContainers(in_pod, &containers));
  EXPECT_TRUE(containers.empty());
  EXPECT_FALSE(std::filesystem::exists(*second_cgroup));
}

TEST_P(ContainerdDirectTest, RemovingThePodRemovesItsContainers) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g6", "1"));
  ASSERT_GRPC_OK(kubelet_->StopPod("uid-g6"));
  ASSERT_GRPC_OK(kubelet_->RemovePod("uid-g6"));
  std::vector<cri::Container> containers;
  ASSERT_GRPC_OK(kubelet_->ListContainers({}, &containers));
  EXPECT_TRUE(containers.empty());
  auto context = kubelet_->NewContext();
  cri::ListPodSandboxResponse pods;
  ASSERT_GRPC_OK(kubelet_->runtime().ListPodSandbox(context.get(), {}, &pods));
  EXPECT_EQ(pods.items_size(), 0);
  EXPECT_FALSE(std::filesystem::exists(cpuset_dir_));
}

TEST_P(ContainerdDirectTest, BurstablePodWithInitContainerAndSidecar) {
  pod::Pod pod = Pod("uid-b1", {{"app", false, {{"cpu", Q("250m")}}, {{"cpu", Q("500m")}}}});
  pod.init_containers = {{"setup", false, {{"cpu", Q("100m")}}, {}},
                         {"proxy", true, {{"memory", Q("32Mi")}}, {}}};
  ASSERT_GRPC_OK(kubelet_->RunPod(pod));
  EXPECT_EQ(kubelet_->CgroupParent("uid-b1"),
            kubelet_->cgroup_root() + "/kubepods/burstable/poduid-b1");

  std::string setup;
  ASSERT_GRPC_OK(kubelet_->RunContainer("uid-b1", "setup", 0, &setup));
  ASSERT_GRPC_OK(kubelet_->WaitForState(setup, cri::CONTAINER_EXITED, std::chrono::seconds(30)));
  cri::ContainerStatusResponse status;
  ASSERT_GRPC_OK(kubelet_->ContainerStatus(setup, &status));
  EXPECT_EQ(status.status().exit_code(), 0);

  std::string proxy;
  std::string app;
  ASSERT_GRPC_OK(kubelet_->RunContainer("uid-b1", "proxy", 0, &proxy));
  ASSERT_GRPC_OK(kubelet_->RunContainer("uid-b1", "app", 0, &app));
  pid_t pid = 0;
  ASSERT_GRPC_OK(kubelet_->ContainerPid(app, &pid));
  auto cpu_dir = CgroupDir(pid, "cpu");
  ASSERT_TRUE(cpu_dir.ok());
  EXPECT_EQ(*cpu_dir, "/sys/fs/cgroup/cpu" + kubelet_->CgroupParent("uid-b1") + "/" + app);
  EXPECT_EQ(Str(ReadCgroupValue(*cpu_dir, "cpu.shares")), "256");
  EXPECT_EQ(Str(ReadCgroupValue(*cpu_dir, "cpu.cfs_quota_us")), "50000");
  // No cpuset was asked for: the container may use every CPU of its parent.
  EXPECT_EQ(Str(CpusAllowedList(pid)),
            Str(ReadCgroupValue("/sys/fs/cgroup/cpuset", "cpuset.cpus")));
}

// containerd re-attaches to the running shims: the container keeps its process and still
// takes updates.
TEST_P(ContainerdDirectTest, ARestartedContainerdStillManagesTheContainer) {
  ASSERT_NO_FATAL_FAILURE(RunPinnedApp("uid-g7", "1"));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(containerd_.Restart().ok()) << containerd_.log();
  PrintTiming("containerd restart", start);
  pid_t pid = 0;
  ASSERT_GRPC_OK(kubelet_->ContainerPid(id_, &pid));
  EXPECT_EQ(pid, pid_);
  ASSERT_GRPC_OK(kubelet_->UpdateCpuset(id_, "0"));
  EXPECT_EQ(Str(CpusAllowedList(pid_)), "0");
  EXPECT_EQ(StoredCpuset(), "0");
}

// --- the resources kubelet computes (no containerd needed) ---

std::string RuntimeName(const ::testing::TestParamInfo<Runtime>& runtime) {
  return runtime.param == Runtime::kDebian ? "Debian" : "Containerd2";
}

// For gtest's messages and test listing, which would show the enum's bytes.
void PrintTo(Runtime runtime, std::ostream* out) {
  *out << (runtime == Runtime::kDebian ? "Debian" : "Containerd2");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ContainerdDirectTest,
                         ::testing::Values(Runtime::kDebian, Runtime::kContainerd2), RuntimeName);

TEST(KubeletResourcesTest, CpuSharesAndQuotaAsKubelet) {
  EXPECT_EQ(MilliCpuToShares(0), 2);
  EXPECT_EQ(MilliCpuToShares(1), 2);
  EXPECT_EQ(MilliCpuToShares(250), 256);
  EXPECT_EQ(MilliCpuToShares(1000), 1024);
  EXPECT_EQ(MilliCpuToShares(1'000'000), 262144);
  EXPECT_EQ(MilliCpuToQuota(0, kCpuPeriod), 0);
  EXPECT_EQ(MilliCpuToQuota(5, kCpuPeriod), 1000);
  EXPECT_EQ(MilliCpuToQuota(1500, kCpuPeriod), 150000);
}

TEST(KubeletResourcesTest, OomScoreByQos) {
  const int64_t gib = int64_t{1} << 30;
  EXPECT_EQ(OomScoreAdj(pod::QosClass::kGuaranteed, gib, 4 * gib), -997);
  EXPECT_EQ(OomScoreAdj(pod::QosClass::kBestEffort, 0, 4 * gib), 1000);
  EXPECT_EQ(OomScoreAdj(pod::QosClass::kBurstable, gib, 4 * gib), 750);
  EXPECT_EQ(OomScoreAdj(pod::QosClass::kBurstable, 0, 4 * gib), 999);
  EXPECT_EQ(OomScoreAdj(pod::QosClass::kBurstable, 4 * gib, 4 * gib), 3);
}

TEST(KubeletResourcesTest, ContainerAndSandboxResources) {
  NodeFacts node{.memory_capacity_bytes = int64_t{4} << 30, .huge_page_sizes_kib = {2048, 1048576}};
  pod::Pod pod = Pod(
      "u",
      {{"a", false, {}, {{"cpu", Q("1")}, {"memory", Q("64Mi")}, {"hugepages-2Mi", Q("4Mi")}}}});
  pod::ApplyRequestDefaults(pod);
  cri::LinuxContainerResources r = ContainerResources(pod, pod.containers[0], node);
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.cpu_quota(), 100000);
  EXPECT_EQ(r.cpu_shares(), 1024);
  EXPECT_EQ(r.memory_limit_in_bytes(), 64 << 20);
  EXPECT_EQ(r.memory_swap_limit_in_bytes(), 64 << 20);
  EXPECT_EQ(r.oom_score_adj(), -997);
  EXPECT_EQ(r.cpuset_cpus(), "");
  ASSERT_EQ(r.hugepage_limits_size(), 2);
  EXPECT_EQ(r.hugepage_limits(0).page_size(), "2MB");
  EXPECT_EQ(r.hugepage_limits(0).limit(), 4u << 20);
  EXPECT_EQ(r.hugepage_limits(1).page_size(), "1GB");
  EXPECT_EQ(r.hugepage_limits(1).limit(), 0u);

  cri::LinuxContainerResources sandbox = SandboxResources(pod);
  EXPECT_EQ(sandbox.cpu_shares(), 1024);
  EXPECT_EQ(sandbox.cpu_quota(), 100000);
  EXPECT_EQ(sandbox.memory_limit_in_bytes(), 64 << 20);
  EXPECT_EQ(sandbox.oom_score_adj(), 0);

  EXPECT_EQ(PodCgroupParent("/r", pod::QosClass::kBestEffort, "u"), "/r/kubepods/besteffort/podu");
}

}  // namespace
}  // namespace topologyd::testing::containerd
