#include "tests/support/kube/kubelet_process.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "lib/curl_easy/curl_easy.h"
#include "tests/support/containerd/host_checks.h"
#include "tests/support/containerd/subprocess.h"
#include "tests/support/free_port.h"
#include "tests/support/kube/local_get.h"

namespace topologyd::testing::kube {
namespace {

namespace fs = std::filesystem;
using containerd::CgroupMountPoints;
using containerd::RemoveCgroupTree;
using containerd::SpawnServer;

std::string NewCgroupRoot() {
  static std::atomic<int> counter{0};
  return absl::StrCat("/topologyd-kubelet-", ::getpid(), "-", counter++);
}

// kubelet refuses a cgroupRoot that is missing in any hierarchy it uses; a new cpuset cgroup
// v1 directory starts with no CPUs and no memory nodes and takes its parent's.
absl::Status CreateCgroupRoot(const std::string& root) {
  for (const std::string& mount : CgroupMountPoints()) {
    const std::string dir = mount + root;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, ": ", ec.message()));
    if (!fs::exists(dir + "/cpuset.cpus")) continue;
    for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
      std::ifstream parent(mount + "/" + file);
      std::string value;
      std::getline(parent, value);
      std::ofstream(dir + "/" + file) << value;
    }
  }
  return absl::OkStatus();
}

std::string KubeletConfiguration(const std::string& dir, const std::string& manifests,
                                 const std::string& cgroup_root, int healthz_port,
                                 int read_only_port, const KubeletOptions& options) {
  std::ostringstream c;
  c << "apiVersion: kubelet.config.k8s.io/v1beta1\n"
       "kind: KubeletConfiguration\n"
       "staticPodPath: "
    << manifests
    << "\n"
       "fileCheckFrequency: 1s\n"
       "syncFrequency: 5s\n"
       "containerRuntimeEndpoint: "
    << options.runtime_endpoint << "\n";
  // With the shim topologyd decides and kubelet's own managers stay out of the way
  // (docs/shim.md).
  c << "cgroupDriver: cgroupfs\n"
       "cgroupsPerQOS: true\n"
       "cgroupRoot: "
    << cgroup_root << "\ncpuManagerPolicy: " << options.cpu_manager_policy << "\n";
  if (!options.reserved_system_cpus.empty()) {
    c << "reservedSystemCPUs: \"" << options.reserved_system_cpus
      << "\"\ncpuManagerReconcilePeriod: 1s\n";
  }
  c << "memoryManagerPolicy: None\n"
       "topologyManagerPolicy: none\n"
       // This machine mounts cgroup v1 and has swap settings of its own.
       "failCgroupV1: false\n"
       "failSwapOn: false\n"
       // Every server on loopback; the read-only port serves /pods without authentication.
       "address: 127.0.0.1\n"
       "port: "
    << FreeLoopbackPort()
    << "\n"
       "readOnlyPort: "
    << read_only_port
    << "\n"
       "healthzBindAddress: 127.0.0.1\n"
       "healthzPort: "
    << healthz_port
    << "\n"
       // The defaults need an API server for webhook authentication and authorization.
       "authentication:\n"
       "  anonymous: {enabled: true}\n"
       "  webhook: {enabled: false}\n"
       "authorization: {mode: AlwaysAllow}\n"
       // Neither image garbage collection nor disk eviction may fire on a test machine.
       "imageGCHighThresholdPercent: 100\n"
       "imageGCLowThresholdPercent: 99\n"
       "evictionHard:\n"
       "  memory.available: \"0%\"\n"
       "  nodefs.available: \"0%\"\n"
       "  nodefs.inodesFree: \"0%\"\n"
       "  imagefs.available: \"0%\"\n"
       "podLogsDir: "
    << dir
    << "/pod-logs\n"
       "resolvConf: \"\"\n";
  return c.str();
}

