// topoctl state import-kubelet: converts kubelet's CPU / Memory / Device Manager checkpoints
// into a topologyd state file, so a node moves to topologyd without draining. Offline: reads
// files, verifies their checksums as kubelet does, writes one file (or stdout).
#include <iostream>
#include <optional>
#include <random>
#include <string>

#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/common/status_macros.h"
#include "lib/kubelet_import/kubelet_device_advice.h"
#include "lib/kubelet_import/kubelet_import.h"
#include "lib/state/checkpoint_codec.h"
#include "lib/state/file_system.h"
#include "tools/topoctl/command.h"

namespace topoctl {
namespace {

namespace st = topologyd::state;
namespace kubelet = topologyd::state::kubelet;

struct ImportOptions {
  std::string cpu_state;
  std::string memory_state;
  std::string device_state;
  std::string out;
  bool force = false;
};

absl::StatusOr<std::string> ReadInput(st::FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::string> bytes = fs.ReadFile(path);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        fmt::format("cannot read {}: {}", path, bytes.status().message()));
  }
  return bytes;
}

absl::StatusOr<st::State> Import(st::FileSystem& fs, const ImportOptions& o, std::string* advice) {
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string cpu_bytes, ReadInput(fs, o.cpu_state));
  TOPOLOGYD_ASSIGN_OR_RETURN(kubelet::CpuCheckpoint cpu,
                             kubelet::ParseCpuCheckpoint(cpu_bytes, o.cpu_state));
  std::optional<kubelet::MemoryCheckpoint> memory;
  if (!o.memory_state.empty()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string bytes, ReadInput(fs, o.memory_state));
    TOPOLOGYD_ASSIGN_OR_RETURN(memory, kubelet::ParseMemoryCheckpoint(bytes, o.memory_state));
  }
  std::optional<kubelet::DeviceCheckpoint> devices;
  if (!o.device_state.empty()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string bytes, ReadInput(fs, o.device_state));
    TOPOLOGYD_ASSIGN_OR_RETURN(devices, kubelet::ParseDeviceCheckpoint(bytes, o.device_state));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(
      st::State state,
      kubelet::ImportKubeletState(cpu, memory ? &*memory : nullptr, devices ? &*devices : nullptr));
  state.generation = 1;  // a saved state; the daemon continues counting from here
  if (devices) *advice = kubelet::DevicePoolAdvice(*devices);
  return state;
}

// Writes `bytes` to `path` through a temp file in the same directory, fsynced and renamed, so
// the target is never left half-written.
absl::Status WriteOut(st::FileSystem& fs, const std::string& path, const std::string& bytes,
                      bool force) {
  if (absl::StatusOr<std::string> existing = fs.ReadFile(path);
      !absl::IsNotFound(existing.status())) {
    if (!force) {
      return absl::AlreadyExistsError(
          fmt::format("{} already exists; not overwriting it (pass --force to replace it)", path));
    }
  }
  std::mt19937_64 rng{std::random_device{}()};
  const std::string temp = fmt::format("{}.tmp-{:016x}", path, rng());
  absl::Status s = fs.WriteNewFileAndSync(temp, bytes, 0600);
  if (s.ok()) s = fs.Rename(temp, path);
  if (!s.ok()) {
    (void)fs.Remove(temp);
    return s;
  }
  return fs.SyncDir(st::DirName(path));
}

std::string Summary(const st::State& state) {
  size_t containers = 0;
  for (const auto& [uid, pod] : state.pods) containers += pod.containers.size();
  const std::string cpus = st::ExclusiveCpus(state).ToString();
  return fmt::format("imported {} pods, {} containers; exclusive CPUs: {}", state.pods.size(),
                     containers, cpus.empty() ? "none" : cpus);
}

int RunImport(const ImportOptions& o) {
  st::PosixFileSystem fs;
  std::string advice;
  absl::StatusOr<st::State> state = Import(fs, o, &advice);
  if (!state.ok()) {
    std::cerr << "topoctl: state import-kubelet: " << state.status().message() << "\n";
    return kExitRefused;
  }
  absl::StatusOr<std::string> bytes = st::EncodeState(*state);
  if (!bytes.ok()) {
    std::cerr << "topoctl: state import-kubelet: " << bytes.status().message() << "\n";
    return kExitRefused;
  }
  if (o.out.empty()) {
    std::cout << *bytes;
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "topoctl: state import-kubelet: cannot write to standard output\n";
      return kExitRefused;
    }
  } else if (absl::Status s = WriteOut(fs, o.out, *bytes, o.force); !s.ok()) {
    std::cerr << "topoctl: state import-kubelet: " << s.message() << "\n";
    return kExitRefused;
  }
  std::cerr << Summary(*state) << (o.out.empty() ? "" : fmt::format("; wrote {}", o.out)) << "\n"
            << advice;
  return kExitOk;
}

void InstallState(CLI::App& root, CommandContext& ctx) {
  CLI::App* state = root.add_subcommand("state", "inspect or migrate topologyd's state file");
  state->require_subcommand(1);
  CLI::App* import_kubelet = state->add_subcommand(
      "import-kubelet",
      "convert kubelet's cpu_manager_state (and memory_manager_state, kubelet_internal_checkpoint) "
      "into a topologyd state file");
  auto options = std::make_shared<ImportOptions>();
  import_kubelet->add_option("--cpu-state", options->cpu_state, "kubelet's cpu_manager_state")
      ->required();
  import_kubelet->add_option("--memory-state", options->memory_state,
                             "kubelet's memory_manager_state");
  import_kubelet->add_option("--device-state", options->device_state,
                             "kubelet's device-plugins/kubelet_internal_checkpoint");
  import_kubelet->add_option("--out", options->out,
                             "write the state file here (default: print it on standard output)");
  import_kubelet->add_flag("--force", options->force, "replace an existing --out file");
  import_kubelet->callback(
      [&ctx, options] { ctx.action = [options] { return RunImport(*options); }; });
}

TOPOCTL_REGISTER_COMMAND(InstallState);

}  // namespace
}  // namespace topoctl
