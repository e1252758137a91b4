#include "tests/support/containerd/containerd_instance.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include <grpcpp/client_context.h>

#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/oci_image.h"
#include "tests/support/containerd/subprocess.h"

#include "cri/v1/runtime.grpc.pb.h"

namespace topologyd::testing::containerd {
namespace {

namespace fs = std::filesystem;
namespace cri = runtime::v1;

constexpr auto kStartDeadline = std::chrono::seconds(30);
constexpr auto kCallDeadline = std::chrono::seconds(30);

void SetDeadline(grpc::ClientContext& context, std::chrono::seconds deadline) {
  context.set_deadline(std::chrono::system_clock::now() + deadline);
}

std::string ConfigToml(const std::string& dir, const std::string& socket, bool restrict_oom,
                       bool nri) {
  // Quoted TOML basic strings; the paths are the test's own and contain no quotes.
  auto q = [](const std::string& s) { return "\"" + s + "\""; };
  const std::string cri = R"([plugins."io.containerd.grpc.v1.cri")";
  std::string toml;
  toml += "version = 2\n";
  toml += "root = " + q(dir + "/root") + "\n";
  toml += "state = " + q(dir + "/state") + "\n";
  // Snapshotters that probe for kernel features or devices this node lacks, and log errors.
  toml +=
      "disabled_plugins = [\"io.containerd.snapshotter.v1.aufs\", "
      "\"io.containerd.snapshotter.v1.btrfs\", \"io.containerd.snapshotter.v1.zfs\", "
      "\"io.containerd.snapshotter.v1.devmapper\"]\n";
  toml += "[grpc]\n  address = " + q(socket) + "\n";
  toml += "[ttrpc]\n  address = " + q(socket + ".ttrpc") + "\n";
  toml += "[plugins.\"io.containerd.internal.v1.opt\"]\n  path = " + q(dir + "/opt") + "\n";
  toml += "[plugins.\"io.containerd.runtime.v1.linux\"]\n  runtime_root = " + q(dir + "/runc-v1") +
          "\n";
  toml += cri + "]\n";
  toml += "  sandbox_image = " + q(ContainerdInstance::kSandboxImage) + "\n";
  toml += "  disable_tcp_service = true\n";
  toml += "  stream_server_address = \"127.0.0.1\"\n";
  toml += "  stream_server_port = \"0\"\n";
  toml += "  disable_apparmor = true\n";
  // The hugetlb controller may be missing; kubelet still sends a limit per page size.
  toml += "  disable_hugetlb_controller = true\n";
  toml += std::string("  restrict_oom_score_adj = ") + (restrict_oom ? "true" : "false") + "\n";
  toml += cri + ".cni]\n";
  toml += "    bin_dir = " + q(dir + "/cni/bin") + "\n";
  toml += "    conf_dir = " + q(dir + "/cni/conf") + "\n";
  toml += cri + ".containerd.runtimes.runc]\n";
  toml += "    runtime_type = \"io.containerd.runc.v2\"\n";
  toml += cri + ".containerd.runtimes.runc.options]\n";
  toml += "    Root = " + q(dir + "/runc") + "\n";
  toml += "    SystemdCgroup = false\n";
  if (nri) {
    // containerd 2.x reads this version 2 file after migrating it; NRI is its plugin.
    toml += "[plugins.\"io.containerd.nri.v1.nri\"]\n";
    toml += "  disable = false\n";
    toml += "  socket_path = " + q(dir + "/nri.sock") + "\n";
    toml += "  plugin_path = " + q(dir + "/nri/plugins") + "\n";
    toml += "  plugin_config_path = " + q(dir + "/nri/conf.d") + "\n";
  }
  return toml;
}

// Mount points at or under `dir`, deepest first.
std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 5) continue;
    const std::string& point = fields[4];  // octal-escaped; the test's paths need no escapes
    if (point == dir || point.rfind(dir + "/", 0) == 0) mounts.push_back(point);
  }
  std::sort(mounts.begin(), mounts.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return mounts;
}

// Processes whose command line names `socket` as a separate argument: the shims containerd
// started for this instance (containerd-shim-runc-v2 -namespace k8s.io -id ID -address SOCK).
std::vector<pid_t> ProcessesNaming(const std::string& socket) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string cmdline = ReadWholeFile(entry.path().string() + "/cmdline");
    for (absl::string_view arg : absl::StrSplit(cmdline, '\0')) {
      if (arg == socket) {
        pids.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return pids;
}

}  // namespace

bool HasCapSysResource() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      uint64_t caps = std::stoull(line.substr(7), nullptr, 16);
      return (caps >> 24) & 1;  // CAP_SYS_RESOURCE
    }
  }
  return false;
}

