// topologyd_load: a load generator for the daemon's gRPC API.
//
// N clients (one gRPC channel each) loop Admit(fresh pod) -> Release(pod) against a daemon —
// a thread each, or all driven by one event-loop thread (--driver) — and the same run measures
// the two floors an admission cannot go below: a no-op RPC (Status, same N clients) and a bare
// durable checkpoint write (CheckpointStore::Save of a State the size the daemon writes during the
// run). Admit p50 is reported as a ratio to the sum of the two floors' p50s.
//
// The daemon is either one already running (--socket) or one started here (--spawn) in a
// temp directory with a generated configuration; the spawned daemon gets NOTIFY_SOCKET
// pointing at a datagram socket bound here, so start-up is timed from fork to READY=1.
// --startup-containers N additionally writes a checkpoint holding N containers, restarts the
// daemon on it and times start-up again.
//
// Every phase is bounded (--duration seconds or --ops operations) and stops by itself. Any
// failed operation stops the run and makes the exit code 1; bad usage exits 2.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include <grpcpp/grpcpp.h>

#include "bench/load_phases.h"
#include "lib/common/absl_fmt.h"
#include "lib/cpuset/cpuset.h"
#include "lib/state/file_store.h"
#include "lib/state/file_system.h"
#include "lib/state/state.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

extern char** environ;

namespace topologyd::bench {
namespace {

namespace v1 = ::topologyd::v1;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr auto kRpcDeadline = std::chrono::seconds(10);
constexpr auto kReadyDeadline = std::chrono::seconds(30);
constexpr auto kStopDeadline = std::chrono::seconds(10);
// sun_path is 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;

struct Options {
  std::string socket;
  bool spawn = false;
  std::string daemon_binary;
  std::string topology;
  std::string reserved_cpus = "0";
  std::string work_dir = "/tmp";
  int clients = 8;
  double duration_s = 2.0;
  int64_t ops = 0;  // > 0: a bounded count per phase instead of a duration
  int cpus_per_pod = 2;
  int startup_containers = 0;
  int startup_runs = 3;
  std::set<std::string> phases = {"status", "checkpoint", "admit"};
  std::string driver = "threads";
  // --compare-exports: rounds of admit latency with the exports off and on.
  int compare_rounds = 0;
  std::string exports_config;  // a YAML fragment file added to the "on" configuration
  int scrape_interval_ms = 200;
  bool json = false;
  bool keep = false;
};

// ---------------------------------------------------------------------------------------------
// Files and the spawned daemon.

std::string MakeTempDir(const std::string& parent) {
  std::string pattern = parent + "/tpd-load-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(fmt::format("mkdtemp in {}: {}", parent, std::strerror(errno)));
  }
  return pattern;
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

std::string MachineModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(" \t"));
        return name;
      }
    }
  }
  return "unknown";
}

