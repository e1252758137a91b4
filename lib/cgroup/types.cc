#include "lib/cgroup/types.h"

#include "absl/status/status.h"
#include "fmt/format.h"

namespace topologyd::cgroup {

std::string_view CpusetFileName(CpusetFile file) {
  return file == CpusetFile::kCpus ? "cpuset.cpus" : "cpuset.mems";
}

absl::StatusOr<CgroupVersionSetting> ParseCgroupVersionSetting(std::string_view text) {
  if (text == "auto") return CgroupVersionSetting::kAuto;
  if (text == "v1") return CgroupVersionSetting::kV1;
  if (text == "v2") return CgroupVersionSetting::kV2;
  return absl::InvalidArgumentError(
      fmt::format("cgroup version \"{}\" is not one of auto, v1, v2", text));
}

absl::StatusOr<CgroupDriver> ParseCgroupDriver(std::string_view text) {
  if (text == "cgroupfs") return CgroupDriver::kCgroupfs;
  if (text == "systemd") return CgroupDriver::kSystemd;
  return absl::InvalidArgumentError(
      fmt::format("cgroup driver \"{}\" is not one of cgroupfs, systemd", text));
}

absl::StatusOr<QosClass> ParseQosClass(std::string_view text) {
  if (text == "Guaranteed") return QosClass::kGuaranteed;
  if (text == "Burstable") return QosClass::kBurstable;
  if (text == "BestEffort") return QosClass::kBestEffort;
  return absl::InvalidArgumentError(
      fmt::format("QoS class \"{}\" is not one of Guaranteed, Burstable, BestEffort", text));
}

absl::StatusOr<Runtime> ParseRuntime(std::string_view text) {
  if (text == "containerd") return Runtime::kContainerd;
  if (text == "cri-o" || text == "crio") return Runtime::kCrio;
  return absl::InvalidArgumentError(
      fmt::format("container runtime \"{}\" is not one of containerd, cri-o", text));
}

std::string_view ToString(CgroupVersion version) {
  return version == CgroupVersion::kV1 ? "v1" : "v2";
}

std::string_view ToString(CgroupDriver driver) {
  return driver == CgroupDriver::kCgroupfs ? "cgroupfs" : "systemd";
}

std::string_view ToString(Runtime runtime) {
  return runtime == Runtime::kCrio ? "cri-o" : "containerd";
}

}  // namespace topologyd::cgroup
