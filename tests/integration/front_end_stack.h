// The end-to-end tests' node with a front end: a private containerd, a real topologyd on this
// host's cgroup v1 cpuset hierarchy, and either front end between kubelet (the emulator) and
// topologyd:
//   kRelay  topologyd-shim in front of Debian's containerd 1.6: the emulator talks to the shim
//   kNri    topologyd-nri on containerd 2.x (tools/build-containerd.sh) with NRI: the emulator
//           talks to containerd, which asks the plugin
// A fixture derives from ::testing::Test (or TestWithParam) and this, sets the config members in
// its constructor, and calls StartNode from SetUp and StopNode from TearDown. Skips as the
// containerd harness does, and without containerd 2.x or the plugin unless
// TOPOLOGYD_REQUIRE_COMPONENTS=1.
#pragma once

#include <signal.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/placement_checks.h"
#include "tests/support/containerd/containerd_instance.h"
#include "tests/support/containerd/kubelet_emulator.h"
#include "tests/support/node/node_stack.h"
#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

namespace topologyd::testing::containerd {

enum class FrontEnd { kRelay, kNri };

inline std::string FrontEndName(const ::testing::TestParamInfo<FrontEnd>& info) {
  return info.param == FrontEnd::kRelay ? "Relay" : "Nri";
}

// For gtest's messages and test listing, which would show the enum's bytes.
inline void PrintTo(FrontEnd front_end, std::ostream* out) {
  *out << (front_end == FrontEnd::kRelay ? "Relay" : "Nri");
}

// The containerd a front end runs beside: Debian's for the relay, 2.x with NRI for the plugin.
inline ContainerdOptions RuntimeFor(FrontEnd front_end) {
  if (front_end == FrontEnd::kRelay) return {};
  return {.bin_dir = Containerd2BinDir(), .nri = true};
}

// Why `front_end` cannot run here (its containerd or the plugin not built, or the containerd
// harness's reasons), or "".
inline std::string FrontEndSkipReason(FrontEnd front_end) {
  if (front_end == FrontEnd::kNri) {
    if (Containerd2BinDir().empty()) {
      return "containerd 2.x is not built: run tools/build-containerd.sh and configure with "
             "-DTOPOLOGYD_CONTAINERD2_BIN_DIR=DIR";
    }
    if (BuiltNriPlugin().empty()) {
      return "the NRI plugin is not built: configure with -DTOPOLOGYD_BUILD_NRI=ON";
    }
  }
  return ContainerdSkipReason(RuntimeFor(front_end));
}

class FrontEndStack {
 protected:
  void StartNode(FrontEnd front_end) {
    front_end_ = front_end;
    if (std::string reason = FrontEndSkipReason(front_end); !reason.empty()) {
      SKIP_OR_FAIL() << reason;
    }
    const ContainerdOptions options = RuntimeFor(front_end);
    containerd_ = std::make_unique<ContainerdInstance>(options);
    auto socket = containerd_->Start();
    ASSERT_TRUE(socket.ok()) << socket.status();
    containerd_socket_ = *socket;
    NodeStackOptions stack;
    stack.topologyd_policy =
        "cpuManagerPolicy: static\n"
        "reservedSystemCPUs: \"0\"\n"
        "topologyManagerPolicy: best-effort\n"
        "topologyManagerScope: " +
        scope_ + "\nmemoryManagerPolicy: None\n" + feature_gates_;
    const std::string common = "failurePolicy: " + failure_policy_ +
                               "\npodSpec: {sources: " + sources_ + "}\ntopologydTimeout: 3s\n";
    stack.shim_config = common + "resync: {period: 1s}\n";
    stack.nri_config = common;
    stack_ = std::make_unique<NodeStack>(dir_.path(), containerd_socket_, stack);
    ASSERT_NO_FATAL_FAILURE(StartTopologyd());
    ASSERT_NO_FATAL_FAILURE(StartFrontEnd());
    const std::string endpoint =
        front_end == FrontEnd::kRelay ? "unix://" + stack_->shim_socket() : containerd_socket_;
    kubelet_ =
        std::make_unique<KubeletEmulator>(EmulatorOptions{.endpoint = endpoint,
                                                          .fallback_endpoint = containerd_socket_,
                                                          .image = containerd_->image_id()});
    checks_ = std::make_unique<PlacementChecks>(kubelet_.get(), stack_.get(),
                                                front_end == FrontEnd::kRelay
                                                    ? PlacementChecks::Stored::kCriResources
                                                    : PlacementChecks::Stored::kOciSpec);
  }

  // `failed`: the test's HasFailure(), to print every log.
  void StopNode(bool failed) {
    if (kubelet_ != nullptr) {
      EXPECT_TRUE(kubelet_->Cleanup().ok());
    }
    if (failed && stack_ != nullptr) {
      std::cout << stack_->Logs();
      const std::string log = containerd_->log();
      std::cout << "--- containerd log (tail)\n"
                << log.substr(log.size() > 20000 ? log.size() - 20000 : 0);
    }
  }

  void StartTopologyd() {
    absl::Status started = stack_->StartTopologyd();
    ASSERT_TRUE(started.ok()) << started;
  }
  void StopTopologyd() { stack_->StopTopologyd(SIGTERM); }
  // The shim, or the plugin.
  void StartFrontEnd() {
    absl::Status started = front_end_ == FrontEnd::kRelay
                               ? stack_->StartShim()
                               : stack_->StartNri(containerd_->nri_socket());
    ASSERT_TRUE(started.ok()) << started;
  }
  void StopFrontEnd(int sig) {
    if (front_end_ == FrontEnd::kRelay) {
      stack_->StopShim(sig);
    } else {
      stack_->StopNri(sig);
    }
  }

  grpc::Status Allocations(v1::ListAllocationsResponse* response) {
    return stack_->Allocations(response);
  }
  std::optional<v1::ContainerAllocation> Allocation(const std::string& uid,
                                                    const std::string& name) {
    return stack_->Allocation(uid, name);
  }
  std::string SharedPool() { return stack_->SharedPool(); }
  std::string Placement(const std::string& id) { return checks_->Placement(id); }
  static std::string Expected(const std::string& cpus) { return PlacementChecks::Expected(cpus); }
  std::string PodQuota(const std::string& uid) { return checks_->PodQuota(uid); }
  std::string Quotas(const std::string& id) { return checks_->Quotas(id); }
  // What the runtime keeps of the container's cpuset.
  std::string StoredCpus(const std::string& id) { return checks_->StoredCpu(id, "cpus"); }
  void ExpectOnAllocation(const std::string& uid, const std::string& name, const std::string& id,
                          const std::string& cpus) {
    checks_->ExpectOnAllocation(uid, name, id, cpus);
  }
  // Configuration, set by a fixture's constructor.
  std::string sources_ = "[estimate]";
  std::string failure_policy_ = "Fail";
  std::string scope_ = "container";
  std::string feature_gates_;  // topologyd's featureGates line, if any

  FrontEnd front_end_ = FrontEnd::kRelay;
  std::unique_ptr<ContainerdInstance> containerd_;  // outlives everything that uses it
  std::string containerd_socket_;
  TempDir dir_;
  std::unique_ptr<NodeStack> stack_;
  std::unique_ptr<KubeletEmulator> kubelet_;
  std::unique_ptr<PlacementChecks> checks_;
};

}  // namespace topologyd::testing::containerd