std::string Containerd2BinDir() {
  if (const char* dir = std::getenv("TOPOLOGYD_CONTAINERD2_BIN_DIR"); dir != nullptr && *dir) {
    return dir;
  }
#ifdef TOPOLOGYD_CONTAINERD2_BIN_DIR
  return TOPOLOGYD_CONTAINERD2_BIN_DIR;
#else
  return "";
#endif
}

std::string ContainerdSkipReason(const ContainerdOptions& options) {
  if (::geteuid() != 0) return "needs root (runs containerd and runc)";
  if (!options.bin_dir.empty()) {
    for (const char* program : {"containerd", "containerd-shim-runc-v2"}) {
      if (::access((options.bin_dir + "/" + program).c_str(), X_OK) != 0) {
        return absl::StrCat("no ", program, " in ", options.bin_dir,
                            " (tools/build-containerd.sh builds it)");
      }
    }
  }
  for (const char* tool : {"containerd", "runc", "ctr", "tar", "sha256sum"}) {
    if (!options.bin_dir.empty() && std::string_view(tool) == "containerd") continue;
    if (FindExecutable(tool).empty()) {
      return absl::StrCat(tool, " not found (Debian: apt-get install containerd runc)");
    }
  }
  std::string busybox = FindExecutable("busybox");
  if (busybox.empty() || !IsStaticElf(busybox)) {
    return "no statically linked busybox (Debian: apt-get install busybox-static)";
  }
  if (!fs::exists("/sys/fs/cgroup/cpuset/cpuset.cpus")) {
    return "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset";
  }
  return "";
}

ContainerdInstance::~ContainerdInstance() {
  if (dir_.empty()) return;
  if (running()) {
    (void)RemoveAllPods();
    (void)Stop();
  }
  RemoveLeftovers();
  if (own_dir_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

absl::StatusOr<std::string> ContainerdInstance::Start(const std::string& requested_dir) {
  if (running()) return absl::FailedPreconditionError("containerd is already running");
  std::string dir = requested_dir;
  if (dir.empty() && !dir_.empty()) dir = dir_;
  if (dir.empty()) {
    char name[] = "/tmp/tpd-ctrd-XXXXXX";
    if (::mkdtemp(name) == nullptr) return absl::InternalError("mkdtemp failed");
    dir = name;
    own_dir_ = true;
  }
  if (!dir_.empty() && dir != dir_) {
    return absl::FailedPreconditionError("an instance serves one directory: " + dir_);
  }
  const std::string containerd =
      options_.bin_dir.empty() ? FindExecutable("containerd") : options_.bin_dir + "/containerd";
  if (containerd.empty()) return absl::NotFoundError("containerd not found");
  dir_ = dir;
  socket_ = dir + "/containerd.sock";
  restrict_oom_score_adj_ = !HasCapSysResource();
  std::error_code ec;
  for (const char* sub : {"cni/bin", "cni/conf", "opt", "runc", "nri/plugins", "nri/conf.d"}) {
    fs::create_directories(dir + "/" + sub, ec);
    if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, "/", sub, ": ", ec.message()));
  }
  const std::string config = dir + "/config.toml";
  std::ofstream(config, std::ios::trunc)
      << ConfigToml(dir, socket_, restrict_oom_score_adj_, options_.nri);

  std::vector<std::string> argv = {containerd, "--config", config};
  if (!options_.bin_dir.empty()) {
    // containerd finds its shim on PATH: the one built with it, not Debian's.
    const char* path = std::getenv("PATH");
    argv.insert(argv.begin(), {"/usr/bin/env", absl::StrCat("PATH=", options_.bin_dir, ":",
                                                            path != nullptr ? path : "")});
  }
  pid_ = SpawnServer(argv, dir + "/containerd.log");
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (auto status = WaitUntilServing(); !status.ok()) {
    (void)Stop();
    return status;
  }
  if (!images_imported_) {
    if (auto status = ImportImages(); !status.ok()) return status;
    images_imported_ = true;
  }
  return socket_;
}

