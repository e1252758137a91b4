// What the end-to-end tests against containerd check after each step, whichever front end
// (topologyd-shim, topologyd-nri) sits between kubelet and topologyd: a container's process,
// cgroup and the runtime's stored resources show the CPUs topologyd reports for it, and the
// CFS quotas of the container and its pod cgroup. Where the runtime keeps what it was given
// depends on the front end: a relay changes the CRI request, which the runtime stores as the
// container's resources; an NRI plugin adjusts the OCI spec, which the runtime applies and
// re-applies on every update but does not copy back into the CRI resources.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/node/node_stack.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::containerd {

class PlacementChecks {
 public:
  // What "stored" reads: the CRI resources ContainerStatus reports, or the cpu resources of
  // the OCI spec in its verbose info.
  enum class Stored { kCriResources, kOciSpec };

  // Both outlive this.
  PlacementChecks(KubeletEmulator* kubelet, NodeStack* stack, Stored stored = Stored::kCriResources)
      : kubelet_(kubelet), stack_(stack), stored_(stored) {}

  static std::string Str(const absl::StatusOr<std::string>& value) {
    return value.ok() ? *value : "<" + value.status().ToString() + ">";
  }

  // "allowed=X cgroup=Y stored=Z" for container `id`: the kernel's and the runtime's view.
  std::string Placement(const std::string& id) {
    pid_t pid = 0;
    grpc::Status status = kubelet_->ContainerPid(id, &pid);
    if (!status.ok()) return "<pid: " + status.error_message() + ">";
    auto dir = CgroupDir(pid, "cpuset");
    return "allowed=" + Str(CpusAllowedList(pid)) +
           " cgroup=" + (dir.ok() ? Str(ReadCgroupValue(*dir, "cpuset.cpus")) : Str(dir.status())) +
           " stored=" + StoredCpu(id, "cpus");
  }

  static std::string Expected(const std::string& cpus) {
    return "allowed=" + cpus + " cgroup=" + cpus + " stored=" + cpus;
  }

  // The CFS quota of pod `uid`'s cgroup in the cpu hierarchy.
  std::string PodQuota(const std::string& uid) {
    absl::StatusOr<std::string> mount = V1MountPoint("cpu");
    if (!mount.ok()) return Str(mount.status());
    return Str(ReadCgroupValue(*mount + kubelet_->CgroupParent(uid), "cpu.cfs_quota_us"));
  }

  // "container=Q pod=P stored=S" for container `id`: the CFS quota of its cgroup, of its pod
  // cgroup (the container cgroup's parent under the cgroupfs driver) and the runtime's.
  std::string Quotas(const std::string& id) {
    pid_t pid = 0;
    grpc::Status status = kubelet_->ContainerPid(id, &pid);
    if (!status.ok()) return "<pid: " + status.error_message() + ">";
    absl::StatusOr<std::string> dir = CgroupDir(pid, "cpu");
    if (!dir.ok()) return Str(dir.status());
    return "container=" + Str(ReadCgroupValue(*dir, "cpu.cfs_quota_us")) + " pod=" +
           Str(ReadCgroupValue(std::filesystem::path(*dir).parent_path(), "cpu.cfs_quota_us")) +
           " stored=" + StoredCpu(id, "quota");
  }

  // The runtime's record of the container's cpu `field` ("cpus" or "quota"), as text.
  std::string StoredCpu(const std::string& id, const std::string& field) {
    if (stored_ == Stored::kCriResources) {
      runtime::v1::LinuxContainerResources stored;
      grpc::Status status = kubelet_->StoredResources(id, &stored);
      if (!status.ok()) return "<" + status.error_message() + ">";
      return field == "cpus" ? stored.cpuset_cpus() : std::to_string(stored.cpu_quota());
    }
    runtime::v1::ContainerStatusResponse response;
    grpc::Status status = kubelet_->ContainerStatus(id, &response, /*verbose=*/true);
    if (!status.ok()) return "<" + status.error_message() + ">";
    auto info = response.info().find("info");
    if (info == response.info().end()) return "<no verbose info>";
    const nlohmann::json json = nlohmann::json::parse(info->second, nullptr, false);
    const nlohmann::json::json_pointer path("/runtimeSpec/linux/resources/cpu/" + field);
    if (json.is_discarded() || !json.contains(path)) return "";
    const nlohmann::json& value = json[path];
    return value.is_string() ? value.get<std::string>() : value.dump();
  }

  // Container `id`, topologyd's container `name` of pod `uid`, runs where topologyd put it: its
  // process, its cgroup and the runtime's stored resources show the allocation's CPUs, and the
  // allocation is bound to `id`. Polls, for the effects topologyd and the front end push later.
  void ExpectOnAllocation(const std::string& uid, const std::string& name, const std::string& id,
                          const std::string& cpus) {
    std::string placement;
    std::optional<v1::ContainerAllocation> allocation;
    bool settled = PollUntil([&] {
      allocation = stack_->Allocation(uid, name);
      placement = Placement(id);
      return allocation && allocation->cpus() == cpus && allocation->container_id() == id &&
             placement == Expected(cpus);
    });
    ASSERT_TRUE(allocation.has_value()) << uid << "/" << name << " not held";
    EXPECT_EQ(allocation->cpus(), cpus) << uid << "/" << name;
    EXPECT_EQ(allocation->container_id(), id) << uid << "/" << name;
    EXPECT_EQ(placement, Expected(cpus)) << uid << "/" << name;
    EXPECT_TRUE(settled);
  }

 private:
  KubeletEmulator* kubelet_;
  NodeStack* stack_;
  Stored stored_;
};

}  // namespace topologyd::testing::containerd