// A topologyd child with its own NOTIFY_SOCKET. SIGKILLed on destruction if still running.
class SpawnedDaemon {
 public:
  SpawnedDaemon(std::string binary, std::string dir) : binary_(std::move(binary)), dir_(dir) {
    notify_path_ = dir_ + "/notify.sock";
    config_path_ = dir_ + "/config.yaml";
    socket_path_ = dir_ + "/topologyd.sock";
    state_dir_ = dir_ + "/state";
    if (notify_path_.size() > kMaxSocketPath || socket_path_.size() > kMaxSocketPath) {
      throw std::runtime_error(
          fmt::format("{} is too long for a socket path; use --work-dir", dir_));
    }
  }
  ~SpawnedDaemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (notify_fd_ >= 0) ::close(notify_fd_);
  }
  SpawnedDaemon(const SpawnedDaemon&) = delete;
  SpawnedDaemon& operator=(const SpawnedDaemon&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  const std::string& state_dir() const { return state_dir_; }
  const std::string& log_path() const { return log_path_; }

  // `extra`: YAML lines appended to the configuration (the exports of --compare-exports).
  void WriteConfig(const std::string& topology_xml, const std::string& reserved_cpus,
                   const std::string& extra = "") {
    // An empty cgroup v2 root with the cpuset controller: the daemon checks the hierarchy at
    // start-up; with apply: false it writes nothing there.
    std::string cgroup = dir_ + "/cgroup";
    std::filesystem::create_directories(cgroup);
    WriteTextFile(cgroup + "/cgroup.controllers", "cpuset cpu memory\n");
    WriteTextFile(cgroup + "/cgroup.subtree_control", "cpuset\n");
    WriteTextFile(cgroup + "/cgroup.procs", "");
    WriteTextFile(config_path_,
                  fmt::format("listen: unix://{dir}/topologyd.sock\n"
                              "allowedPeers: {{uids: [0], sameUser: true}}\n"
                              "stateDir: {state}\n"
                              "topology: {{source: xml, path: \"{xml}\"}}\n"
                              "cpuManagerPolicy: static\n"
                              "reservedSystemCPUs: \"{reserved}\"\n"
                              "topologyManagerPolicy: best-effort\n"
                              "cgroup: {{root: {dir}/cgroup, driver: cgroupfs, version: v2, "
                              "apply: false}}\n"
                              "log: {{level: warn}}\n{extra}",
                              fmt::arg("dir", dir_), fmt::arg("state", state_dir_),
                              fmt::arg("xml", topology_xml), fmt::arg("reserved", reserved_cpus),
                              fmt::arg("extra", extra)));
  }

  // Starts the daemon and waits for READY=1. Returns the time from fork to READY=1, or throws
  // (with the end of the daemon's log) when it exits or does not get ready in time.
  nanoseconds StartAndWaitReady(const std::string& log_name) {
    OpenNotifySocket();
    log_path_ = dir_ + "/" + log_name;
    // Everything the child needs is built before fork(): only async-signal-safe calls after.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view kv(*e);
      if (kv.starts_with("NOTIFY_SOCKET=") || kv.starts_with("WATCHDOG_")) continue;
      env_strings.emplace_back(kv);
    }
    env_strings.push_back("NOTIFY_SOCKET=" + notify_path_);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> arg_strings = {binary_, "--config", config_path_};
    std::vector<char*> argv;
    for (auto& s : arg_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0)
      throw std::runtime_error(fmt::format("open {}: {}", log_path_, strerror(errno)));

    Clock::time_point start = Clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(log_fd);
    if (pid_ < 0) throw std::runtime_error(fmt::format("fork: {}", strerror(errno)));

    Clock::time_point until = start + kReadyDeadline;
    char buf[4096];
    while (Clock::now() < until) {
      pollfd pfd{.fd = notify_fd_, .events = POLLIN, .revents = 0};
      int n = ::poll(&pfd, 1, 10);
      if (n > 0) {
        ssize_t len = ::recv(notify_fd_, buf, sizeof(buf), 0);
        if (len > 0) {
          Clock::time_point at = Clock::now();
          std::istringstream lines(std::string(buf, static_cast<size_t>(len)));
          std::string line;
          while (std::getline(lines, line)) {
            if (line == "READY=1") return duration_cast<nanoseconds>(at - start);
          }
        }
        continue;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error(
            fmt::format("the daemon exited ({}) before READY=1; its log {}:\n{}",
                        WIFEXITED(status) ? fmt::format("status {}", WEXITSTATUS(status))
                                          : fmt::format("signal {}", WTERMSIG(status)),
                        log_path_, LogTail()));
      }
    }
    throw std::runtime_error(fmt::format("no READY=1 from the daemon within {} s; its log {}:\n{}",
                                         kReadyDeadline.count(), log_path_, LogTail()));
  }

  // SIGTERM and wait; the time from SIGTERM to exit. Throws if it does not exit 0 in time.
  nanoseconds Stop() {
    if (pid_ <= 0) return nanoseconds(0);
    Clock::time_point start = Clock::now();
    ::kill(pid_, SIGTERM);
    Clock::time_point until = start + kStopDeadline;
    while (Clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          throw std::runtime_error(fmt::format(
              "the daemon did not exit cleanly on SIGTERM; its log {}:\n{}", log_path_, LogTail()));
        }
        return duration_cast<nanoseconds>(Clock::now() - start);
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    throw std::runtime_error("the daemon did not stop within 10 s of SIGTERM");
  }

  std::string LogTail() const {
    std::ifstream in(log_path_);
    std::ostringstream s;
    s << in.rdbuf();
    std::string all = s.str();
    return all.size() > 4000 ? all.substr(all.size() - 4000) : all;
  }

 private:
  void OpenNotifySocket() {
    if (notify_fd_ >= 0) {
      // Drop whatever the previous instance sent (STOPPING=1, ...).
      char buf[4096];
      while (::recv(notify_fd_, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
      }
      return;
    }
    notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (notify_fd_ < 0) throw std::runtime_error(fmt::format("socket: {}", strerror(errno)));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::copy(notify_path_.begin(), notify_path_.end(), addr.sun_path);
    if (::bind(notify_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      throw std::runtime_error(fmt::format("bind {}: {}", notify_path_, strerror(errno)));
    }
  }

  std::string binary_;
  std::string dir_;
  std::string notify_path_, config_path_, socket_path_, state_dir_, log_path_;
  int notify_fd_ = -1;
  pid_t pid_ = -1;
};

// ---------------------------------------------------------------------------------------------
// The client side.

std::unique_ptr<v1::Topologyd::Stub> Connect(const std::string& socket) {
  grpc::ChannelArguments args;
  // Each client gets its own connection, as separate callers would.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return v1::Topologyd::NewStub(
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args));
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
}

std::string RpcError(const std::string& what, const grpc::Status& status) {
  std::string text = fmt::format("{}: RPC failed with code {}: {}", what,
                                 static_cast<int>(status.error_code()), status.error_message());
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    text += " (this daemon does not serve the RPC yet)";
  }
  return text;
}

// The daemon's checkpoint counters, to tell how many changes shared a write.
v1::CheckpointStatus CheckpointCounters(v1::Topologyd::Stub& stub) {
  grpc::ClientContext context;
  SetDeadline(context);
  v1::StatusResponse response;
  grpc::Status st = stub.Status(&context, v1::StatusRequest(), &response);
  if (!st.ok()) throw std::runtime_error(RpcError("Status", st));
  return response.checkpoint();
}

v1::Pod MakePod(const std::string& uid, int cpus_per_pod) {
  v1::Pod pod;
  pod.set_uid(uid);
  pod.set_namespace_("load");
  pod.set_name("pod-" + uid);
  v1::Container* c = pod.add_containers();
  c->set_name("c0");
  if (cpus_per_pod > 0) {
    // Guaranteed with an integer CPU count: the static policy gives exclusive CPUs.
    std::string cpu = std::to_string(cpus_per_pod);
    (*c->mutable_requests())["cpu"] = cpu;
    (*c->mutable_limits())["cpu"] = cpu;
    (*c->mutable_requests())["memory"] = "256Mi";
    (*c->mutable_limits())["memory"] = "256Mi";
  } else {
    // Burstable: runs in the shared pool.
    (*c->mutable_requests())["cpu"] = "100m";
    (*c->mutable_requests())["memory"] = "64Mi";
  }
  return pod;
}

// One client iteration of each phase, blocking (threads driver) and asynchronous (event-loop
// driver); both return / finish with an error message, or "" on success.

std::string CallStatus(v1::Topologyd::Stub& stub, Recorder& rec) {
  grpc::ClientContext context;
  SetDeadline(context);
  v1::StatusResponse response;
  grpc::Status st =
      rec.Time("status", [&] { return stub.Status(&context, v1::StatusRequest(), &response); });
  return st.ok() ? "" : RpcError("Status", st);
}

