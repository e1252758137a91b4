// topologyd_shim_latency: what the kubelet shim adds to kubelet's CRI calls, measured against
// one private containerd in one run, the two paths alternated call by call:
//   - pass-through: ListContainers and ContainerStatus through the shim vs directly;
//   - an exclusive container's CreateContainer through the shim (which admits it in topologyd
//     and injects its cpuset) vs a direct CreateContainer carrying the same cpuset, with
//     topologyd's Admit (then Release) of the same pod timed beside them, alone and right
//     after the pod's RunPodSandbox (where the shim makes its own Admit).
// Prints p50/p90/p99 per path and the overheads against the targets of docs/performance.md,
// with the floor a relay cannot go below measured in the same run: one more unary gRPC round
// trip on a Unix socket, to an in-process server that answers at once.
//
// It starts containerd (tests/support/containerd), topologyd on the live machine (CPU 0
// reserved, cgroup v1 cpuset) and the shim, each in a temporary directory. Needs root and
// containerd; without them it prints why and exits 0. Any failed call exits 1.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "fmt/format.h"
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "bench/latency_support.h"
#include "lib/pod/pod.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/cri_channel.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/containerd/subprocess.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace {

using topologyd::bench::Check;
using topologyd::bench::Failure;
using topologyd::bench::OneCpuPod;
using topologyd::bench::Percentile;
using topologyd::bench::Report;
using topologyd::bench::Server;
using topologyd::bench::Timed;
using topologyd::testing::containerd::ContainerdInstance;
using topologyd::testing::containerd::ContainerdSkipReason;
using topologyd::testing::containerd::CriChannel;
using topologyd::testing::containerd::KubeletEmulator;

// A gRPC server in this process that answers every call with its own request at once: the
// cheapest extra hop a relay could be.
class EchoServer final : public grpc::CallbackGenericService {
 public:
  explicit EchoServer(const std::string& socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterCallbackGenericService(this);
    server_ = builder.BuildAndStart();
    if (!server_) throw Failure("cannot start the echo server on " + socket);
  }
  ~EchoServer() override { server_->Shutdown(); }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    class Echo final : public grpc::ServerGenericBidiReactor {
     public:
      Echo() { StartRead(&message_); }
      void OnReadDone(bool ok) override {
        if (ok) {
          StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
        } else {
          Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
        }
      }
      void OnDone() override { delete this; }

     private:
      grpc::ByteBuffer message_;
    };
    return new Echo();
  }

 private:
  std::unique_ptr<grpc::Server> server_;
};

// One unary call to the echo server, timed.
double EchoRoundTrip(grpc::GenericStub& stub) {
  grpc::Slice slice("ping");
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  absl::Mutex mu;
  bool done = false;
  grpc::Status status;
  const double micros = Timed([&] {
    stub.UnaryCall(&context, "/bench.Echo/Echo", grpc::StubOptions(), &request, &response,
                   [&](grpc::Status s) {
                     absl::MutexLock lock(&mu);
                     status = std::move(s);
                     done = true;
                   });
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&done));
  });
  Check(status, "echo");
  return micros;
}

struct Options {
  std::string topologyd;
  std::string shim;
  int calls = 2000;
  int creates = 30;
  // Where the shim gets the pod's spec: "estimate" (from the CRI, one container at a time:
  // admitted at CreateContainer) or "annotation" (the whole pod: admitted at RunPodSandbox).
  std::string source = "estimate";
  bool keep = false;
};