// kubelet bind-mounts its root directory onto itself (to make it a shared mount) and mounts
// pod volumes below it; the mounts outlive kubelet. Unmounts every mount at or under `dir`,
// deepest first.
absl::Status UnmountUnder(const std::string& dir) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::vector<std::string> points;
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point == dir || point.rfind(dir + "/", 0) == 0) points.push_back(point);
  }
  std::sort(points.rbegin(), points.rend());
  for (const std::string& point : points) {
    if (::umount2(point.c_str(), MNT_DETACH) != 0 && errno != EINVAL) {
      return absl::InternalError(absl::StrCat("umount ", point, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string KubeBinary(std::string_view name) {
  const char* env = std::getenv("TOPOLOGYD_KUBE_BIN_DIR");
  std::string dir = env != nullptr ? env : "";
#ifdef TOPOLOGYD_KUBE_BIN_DIR
  if (dir.empty()) dir = TOPOLOGYD_KUBE_BIN_DIR;
#endif
  return dir.empty() ? "" : absl::StrCat(dir, "/", std::string(name));
}

std::string KubeletSkipReason() {
  const std::string binary = KubeletBinary();
  if (binary.empty()) {
    return "no kubelet: configure with -DTOPOLOGYD_KUBE_BIN_DIR=$(tools/build-kube.sh kubelet) "
           "or set TOPOLOGYD_KUBE_BIN_DIR";
  }
  if (::access(binary.c_str(), X_OK) != 0) return binary + " is not an executable file";
  if (::geteuid() != 0) return "kubelet needs root";
  for (const char* controller : {"cpu", "cpuacct", "cpuset", "memory", "pids"}) {
    if (!fs::exists(std::string("/sys/fs/cgroup/") + controller + "/cgroup.procs")) {
      return std::string("no cgroup v1 hierarchy with the ") + controller +
             " controller at /sys/fs/cgroup/" + controller;
    }
  }
  return "";
}

KubeletProcess::~KubeletProcess() {
  Stop(SIGKILL);
  if (!dir_.empty()) {
    absl::Status unmounted = UnmountUnder(dir_ + "/root");
    if (!unmounted.ok()) ADD_FAILURE() << "kubelet's mounts: " << unmounted;
  }
  if (!cgroup_root_.empty()) {
    absl::Status removed = RemoveCgroupTree(cgroup_root_, std::chrono::seconds(10));
    // The first of what stayed: a runtime that still runs containers leaves them all.
    if (!removed.ok()) {
      ADD_FAILURE() << "kubelet's cgroups: " << removed.ToString().substr(0, 400);
    }
  }
}

absl::Status KubeletProcess::Start(const std::string& dir, KubeletOptions options) {
  dir_ = dir;
  manifests_ = dir + "/manifests";
  config_path_ = dir + "/kubelet.yaml";
  cgroup_root_ = NewCgroupRoot();
  kubeconfig_ = options.kubeconfig;
  healthz_port_ = FreeLoopbackPort();
  read_only_port_ = FreeLoopbackPort();
  std::error_code ec;
  for (const std::string& sub : {manifests_, dir + "/root", dir + "/pod-logs"}) {
    fs::create_directories(sub, ec);
    if (ec) return absl::InternalError(absl::StrCat("mkdir ", sub, ": ", ec.message()));
  }
  if (absl::Status s = CreateCgroupRoot(cgroup_root_); !s.ok()) return s;
  std::ofstream(config_path_) << KubeletConfiguration(dir, manifests_, cgroup_root_, healthz_port_,
                                                      read_only_port_, options);
  return Launch();
}

absl::Status KubeletProcess::Launch() {
  std::vector<std::string> argv = {KubeletBinary(), "--config", config_path_, "--root-dir",
                                   dir_ + "/root",  "--v",      "2"};
  argv.insert(argv.end(), {"--hostname-override", kNodeName});
  if (!kubeconfig_.empty()) argv.insert(argv.end(), {"--kubeconfig", kubeconfig_});
  pid_ = SpawnServer(argv, dir_ + "/kubelet.log");
  if (pid_ < 0) return absl::InternalError("cannot start kubelet");
  return WaitUntilAnswers(pid_, "kubelet",
                          absl::StrCat("http://127.0.0.1:", healthz_port_, "/healthz"), "ok",
                          std::chrono::seconds(60), [this] { return log(); });
}

absl::Status KubeletProcess::Restart() {
  Stop(SIGKILL);
  return Launch();
}

void KubeletProcess::Stop(int sig) { containerd::StopChild(pid_, sig); }

absl::StatusOr<std::string> KubeletProcess::Get(int port, const std::string& path) const {
  return LocalGet(absl::StrCat("http://127.0.0.1:", port, path), 64 << 20);
}

absl::Status KubeletProcess::WriteManifest(const std::string& name, const std::string& yaml) const {
  // Written aside and renamed: kubelet must never read half a manifest.
  const std::string tmp = dir_ + "/." + name + ".yaml";
  std::ofstream(tmp, std::ios::trunc) << yaml;
  std::error_code ec;
  fs::rename(tmp, manifests_ + "/" + name + ".yaml", ec);
  if (ec) return absl::InternalError(absl::StrCat("rename ", tmp, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status KubeletProcess::RemoveManifest(const std::string& name) const {
  std::error_code ec;
  if (!fs::remove(manifests_ + "/" + name + ".yaml", ec)) {
    return absl::NotFoundError(absl::StrCat("no manifest ", name, ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<nlohmann::json>> KubeletProcess::Pods() const {
  auto text = Get(read_only_port_, "/pods");
  if (!text.ok()) return text.status();
  nlohmann::json list = nlohmann::json::parse(*text, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return absl::InternalError("kubelet's /pods is not a PodList: " + text->substr(0, 200));
  }
  return list["items"].get<std::vector<nlohmann::json>>();
}

absl::StatusOr<nlohmann::json> KubeletProcess::Pod(const std::string& ns,
                                                   const std::string& name) const {
  auto pods = Pods();
  if (!pods.ok()) return pods.status();
  for (const nlohmann::json& pod : *pods) {
    const nlohmann::json& meta = pod["metadata"];
    if (meta.value("namespace", "") == ns && meta.value("name", "") == name) return pod;
  }
  return absl::NotFoundError("kubelet has no pod " + ns + "/" + name);
}

std::string KubeletProcess::log() const { return containerd::ReadWholeFile(dir_ + "/kubelet.log"); }

}  // namespace topologyd::testing::kube