void StartStatus(v1::Topologyd::Stub& stub, AsyncCalls& calls, Recorder& rec,
                 std::function<void(std::string)> finished) {
  calls.Call<v1::StatusResponse>(
      "status", rec, kRpcDeadline,
      [&](grpc::ClientContext* context, grpc::CompletionQueue* cq) {
        return stub.PrepareAsyncStatus(context, v1::StatusRequest(), cq);
      },
      [finished = std::move(finished)](const grpc::Status& st, v1::StatusResponse&) {
        finished(st.ok() ? "" : RpcError("Status", st));
      });
}

std::string RefusalError(const std::string& uid, const v1::AdmitResponse& admitted) {
  return fmt::format("Admit refused pod {}: {}: {}", uid, admitted.reason(), admitted.message());
}

std::string CallAdmitRelease(v1::Topologyd::Stub& stub, const std::string& uid, int cpus_per_pod,
                             Recorder& rec) {
  v1::AdmitRequest admit;
  *admit.mutable_pod() = MakePod(uid, cpus_per_pod);
  v1::AdmitResponse admitted;
  grpc::ClientContext admit_context;
  SetDeadline(admit_context);
  grpc::Status st = rec.Time("admit", [&] { return stub.Admit(&admit_context, admit, &admitted); });
  if (!st.ok()) return RpcError("Admit", st);
  if (!admitted.admitted()) return RefusalError(uid, admitted);
  v1::ReleaseRequest release;
  release.set_pod_uid(uid);
  v1::ReleaseResponse released;
  grpc::ClientContext release_context;
  SetDeadline(release_context);
  st = rec.Time("release", [&] { return stub.Release(&release_context, release, &released); });
  return st.ok() ? "" : RpcError(fmt::format("Release of pod {}", uid), st);
}

void StartAdmitRelease(v1::Topologyd::Stub& stub, const std::string& uid, int cpus_per_pod,
                       AsyncCalls& calls, Recorder& rec,
                       std::function<void(std::string)> finished) {
  v1::AdmitRequest admit;
  *admit.mutable_pod() = MakePod(uid, cpus_per_pod);
  calls.Call<v1::AdmitResponse>(
      "admit", rec, kRpcDeadline,
      [&](grpc::ClientContext* context, grpc::CompletionQueue* cq) {
        return stub.PrepareAsyncAdmit(context, admit, cq);
      },
      [&stub, &calls, &rec, uid, finished = std::move(finished)](
          const grpc::Status& st, v1::AdmitResponse& admitted) mutable {
        if (!st.ok()) return finished(RpcError("Admit", st));
        if (!admitted.admitted()) return finished(RefusalError(uid, admitted));
        v1::ReleaseRequest release;
        release.set_pod_uid(uid);
        calls.Call<v1::ReleaseResponse>(
            "release", rec, kRpcDeadline,
            [&](grpc::ClientContext* context, grpc::CompletionQueue* cq) {
              return stub.PrepareAsyncRelease(context, release, cq);
            },
            [uid, finished = std::move(finished)](const grpc::Status& released,
                                                  v1::ReleaseResponse&) {
              finished(released.ok() ? ""
                                     : RpcError(fmt::format("Release of pod {}", uid), released));
            });
      });
}

// ---------------------------------------------------------------------------------------------
// Checkpoint floor.

// A State like the daemon's during the admit phase: `pods` pods of one container holding
// `cpus_per_pod` exclusive CPUs each (or none).
state::State LoadState(int pods, int cpus_per_pod, int first_cpu) {
  state::State s;
  int cpu = first_cpu;
  for (int i = 0; i < pods; ++i) {
    state::PodRecord pod;
    pod.uid = fmt::format("00000000-load-{:04}-{:012}", i, 0);
    pod.namespace_name = "load";
    pod.name = "pod-" + pod.uid;
    pod.qos = cpus_per_pod > 0 ? "Guaranteed" : "Burstable";
    state::ContainerRecord c;
    c.name = "c0";
    if (cpus_per_pod > 0) {
      c.cpus = CpuSet::Range(cpu, cpu + cpus_per_pod - 1);
      c.exclusive = true;
      c.numa_affinity = {0};
      cpu += cpus_per_pod;
    } else {
      c.cpus = CpuSet::Range(first_cpu, first_cpu + 63);
    }
    pod.containers.push_back(std::move(c));
    s.pods.emplace(pod.uid, std::move(pod));
  }
  return s;
}

// `threads` stores (one directory each) saving in parallel.
PhaseResult RunCheckpointPhase(const std::string& parent, int threads, const Options& opts) {
  state::PosixFileSystem fs;
  std::vector<state::CheckpointStore> stores;
  std::vector<state::State> states;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<state::CheckpointStore> store =
        state::CheckpointStore::Open(&fs, fmt::format("{}/checkpoint-{}-{}", parent, threads, t));
    if (!store.ok()) {
      PhaseResult failed;
      failed.error = fmt::format("checkpoint store: {}", store.status().ToString());
      return failed;
    }
    stores.push_back(*std::move(store));
    states.push_back(LoadState(opts.clients, opts.cpus_per_pod, 1));
  }
  return RunThreadedPhase(
      threads, {opts.duration_s, opts.ops}, [&](int w, int64_t seq, Recorder& rec) -> std::string {
        state::State& s = states[static_cast<size_t>(w)];
        // Replace one pod by a fresh one, as an admit+release pair would.
        auto first = s.pods.begin();
        state::PodRecord pod = std::move(first->second);
        s.pods.erase(first);
        pod.uid = fmt::format("00000000-load-{:04}-{:012}", w, seq);
        s.pods.emplace(pod.uid, std::move(pod));
        ++s.generation;
        absl::Status st =
            rec.Time("checkpoint", [&] { return stores[static_cast<size_t>(w)].Save(s); });
        return st.ok() ? "" : fmt::format("checkpoint Save: {}", st.ToString());
      });
}

