// What the latency tools against a private containerd share (shim_latency.cc,
// nri_latency.cc): a call that fails ends the run, a call's time in microseconds, percentiles
// and their report line, a benchmark pod, and a server process for the run's length.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include <grpcpp/grpcpp.h>

#include "lib/pod/pod.h"
#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/subprocess.h"

namespace topologyd::bench {

using Clock = std::chrono::steady_clock;
using Micros = std::chrono::duration<double, std::micro>;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void Check(const grpc::Status& status, const std::string& what) {
  if (!status.ok()) throw Failure(fmt::format("{}: {}", what, status.error_message()));
}

// Times one call in microseconds.
inline double Timed(const std::function<void()>& call) {
  const auto start = Clock::now();
  call();
  return Micros(Clock::now() - start).count();
}

inline double Percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  const size_t index = static_cast<size_t>(p * static_cast<double>(samples.size() - 1) + 0.5);
  return samples[index];
}

inline void Report(const std::string& name, const std::vector<double>& samples) {
  std::cout << fmt::format("  {:<34} n={:<5} p50 {:8.3f} ms  p90 {:8.3f} ms  p99 {:8.3f} ms\n",
                           name, samples.size(), Percentile(samples, 0.5) / 1000,
                           Percentile(samples, 0.9) / 1000, Percentile(samples, 0.99) / 1000);
}

// One container asking for a whole CPU: exclusive when it also has a memory limit (Guaranteed),
// on the shared pool when not (Burstable).
inline pod::Pod OneCpuPod(const std::string& uid, bool guaranteed) {
  pod::Pod pod;
  pod.uid = uid;
  pod.namespace_name = "bench";
  pod.name = "pod-" + uid;
  pod::Container c;
  c.name = "app";
  c.limits["cpu"] = *pod::Quantity::Parse("1");
  if (guaranteed) c.limits["memory"] = *pod::Quantity::Parse("64Mi");
  pod.containers.push_back(c);
  pod::ApplyRequestDefaults(pod);
  return pod;
}

// The run's directory removed, or kept (with --keep) and named for its logs.
inline void KeepOrRemove(const std::string& dir, bool keep) {
  if (keep) {
    std::cout << "logs kept in " << dir << "\n";
  } else {
    std::filesystem::remove_all(dir);
  }
}

// A server process for the run's length, started once its socket accepts.
class Server {
 public:
  Server(const std::vector<std::string>& argv, const std::string& log, const std::string& socket)
      : pid_(testing::containerd::SpawnServer(argv, log)) {
    const auto until = Clock::now() + std::chrono::seconds(30);
    while (!testing::containerd::SocketAccepts(socket)) {
      if (Clock::now() > until) {
        throw Failure(fmt::format("{} did not start; see {}", argv[0], log));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Server() {
    ::kill(pid_, SIGTERM);
    if (!testing::containerd::WaitForChild(pid_, std::chrono::seconds(10))) {
      ::kill(pid_, SIGKILL);
      testing::containerd::WaitForChild(pid_, std::chrono::seconds(10));
    }
  }

 private:
  pid_t pid_;
};

}  // namespace topologyd::bench