int Run(const Options& o) {
  ContainerdInstance containerd;
  absl::StatusOr<std::string> containerd_socket = containerd.Start();
  if (!containerd_socket.ok()) throw Failure(std::string(containerd_socket.status().message()));
  char dir_template[] = "/tmp/tpd-bench-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string topologyd_socket = dir + "/topologyd.sock";
  const std::string shim_socket = dir + "/shim.sock";
  std::ofstream(dir + "/topologyd.yaml")
      << "listen: unix://" << topologyd_socket << "\nallowedPeers: {uids: [0]}\nstateDir: " << dir
      << "/state\ntopology: {source: live}\ncpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
         "topologyManagerPolicy: best-effort\nmemoryManagerPolicy: None\n"
         "cgroup: {root: /sys/fs/cgroup/cpuset, driver: cgroupfs, version: v1, apply: true}\n"
         "log: {level: warn}\n";
  std::ofstream(dir + "/shim.yaml")
      << "podSpec: {sources: [" << o.source << "]}\nlog: {level: warn}\n";
  {
    Server topologyd({o.topologyd, "--config", dir + "/topologyd.yaml"}, dir + "/topologyd.log",
                     topologyd_socket);
    Server shim({o.shim, "--config", dir + "/shim.yaml", "--listen", "unix://" + shim_socket,
                 "--runtime-endpoint", "unix://" + *containerd_socket, "--topologyd-socket",
                 topologyd_socket},
                dir + "/shim.log", shim_socket);
    KubeletEmulator direct({.endpoint = *containerd_socket, .image = containerd.image_id()});
    KubeletEmulator shimmed({.endpoint = "unix://" + shim_socket,
                             .fallback_endpoint = *containerd_socket,
                             .image = containerd.image_id()});
    auto topologyd_stub = topologyd::v1::Topologyd::NewStub(CriChannel(topologyd_socket));
    EchoServer echo(dir + "/echo.sock");
    grpc::GenericStub echo_stub(CriChannel(dir + "/echo.sock"));

    // Pass-through: a running shared-pool container, asked about through both paths.
    Check(shimmed.RunPod(OneCpuPod("pass", false)), "RunPodSandbox");
    std::string id;
    Check(shimmed.RunContainer("pass", "app", 0, &id), "RunContainer");
    std::vector<double> list_direct, list_shim, status_direct, status_shim, floor;
    auto list = [&](KubeletEmulator& k, std::vector<double>& out) {
      std::vector<runtime::v1::Container> containers;
      out.push_back(Timed([&] { Check(k.ListContainers({}, &containers), "ListContainers"); }));
    };
    auto container_status = [&](KubeletEmulator& k, std::vector<double>& out) {
      runtime::v1::ContainerStatusResponse response;
      out.push_back(
          Timed([&] { Check(k.ContainerStatus(id, &response, false), "ContainerStatus"); }));
    };
    for (int i = 0; i < o.calls; ++i) {
      // Alternated, each path first in turn, so drift on a shared machine hits both alike.
      if (i % 2 == 0) {
        list(direct, list_direct), list(shimmed, list_shim);
        container_status(direct, status_direct), container_status(shimmed, status_shim);
      } else {
        list(shimmed, list_shim), list(direct, list_direct);
        container_status(shimmed, status_shim), container_status(direct, status_direct);
      }
      floor.push_back(EchoRoundTrip(echo_stub));
    }
    Check(shimmed.StopPod("pass"), "StopPodSandbox");
    Check(shimmed.RemovePod("pass"), "RemovePodSandbox");

    // Exclusive creation: through the shim (admit + inject), directly with the same cpuset, and
    // topologyd's admission alone; CPU 1 is the only exclusive CPU, so each pod goes before the
    // next.
    std::vector<double> create_direct, create_shim, admit, admit_after_sandbox;
    for (int i = 0; i < o.creates; ++i) {
      auto through_shim = [&] {
        const std::string uid = fmt::format("s{}", i);
        topologyd::pod::Pod pod = OneCpuPod(uid, true);
        if (o.source == "annotation") {
          pod.annotations["topologyd.io/resources"] =
              R"({"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}]})";
        }
        Check(shimmed.RunPod(pod), "RunPodSandbox");
        std::string created;
        create_shim.push_back(Timed(
            [&] { Check(shimmed.CreateContainer(uid, "app", 0, &created), "CreateContainer"); }));
        Check(shimmed.StopPod(uid), "StopPodSandbox");
        Check(shimmed.RemovePod(uid), "RemovePodSandbox");
      };
      auto straight = [&] {
        const std::string uid = fmt::format("d{}", i);
        Check(direct.RunPod(OneCpuPod(uid, true)), "RunPodSandbox");
        std::string created;
        create_direct.push_back(Timed([&] {
          Check(direct.CreateContainer(uid, "app", 0, &created, {.cpuset_cpus = "1"}),
                "CreateContainer");
        }));
        Check(direct.StopPod(uid), "StopPodSandbox");
        Check(direct.RemovePod(uid), "RemovePodSandbox");
      };
      // `after_sandbox`: right after the pod's RunPodSandbox, where the shim makes its own
      // Admit, while the runtime is still busy with the sandbox it has just started.
      auto admission = [&](bool after_sandbox) {
        topologyd::v1::AdmitRequest request;
        const topologyd::pod::Pod pod =
            OneCpuPod(fmt::format("{}{}", after_sandbox ? "b" : "a", i), true);
        if (after_sandbox) Check(direct.RunPod(pod), "RunPodSandbox");
        topologyd::v1::Pod* p = request.mutable_pod();
        p->set_uid(pod.uid);
        p->set_namespace_(pod.namespace_name);
        p->set_name(pod.name);
        topologyd::v1::Container* c = p->add_containers();
        c->set_name("app");
        (*c->mutable_limits())["cpu"] = "1";
        (*c->mutable_limits())["memory"] = "64Mi";
        topologyd::v1::AdmitResponse reply;
        (after_sandbox ? admit_after_sandbox : admit).push_back(Timed([&] {
          grpc::ClientContext context;
          Check(topologyd_stub->Admit(&context, request, &reply), "Admit");
        }));
        if (!reply.admitted()) throw Failure("Admit refused: " + reply.message());
        grpc::ClientContext context;
        topologyd::v1::ReleaseRequest release;
        release.set_pod_uid(pod.uid);
        topologyd::v1::ReleaseResponse released;
        Check(topologyd_stub->Release(&context, release, &released), "Release");
        if (after_sandbox) {
          Check(direct.StopPod(pod.uid), "StopPodSandbox");
          Check(direct.RemovePod(pod.uid), "RemovePodSandbox");
        }
      };
      if (i % 2 == 0) {
        through_shim(), straight(), admission(false), admission(true);
      } else {
        admission(true), admission(false), straight(), through_shim();
      }
    }

    std::cout << fmt::format(
        "shim latency ({} pass-through rounds, {} exclusive creations, pod specs from {})\n",
        o.calls, o.creates, o.source);
    Report("ListContainers direct", list_direct);
    Report("ListContainers through the shim", list_shim);
    Report("ContainerStatus direct", status_direct);
    Report("ContainerStatus through the shim", status_shim);
    Report("CreateContainer direct (cpuset 1)", create_direct);
    Report("CreateContainer through the shim", create_shim);
    Report("topologyd Admit", admit);
    Report("topologyd Admit after RunPodSandbox", admit_after_sandbox);
    Report("floor: a no-op gRPC round trip", floor);
    const double list_over = (Percentile(list_shim, 0.5) - Percentile(list_direct, 0.5)) / 1000;
    const double status_over =
        (Percentile(status_shim, 0.5) - Percentile(status_direct, 0.5)) / 1000;
    const double create_over =
        (Percentile(create_shim, 0.5) - Percentile(create_direct, 0.5) - Percentile(admit, 0.5)) /
        1000;
    // The same difference taken round by round (the three calls of a round run back to back),
    // so that drift over the run, which moves all three alike, cancels out.
    std::vector<double> create_over_rounds;
    for (size_t i = 0; i < create_shim.size(); ++i) {
      create_over_rounds.push_back(create_shim[i] - create_direct[i] - admit[i]);
    }
    const double create_over_after_sandbox =
        (Percentile(create_shim, 0.5) - Percentile(create_direct, 0.5) -
         Percentile(admit_after_sandbox, 0.5)) /
        1000;
    std::cout << fmt::format(
        "pass-through p50 overhead: ListContainers {:+.3f} ms, ContainerStatus {:+.3f} ms "
        "(target <= 0.2 ms; the floor of one more hop: {:.3f} ms)\n"
        "CreateContainer through the shim p50 - (direct p50 + Admit p50): {:+.3f} ms "
        "(target <= 0.5 ms); median of the rounds' own differences: {:+.3f} ms; with the "
        "Admit made after a RunPodSandbox: {:+.3f} ms\n",
        list_over, status_over, Percentile(floor, 0.5) / 1000, create_over,
        Percentile(create_over_rounds, 0.5) / 1000, create_over_after_sandbox);
  }
  topologyd::bench::KeepOrRemove(dir, o.keep);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"topologyd_shim_latency: the kubelet shim's latency against a private containerd"};
  Options o;
  app.add_option("--topologyd", o.topologyd, "the topologyd binary")->required();
  app.add_option("--shim", o.shim, "the topologyd-shim binary")->required();
  app.add_option("--calls", o.calls, "pass-through rounds")->check(CLI::PositiveNumber);
  app.add_option("--creates", o.creates, "exclusive creations per path")
      ->check(CLI::PositiveNumber);
  app.add_option("--source", o.source, "the shim's pod spec source")
      ->check(CLI::IsMember({"estimate", "annotation"}));
  app.add_flag("--keep", o.keep, "keep the daemons' logs (printed path)");
  CLI11_PARSE(app, argc, argv);
  if (std::string reason = ContainerdSkipReason(); !reason.empty()) {
    std::cout << "topologyd_shim_latency: skipped: " << reason << "\n";
    return 0;
  }
  try {
    return Run(o);
  } catch (const Failure& e) {
    std::cerr << "topologyd_shim_latency: " << e.what() << "\n";
    return 1;
  }
}