// ---------------------------------------------------------------------------------------------
// Start-up with a large checkpoint.

struct StartupCheckpoint {
  state::State state;
  int containers = 0;
  int exclusive = 0;
};

// `containers` containers in pods of four; the first container of a pod gets one exclusive
// CPU while at most half of the allocatable CPUs are taken, the others share the pool.
absl::StatusOr<StartupCheckpoint> MakeStartupCheckpoint(const v1::Topology& topology,
                                                        const CpuSet& reserved, int containers) {
  std::vector<std::pair<int, int>> cpus;  // (cpu id, numa id), allocatable only
  for (const v1::Cpu& c : topology.cpus()) {
    if (!reserved.Contains(c.id())) cpus.emplace_back(c.id(), c.numa_id());
  }
  std::sort(cpus.begin(), cpus.end());
  size_t exclusive_cap = cpus.size() / 2;
  CpuSet exclusive_cpus;
  std::vector<size_t> taken;
  StartupCheckpoint out;
  out.state.generation = 1;
  constexpr int kPerPod = 4;
  int pods = (containers + kPerPod - 1) / kPerPod;
  for (int p = 0; p < pods; ++p) {
    state::PodRecord pod;
    pod.uid = fmt::format("00000000-start-{:04}-000000000000", p);
    pod.namespace_name = "load";
    pod.name = fmt::format("startup-{}", p);
    for (int k = 0; k < kPerPod && out.containers < containers; ++k, ++out.containers) {
      state::ContainerRecord c;
      c.name = fmt::format("c{}", k);
      c.container_id = fmt::format("{:064x}", static_cast<uint64_t>(p * kPerPod + k + 1));
      if (k == 0 && static_cast<size_t>(out.exclusive) < exclusive_cap) {
        auto [id, numa] = cpus[static_cast<size_t>(out.exclusive)];
        c.cpus = CpuSet{id};
        c.exclusive = true;
        c.numa_affinity = {numa};
        exclusive_cpus.Add(id);
        ++out.exclusive;
      }
      pod.containers.push_back(std::move(c));
    }
    pod.qos = pod.containers.front().exclusive ? "Guaranteed" : "Burstable";
    out.state.pods.emplace(pod.uid, std::move(pod));
  }
  // Shared containers record the shared pool (informational).
  CpuSet all;
  for (auto [id, numa] : cpus) all.Add(id);
  CpuSet shared = all.Difference(exclusive_cpus);
  for (auto& [uid, pod] : out.state.pods) {
    for (auto& c : pod.containers) {
      if (!c.exclusive) c.cpus = shared;
    }
  }
  if (absl::Status s = state::Validate(out.state); !s.ok()) return s;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Output.

nlohmann::json SummaryJson(const Summary& s) {
  return {{"count", s.count},   {"seconds", s.seconds}, {"ops_per_s", s.ops_per_s()},
          {"p50_ms", s.p50_ms}, {"p99_ms", s.p99_ms},   {"p999_ms", s.p999_ms},
          {"max_ms", s.max_ms}, {"mean_ms", s.mean_ms}};
}

std::string Row(const std::string& name, const Summary& s) {
  return fmt::format("{:<16} {:>8} {:>10.0f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", name, s.count,
                     s.ops_per_s(), s.p50_ms, s.p99_ms, s.p999_ms, s.max_ms);
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double MedianMs(std::vector<nanoseconds> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[(v.size() - 1) / 2].count()) / 1e6;
}

double MaxMs(const std::vector<nanoseconds>& v) {
  if (v.empty()) return 0;
  return static_cast<double>(std::max_element(v.begin(), v.end())->count()) / 1e6;
}

std::string JoinMs(const std::vector<nanoseconds>& v) {
  std::vector<std::string> parts;
  for (auto d : v) parts.push_back(fmt::format("{:.1f}", static_cast<double>(d.count()) / 1e6));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// --compare-exports: does serving the exports cost the admission path anything?

// A loopback TCP port nothing listens on now.
int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error(fmt::format("no free loopback port: {}", std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

size_t DiscardBody(char*, size_t size, size_t n, void*) { return size * n; }

// Scrapes `url` every `interval` on a thread of its own until destroyed, as Prometheus would
// (more often), so the "on" rounds include the cost of being read. Counts the scrapes that
// failed.
class Scraper {
 public:
  Scraper(std::string url, milliseconds interval)
      : url_(std::move(url)), interval_(interval), thread_([this] { Loop(); }) {}
  ~Scraper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  int scrapes() const { return scrapes_; }
  int failures() const { return failures_; }

 private:
  void Loop() {
    std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
    curl_easy_setopt(curl.get(), CURLOPT_URL, url_.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, DiscardBody);
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 5L);
    std::unique_lock<std::mutex> lock(mu_);
    // The first scrape at once, so even a short phase is read at least once.
    do {
      lock.unlock();
      long code = 0;
      const bool ok = curl_easy_perform(curl.get()) == CURLE_OK &&
                      curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
                      code == 200;
      lock.lock();
      ++scrapes_;
      if (!ok) ++failures_;
    } while (!cv_.wait_for(lock, interval_, [this] { return stop_; }));
  }

  std::string url_;
  milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<int> scrapes_{0};
  std::atomic<int> failures_{0};
  std::thread thread_;
};

// One daemon, configured with `extra`, through one admit phase; the admit p50 in ms.
double AdmitP50(const Options& opts, const std::string& dir, const std::string& extra,
                const std::string& scrape_url, int round, int* scrape_failures) {
  SpawnedDaemon daemon(opts.daemon_binary, dir);
  daemon.WriteConfig(std::filesystem::absolute(opts.topology).string(), opts.reserved_cpus, extra);
  daemon.StartAndWaitReady(fmt::format("daemon-round-{}.log", round));
  std::vector<std::unique_ptr<v1::Topologyd::Stub>> stubs;
  for (int i = 0; i < opts.clients; ++i) {
    stubs.push_back(Connect(daemon.socket_path()));
    grpc::ClientContext context;
    SetDeadline(context);
    v1::StatusResponse response;
    grpc::Status st = stubs.back()->Status(&context, v1::StatusRequest(), &response);
    if (!st.ok()) throw std::runtime_error(RpcError("Status", st));
  }
  std::optional<Scraper> scraper;
  if (!scrape_url.empty()) scraper.emplace(scrape_url, milliseconds(opts.scrape_interval_ms));
  PhaseResult r =
      RunThreadedPhase(opts.clients, PhaseBounds{opts.duration_s, opts.ops},
                       [&](int c, int64_t seq, Recorder& rec) -> std::string {
                         return CallAdmitRelease(*stubs[static_cast<size_t>(c)],
                                                 fmt::format("cmp-{}-{:04}-{:012}", round, c, seq),
                                                 opts.cpus_per_pod, rec);
                       });
  if (scraper) {
    if (scraper->scrapes() == 0) throw std::runtime_error("no scrape ran during the phase");
    *scrape_failures += scraper->failures();
  }
  scraper.reset();
  stubs.clear();
  daemon.Stop();
  if (!r.error.empty()) throw std::runtime_error(r.error);
  return r.kinds.at("admit").p50_ms;
}

// Rounds of two daemons, one with the exports off and one with them on, started afresh in an
// order that alternates per round so drift on the machine weighs on both alike.
void CompareExports(const Options& opts, const std::string& dir, std::string& text,
                    nlohmann::json& doc) {
  const int port = FreeLoopbackPort();
  std::string on_config = fmt::format("metrics: {{listen: \"127.0.0.1:{}\"}}\n", port);
  if (!opts.exports_config.empty()) {
    std::ifstream in(opts.exports_config);
    std::ostringstream fragment;
    fragment << in.rdbuf();
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", opts.exports_config));
    on_config += fragment.str();
    if (!on_config.ends_with('\n')) on_config += '\n';
  }
  const std::string url = fmt::format("http://127.0.0.1:{}/metrics", port);
  std::vector<double> off, on;
  int scrape_failures = 0;
  for (int round = 0; round < opts.compare_rounds; ++round) {
    for (int half = 0; half < 2; ++half) {
      const bool exports = (round + half) % 2 == 1;
      const std::string sub = fmt::format("{}/r{}{}", dir, round, exports ? "on" : "off");
      std::filesystem::create_directories(sub);
      (exports ? on : off)
          .push_back(AdmitP50(opts, sub, exports ? on_config : "", exports ? url : "", round,
                              &scrape_failures));
    }
  }
  const double off_p50 = MedianOf(off);
  const double on_p50 = MedianOf(on);
  const double ratio = on_p50 / off_p50;
  // Each round's two daemons ran back to back: their ratio cancels drift that lasts longer
  // than a round (another process starting on the machine).
  std::vector<double> round_ratios;
  for (size_t i = 0; i < on.size(); ++i) round_ratios.push_back(on[i] / off[i]);
  auto list = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += fmt::format("{}{:.3f}", out.empty() ? "" : " ", x);
    return out;
  };
  text += fmt::format(
      "\nexports off vs on, {} rounds ({} clients, {} CPUs per pod; \"on\": /metrics scraped "
      "every {} ms{}):\n"
      "  admit p50 off: median {:.3f} ms  (rounds: {})\n"
      "  admit p50 on:  median {:.3f} ms  (rounds: {})\n"
      "  on / off = {:.3f}; per round: median {:.3f} (rounds: {})\n",
      opts.compare_rounds, opts.clients, opts.cpus_per_pod, opts.scrape_interval_ms,
      opts.exports_config.empty() ? "" : fmt::format(", plus {}", opts.exports_config), off_p50,
      list(off), on_p50, list(on), ratio, MedianOf(round_ratios), list(round_ratios));
  doc["exports_comparison"] = {{"rounds", opts.compare_rounds},
                               {"admit_p50_off_ms", off},
                               {"admit_p50_on_ms", on},
                               {"median_off_ms", off_p50},
                               {"median_on_ms", on_p50},
                               {"ratio_on_to_off", ratio},
                               {"round_ratios", round_ratios},
                               {"median_round_ratio", MedianOf(round_ratios)},
                               {"scrape_failures", scrape_failures}};
  if (scrape_failures > 0) {
    throw std::runtime_error(fmt::format("{} scrapes of {} failed", scrape_failures, url));
  }
}

int Run(const Options& opts) {
  nlohmann::json doc;
  std::string text;
  doc["machine"] = {{"model", MachineModel()},
                    {"online_cpus", std::thread::hardware_concurrency()}};
  doc["clients"] = opts.clients;
  doc["driver"] = opts.driver;
  doc["cpus_per_pod"] = opts.cpus_per_pod;
  if (opts.ops > 0) {
    doc["ops_per_phase"] = opts.ops;
  } else {
    doc["seconds_per_phase"] = opts.duration_s;
  }
  text += fmt::format("machine: {} ({} online CPUs)\n", doc["machine"]["model"].get<std::string>(),
                      std::thread::hardware_concurrency());
  text += fmt::format(
      "clients: {} ({}), CPUs per pod: {}, each phase: {}\n", opts.clients,
      opts.driver == "event-loop" ? "driven by one event-loop thread" : "a thread each",
      opts.cpus_per_pod,
      opts.ops > 0 ? fmt::format("{} ops", opts.ops) : fmt::format("{} s", opts.duration_s));

  std::string dir = MakeTempDir(opts.work_dir);
  std::unique_ptr<SpawnedDaemon> daemon;
  std::string socket = opts.socket;
  std::vector<nanoseconds> empty_start;
  int exit_code = kExitOk;
  auto fail = [&](const std::string& message) {
    std::cerr << "topologyd_load: " << message << "\n";
    exit_code = kExitFailed;
  };

  try {
    if (opts.spawn) {
      daemon = std::make_unique<SpawnedDaemon>(opts.daemon_binary, dir);
      daemon->WriteConfig(std::filesystem::absolute(opts.topology).string(), opts.reserved_cpus);
      empty_start.push_back(daemon->StartAndWaitReady("daemon.log"));
      socket = daemon->socket_path();
      text += fmt::format(
          "daemon: {} (spawned in {}), start-up to READY=1 with an empty state: "
          "{:.1f} ms\n",
          opts.daemon_binary, dir, MedianMs(empty_start));
      doc["startup_empty_ms"] = MedianMs(empty_start);
    } else {
      text += fmt::format("daemon: {}\n", socket);
    }
    doc["socket"] = socket;

    std::vector<std::unique_ptr<v1::Topologyd::Stub>> stubs;
    for (int i = 0; i < opts.clients; ++i) {
      stubs.push_back(Connect(socket));
      // Connect before measuring.
      grpc::ClientContext context;
      SetDeadline(context);
      v1::StatusResponse response;
      grpc::Status st = stubs.back()->Status(&context, v1::StatusRequest(), &response);
      if (!st.ok()) throw std::runtime_error(RpcError("Status", st));
    }

    std::map<std::string, Summary> rows;
    std::vector<std::string> order;
    // A failed phase ends the run after the table of what was measured so far.
    std::string phase_error;
    auto record = [&](const std::string& phase, const PhaseResult& r,
                      const std::map<std::string, std::string>& names) {
      for (const auto& [kind, summary] : r.kinds) {
        std::string name = names.contains(kind) ? names.at(kind) : kind;
        rows[name] = summary;
        order.push_back(name);
      }
      if (!r.error.empty() && phase_error.empty()) {
        phase_error = fmt::format("{} phase: {}", phase, r.error);
      }
    };

    const PhaseBounds bounds{opts.duration_s, opts.ops};
    const bool event_loop = opts.driver == "event-loop";
    if (opts.phases.contains("status")) {
      PhaseResult r =
          event_loop ? RunEventLoopPhase(opts.clients, bounds,
                                         [&](int c, int64_t, AsyncCalls& calls, Recorder& rec,
                                             std::function<void(std::string)> finished) {
                                           StartStatus(*stubs[static_cast<size_t>(c)], calls, rec,
                                                       std::move(finished));
                                         })
                     : RunThreadedPhase(opts.clients, bounds,
                                        [&](int c, int64_t, Recorder& rec) -> std::string {
                                          return CallStatus(*stubs[static_cast<size_t>(c)], rec);
                                        });
      record("status", r, {});
    }
    if (phase_error.empty() && opts.phases.contains("checkpoint")) {
      record("checkpoint", RunCheckpointPhase(dir, 1, opts), {{"checkpoint", "checkpoint x1"}});
      if (phase_error.empty() && opts.clients > 1) {
        record("checkpoint", RunCheckpointPhase(dir, opts.clients, opts),
               {{"checkpoint", fmt::format("checkpoint x{}", opts.clients)}});
      }
    }
    std::string run_id =
        fmt::format("{:08x}", static_cast<uint32_t>(Clock::now().time_since_epoch().count()));
    int64_t pairs = 0;
    double admit_seconds = 0;
    uint64_t admit_phase_writes = 0;
    if (phase_error.empty() && opts.phases.contains("admit")) {
      const uint64_t writes_before = CheckpointCounters(*stubs[0]).writes();
      auto uid_of = [&](int c, int64_t seq) {
        return fmt::format("{}-load-{:04}-{:012}", run_id, c, seq);
      };
      PhaseResult r =
          event_loop
              ? RunEventLoopPhase(opts.clients, bounds,
                                  [&](int c, int64_t seq, AsyncCalls& calls, Recorder& rec,
                                      std::function<void(std::string)> finished) {
                                    StartAdmitRelease(*stubs[static_cast<size_t>(c)],
                                                      uid_of(c, seq), opts.cpus_per_pod, calls, rec,
                                                      std::move(finished));
                                  })
              : RunThreadedPhase(opts.clients, bounds,
                                 [&](int c, int64_t seq, Recorder& rec) -> std::string {
                                   return CallAdmitRelease(*stubs[static_cast<size_t>(c)],
                                                           uid_of(c, seq), opts.cpus_per_pod, rec);
                                 });
      pairs = r.kinds.contains("release") ? r.kinds.at("release").count : 0;
      admit_seconds = r.seconds;
      admit_phase_writes = CheckpointCounters(*stubs[0]).writes() - writes_before;
      record("admit", r, {});
    }

    // The table.
    text += fmt::format("\n{:<16} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9}\n", "op", "count", "ops/s",
                        "p50 ms", "p99 ms", "p999 ms", "max ms");
    nlohmann::json ops_json = nlohmann::json::object();
    for (const auto& name : order) {
      text += Row(name, rows.at(name));
      ops_json[name] = SummaryJson(rows.at(name));
    }
    doc["ops"] = ops_json;
    if (pairs > 0) {
      double per_s = pairs / admit_seconds;
      // "admit+release per second" can be read as pairs or as operations: print both.
      text += fmt::format(
          "\nadmit+release pairs: {} in {:.2f} s = {:.0f} per second ({:.0f} admit or release "
          "operations per second)\n",
          pairs, admit_seconds, per_s, 2 * per_s);
      doc["admit_release_pairs_per_s"] = per_s;
      doc["admit_release_ops_per_s"] = 2 * per_s;
      if (admit_phase_writes > 0) {
        // Admits and releases both change the state; the daemon's group commit lets
        // several share one checkpoint write (with --socket, other callers' changes count too).
        const double per_write = 2.0 * static_cast<double>(pairs) / admit_phase_writes;
        text += fmt::format(
            "checkpoint writes in the admit phase: {} ({:.0f} per second), {:.2f} admits or "
            "releases per write\n",
            admit_phase_writes, admit_phase_writes / admit_seconds, per_write);
        doc["admit_phase_checkpoint_writes"] = admit_phase_writes;
        doc["changes_per_checkpoint_write"] = per_write;
      }
      const std::string one = "checkpoint x1";
      if (rows.contains("status") && rows.contains(one)) {
        double floor = rows.at("status").p50_ms + rows.at(one).p50_ms;
        double ratio = rows.at("admit").p50_ms / floor;
        text += fmt::format(
            "admit p50 / (status p50 + checkpoint x1 p50) = {:.3f} / ({:.3f} + {:.3f}) = {:.2f}\n",
            rows.at("admit").p50_ms, rows.at("status").p50_ms, rows.at(one).p50_ms, ratio);
        doc["ratio_admit_p50_to_floor"] = ratio;
        // Every acknowledgement waits for a round trip and for a checkpoint write that began
        // after its change: no client completes operations faster than one per floor, so
        // `clients` clients top out near clients / floor operations per second.
        double ceiling = opts.clients / floor * 1000.0 / 2.0;
        text += fmt::format(
            "estimated ceiling with {} client{}: {} / ({:.3f} ms per operation) / 2 = {:.0f} "
            "pairs per second\n",
            opts.clients, opts.clients == 1 ? "" : "s", opts.clients, floor, ceiling);
        doc["admit_release_pairs_per_s_ceiling_estimate"] = ceiling;
        std::string many = fmt::format("checkpoint x{}", opts.clients);
        if (opts.clients > 1 && rows.contains(many)) {
          double floor_n = rows.at("status").p50_ms + rows.at(many).p50_ms;
          text += fmt::format("admit p50 / (status p50 + {} p50) = {:.2f}\n", many,
                              rows.at("admit").p50_ms / floor_n);
          doc["ratio_admit_p50_to_parallel_floor"] = rows.at("admit").p50_ms / floor_n;
        }
      }
    }

    if (!phase_error.empty()) throw std::runtime_error(phase_error);

    if (opts.compare_rounds > 0) CompareExports(opts, dir, text, doc);

    // Start-up with a large checkpoint.
    if (opts.startup_containers > 0) {
      grpc::ClientContext context;
      SetDeadline(context);
      v1::GetTopologyResponse topology;
      grpc::Status st = stubs.front()->GetTopology(&context, v1::GetTopologyRequest(), &topology);
      if (!st.ok()) throw std::runtime_error(RpcError("GetTopology", st));
      stubs.clear();
      daemon->Stop();
      absl::StatusOr<CpuSet> reserved = CpuSet::Parse(opts.reserved_cpus);
      if (!reserved.ok()) throw std::runtime_error("--reserved-cpus: invalid CPU list");
      absl::StatusOr<StartupCheckpoint> checkpoint =
          MakeStartupCheckpoint(topology.topology(), *reserved, opts.startup_containers);
      if (!checkpoint.ok()) {
        throw std::runtime_error(
            fmt::format("startup checkpoint: {}", checkpoint.status().ToString()));
      }
      // Runs alternate between an empty state and the large checkpoint, so that whatever
      // else the machine is doing weighs on both alike; the difference is the checkpoint's cost.
      state::PosixFileSystem fs;
      absl::StatusOr<state::CheckpointStore> store =
          state::CheckpointStore::Open(&fs, daemon->state_dir());
      if (!store.ok()) throw std::runtime_error(store.status().ToString());
      std::vector<nanoseconds> empty_runs, loaded_runs, stop_runs;
      uint32_t admitted_pods = 0;
      for (int i = 0; i < 2 * opts.startup_runs; ++i) {
        bool loaded = i % 2 == 1;
        if (loaded) {
          if (absl::Status s = store->Save(checkpoint->state); !s.ok()) {
            throw std::runtime_error(
                fmt::format("writing the startup checkpoint: {}", s.ToString()));
          }
        } else {
          std::filesystem::remove(store->path());
        }
        nanoseconds ready = daemon->StartAndWaitReady(
            fmt::format("daemon-startup-{}-{}.log", i / 2, loaded ? "loaded" : "empty"));
        (loaded ? loaded_runs : empty_runs).push_back(ready);
        auto stub = Connect(daemon->socket_path());
        grpc::ClientContext status_context;
        SetDeadline(status_context);
        v1::StatusResponse status;
        st = stub->Status(&status_context, v1::StatusRequest(), &status);
        if (!st.ok()) throw std::runtime_error(RpcError("Status", st));
        if (loaded) admitted_pods = status.admitted_pods();
        // Stopped with the client still connected, as a node agent's caller would be.
        stop_runs.push_back(daemon->Stop());
      }
      size_t pods = checkpoint->state.pods.size();
      text += fmt::format(
          "\nstart-up to READY=1, {} runs each (median, max; all runs in ms):\n"
          "  empty state:                 {:>6.1f} {:>6.1f}  ({})\n"
          "  {} containers in checkpoint: {:>6.1f} {:>6.1f}  ({})\n"
          "  ({} pods of up to 4 containers, {} of them holding 1 exclusive CPU)\n",
          opts.startup_runs, MedianMs(empty_runs), MaxMs(empty_runs), JoinMs(empty_runs),
          checkpoint->containers, MedianMs(loaded_runs), MaxMs(loaded_runs), JoinMs(loaded_runs),
          pods, checkpoint->exclusive);
      text += fmt::format(
          "stop (SIGTERM to exit, one idle client connected): median "
          "{:.1f} ms, max {:.1f} ms\n",
          MedianMs(stop_runs), MaxMs(stop_runs));
      text += fmt::format("the daemon reported {} admitted pods after start-up{}\n", admitted_pods,
                          admitted_pods == pods ? "" : " (it did not load the checkpoint's pods)");
      auto ms_list = [](const std::vector<nanoseconds>& v) {
        nlohmann::json a = nlohmann::json::array();
        for (auto d : v) a.push_back(static_cast<double>(d.count()) / 1e6);
        return a;
      };
      doc["startup"] = {{"containers", checkpoint->containers},
                        {"pods", pods},
                        {"exclusive_cpus", checkpoint->exclusive},
                        {"loaded_runs_ms", ms_list(loaded_runs)},
                        {"loaded_median_ms", MedianMs(loaded_runs)},
                        {"loaded_max_ms", MaxMs(loaded_runs)},
                        {"empty_runs_ms", ms_list(empty_runs)},
                        {"empty_median_ms", MedianMs(empty_runs)},
                        {"stop_runs_ms", ms_list(stop_runs)},
                        {"admitted_pods_after_start", admitted_pods}};
      if (admitted_pods != pods) {
        fail(fmt::format("start-up: the daemon reported {} admitted pods, the checkpoint has {}",
                         admitted_pods, pods));
      }
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }

  if (daemon) {
    try {
      nanoseconds stop = daemon->Stop();
      if (stop.count() > 0) {
        text += fmt::format("\ndaemon stop (SIGTERM to exit) at the end: {:.1f} ms\n",
                            static_cast<double>(stop.count()) / 1e6);
        doc["final_stop_ms"] = static_cast<double>(stop.count()) / 1e6;
      }
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  daemon.reset();
  doc["ok"] = exit_code == kExitOk;
  if (opts.json) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << text;
  }
  if (!opts.keep) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    std::cerr << "topologyd_load: kept " << dir << "\n";
  }
  return exit_code;
}

}  // namespace
}  // namespace topologyd::bench

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  // As in the daemon, so the checkpoint floor's saves take the daemon's path (see
  // state::PosixFileSystem: retired files are reused only while SIGIO is ignored).
  ::signal(SIGIO, SIG_IGN);
  topologyd::bench::Options opts;
  CLI::App app{
      "Load generator for topologyd: N clients admitting and releasing pods, against the floors "
      "of a no-op RPC and a bare checkpoint write measured in the same run."};
  auto* socket = app.add_option("--socket", opts.socket, "Socket of a running daemon");
  auto* spawn = app.add_flag("--spawn", opts.spawn,
                             "Start a daemon in a temp dir (needs --daemon and --topology)");
  app.add_option("--daemon", opts.daemon_binary, "The topologyd binary to --spawn")
      ->check(CLI::ExistingFile);
  app.add_option("--topology", opts.topology, "hwloc XML topology for the spawned daemon")
      ->check(CLI::ExistingFile);
  app.add_option("--reserved-cpus", opts.reserved_cpus, "reservedSystemCPUs of the spawned daemon")
      ->capture_default_str();
  app.add_option("--work-dir", opts.work_dir,
                 "Where the temp dir (daemon state, checkpoint floor) is made; keep it on the "
                 "file system under test")
      ->capture_default_str();
  app.add_option("--clients", opts.clients, "Concurrent clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  auto* duration = app.add_option("--duration", opts.duration_s, "Seconds per phase")
                       ->check(CLI::PositiveNumber)
                       ->capture_default_str();
  app.add_option("--ops", opts.ops, "Operations per phase instead of a duration")
      ->check(CLI::PositiveNumber)
      ->excludes(duration);
  app.add_option("--cpus-per-pod", opts.cpus_per_pod,
                 "Exclusive CPUs per admitted pod (Guaranteed); 0 = Burstable pods in the shared "
                 "pool")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("--startup-containers", opts.startup_containers,
                 "After the load phases, restart the daemon on a checkpoint with this many "
                 "containers and time start-up to READY=1 (--spawn only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--startup-runs", opts.startup_runs, "Restarts timed with --startup-containers")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--phases", opts.phases, "Phases to run: status, checkpoint, admit")
      ->check(CLI::IsMember({"status", "checkpoint", "admit"}))
      ->delimiter(',');
  app.add_option("--driver", opts.driver,
                 "How the clients are run: event-loop (one thread, one connection and one call "
                 "outstanding per client) or threads (one thread per client, blocking calls)")
      ->check(CLI::IsMember({"event-loop", "threads"}))
      ->capture_default_str();
  app.add_option("--compare-exports", opts.compare_rounds,
                 "After the other phases, this many rounds of two freshly spawned daemons, one "
                 "with the exports off and one with them on (metrics on a loopback port, scraped "
                 "during the phase), and the ratio of their admit p50s (--spawn only)")
      ->check(CLI::Range(1, 100));
  app.add_option("--exports-config", opts.exports_config,
                 "A YAML fragment added to the \"on\" daemons' configuration (other exports)")
      ->check(CLI::ExistingFile);
  app.add_option("--scrape-interval-ms", opts.scrape_interval_ms,
                 "How often the \"on\" rounds scrape /metrics")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  app.add_flag("--json", opts.json, "Print one JSON object instead of the table");
  app.add_flag("--keep", opts.keep, "Keep the temp dir (daemon logs, state)");
  spawn->excludes(socket);
  try {
    app.parse(argc, argv);
    if (!opts.spawn && opts.socket.empty()) throw CLI::ValidationError("give --socket or --spawn");
    if (opts.spawn && (opts.daemon_binary.empty() || opts.topology.empty())) {
      throw CLI::ValidationError("--spawn needs --daemon and --topology");
    }
    if (opts.compare_rounds > 0 && !opts.spawn) {
      throw CLI::ValidationError("--compare-exports needs --spawn");
    }
    if (opts.startup_containers > 0 && !opts.spawn) {
      throw CLI::ValidationError("--startup-containers needs --spawn");
    }
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : topologyd::bench::kExitUsage;
  }
  return topologyd::bench::Run(opts);
}