absl::Status ContainerdInstance::WaitUntilServing() {
  // Probe the socket before the first RPC: a channel whose first connect fails backs off.
  auto until = std::chrono::steady_clock::now() + kStartDeadline;
  while (!SocketAccepts(socket_)) {
    if (WaitForChild(pid_, std::chrono::milliseconds(0))) {
      pid_ = -1;
      return absl::InternalError("containerd exited at start:\n" + Tail(log(), 3000));
    }
    if (std::chrono::steady_clock::now() > until) {
      return absl::DeadlineExceededError("containerd's socket never accepted:\n" +
                                         Tail(log(), 3000));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The socket serves before the CRI plugin has loaded; Version answers once it has.
  auto stub = cri::RuntimeService::NewStub(CriChannel(socket_));
  grpc::Status last;
  while (std::chrono::steady_clock::now() < until) {
    grpc::ClientContext context;
    SetDeadline(context, std::chrono::seconds(2));
    cri::VersionRequest request;
    cri::VersionResponse response;
    last = stub->Version(&context, request, &response);
    if (last.ok()) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("CRI Version never answered: ", last.error_message(), "\n", Tail(log(), 3000)));
}

absl::Status ContainerdInstance::ImportImages() {
  const std::string work = dir_ + "/image";
  fs::create_directories(work);
  const std::string archive = work + "/busybox.tar";
  if (auto status = WriteBusyboxImageArchive(FindExecutable("busybox"), work,
                                             {kSandboxImage, kImage}, archive);
      !status.ok()) {
    return status;
  }
  ToolResult import =
      RunTool({"ctr", "--address", socket_, "-n", "k8s.io", "images", "import", archive},
              std::chrono::seconds(120));
  if (import.exit_code != 0) return absl::InternalError("ctr images import: " + import.output);

  auto images = cri::ImageService::NewStub(CriChannel(socket_));
  grpc::ClientContext context;
  SetDeadline(context, kCallDeadline);
  cri::ImageStatusRequest request;
  request.mutable_image()->set_image(kImage);
  cri::ImageStatusResponse response;
  grpc::Status status = images->ImageStatus(&context, request, &response);
  if (!status.ok() || response.image().id().empty()) {
    return absl::InternalError(
        absl::StrCat("ImageStatus ", kImage, " after import: ", status.error_message()));
  }
  image_id_ = response.image().id();
  return absl::OkStatus();
}

absl::Status ContainerdInstance::Stop() {
  if (!running()) return absl::OkStatus();
  ::kill(pid_, SIGTERM);
  if (!WaitForChild(pid_, std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    WaitForChild(pid_, std::chrono::seconds(10));
    pid_ = -1;
    return absl::DeadlineExceededError("containerd ignored SIGTERM for 10 s; killed");
  }
  pid_ = -1;
  return absl::OkStatus();
}

absl::Status ContainerdInstance::Restart() {
  if (dir_.empty()) return absl::FailedPreconditionError("never started");
  if (auto status = Stop(); !status.ok()) return status;
  auto socket = Start(dir_);
  return socket.ok() ? absl::OkStatus() : socket.status();
}

std::string ContainerdInstance::log() const {
  return dir_.empty() ? "" : ReadWholeFile(dir_ + "/containerd.log");
}

absl::Status ContainerdInstance::RemoveAllPods() {
  auto stub = cri::RuntimeService::NewStub(CriChannel(socket_));
  grpc::ClientContext context;
  SetDeadline(context, kCallDeadline);
  cri::ListPodSandboxRequest list;
  cri::ListPodSandboxResponse pods;
  if (grpc::Status s = stub->ListPodSandbox(&context, list, &pods); !s.ok()) {
    return absl::UnavailableError("ListPodSandbox: " + s.error_message());
  }
  absl::Status result;
  for (const auto& pod : pods.items()) {
    grpc::ClientContext stop_context;
    SetDeadline(stop_context, kCallDeadline);
    cri::StopPodSandboxRequest stop;
    stop.set_pod_sandbox_id(pod.id());
    cri::StopPodSandboxResponse stopped;
    grpc::Status s = stub->StopPodSandbox(&stop_context, stop, &stopped);
    grpc::ClientContext remove_context;
    SetDeadline(remove_context, kCallDeadline);
    cri::RemovePodSandboxRequest remove;
    remove.set_pod_sandbox_id(pod.id());
    cri::RemovePodSandboxResponse removed;
    if (s.ok()) s = stub->RemovePodSandbox(&remove_context, remove, &removed);
    if (!s.ok() && result.ok()) {
      result = absl::InternalError(absl::StrCat("pod ", pod.id(), ": ", s.error_message()));
    }
  }
  return result;
}

void ContainerdInstance::RemoveLeftovers() {
  // Containers the CRI could not remove (containerd dead or stuck): runc kills their
  // processes and removes their cgroups.
  const std::string runc_root = dir_ + "/runc/k8s.io";
  std::error_code ec;
  if (fs::is_directory(runc_root, ec)) {
    for (const auto& entry : fs::directory_iterator(runc_root, ec)) {
      RunTool({"runc", "--root", runc_root, "delete", "--force", entry.path().filename()},
              std::chrono::seconds(30));
    }
  }
  for (pid_t shim : ProcessesNaming(socket_)) ::kill(shim, SIGKILL);
  for (const auto& mount : MountsUnder(dir_)) ::umount2(mount.c_str(), MNT_DETACH);
}

}  // namespace topologyd::testing::containerd
