// The PodResources socket of a real daemon, through a client generated from our
// proto/podresources/v1/api.proto: List, Get and GetAllocatableResources say what `topoctl
// allocations -o json` and the configuration say, after admissions, releases and a restart;
// callers outside its allowlist are refused; without `podResources` there is no socket.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

#include "podresources/v1/api.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace api = ::topologyd::v1;
namespace pr = ::v1;
using std::chrono::seconds;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The CPUs of a cpuset string such as "1-3,8".
std::vector<int64_t> CpuList(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(at, comma - at);
    const size_t dash = part.find('-');
    const int64_t first = std::stoll(part.substr(0, dash));
    const int64_t last = dash == std::string::npos ? first : std::stoll(part.substr(dash + 1));
    for (int64_t cpu = first; cpu <= last; ++cpu) out.push_back(cpu);
    at = comma + 1;
  }
  return out;
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + seconds(30));
  return context;
}

// Calls `call` (which makes one RPC with the context it is given) until it is not refused by
// the kubelet's rate limit (a burst of 10, then 100 a second), which these tests' bursts of
// calls reach.
template <typename Call>
grpc::Status Patiently(const Call& call) {
  for (int i = 0;; ++i) {
    grpc::Status s = call(Context().get());
    if (s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED || i == 100) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Waits for a socket file to appear.
bool WaitForSocket(const std::string& path) {
  for (int i = 0; i < 400; ++i) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

api::Pod MakePod(const std::string& uid, std::map<std::string, std::string> resources,
                 bool guaranteed = true) {
  api::Pod pod;
  pod.set_uid(uid);
  pod.set_namespace_("team");
  pod.set_name("pod-" + uid);
  api::Container* c = pod.add_containers();
  c->set_name("app");
  for (const auto& [name, value] : resources) (*c->mutable_requests())[name] = value;
  if (guaranteed) *c->mutable_limits() = c->requests();
  return pod;
}

class PodResourcesSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = MinimalConfig(dir_.path(), Extra());
    WriteFile(dir_.File("config.yaml"), config_);
    StartDaemon();
  }

  virtual std::string Extra() const {
    return "memoryManagerPolicy: Static\n"
           "reservedMemory: [{numaNode: 0, limits: {memory: 64Mi}}]\n"
           "devices:\n"
           "  - resourceName: example.com/dev\n"
           "    devices: [{id: dev-a, numaNode: 0}, {id: dev-b, numaNodes: [0, 1]}, {id: dev-c}]\n"
           "podResources: {listen: unix://" +
           PodResourcesSocket() + "}\n";
  }

  std::string PodResourcesSocket() const { return dir_.File("pod-resources/kubelet.sock"); }

  void StartDaemon() {
    daemon_.emplace();
    daemon_->Start(dir_.File("config.yaml"), dir_.File("log"));
    ASSERT_TRUE(daemon_->WaitUntilServing(dir_.File("topologyd.sock"), seconds(30)))
        << ReadFile(dir_.File("log"));
    api_ = api::Topologyd::NewStub(grpc::CreateChannel("unix:" + dir_.File("topologyd.sock"),
                                                       grpc::InsecureChannelCredentials()));
    if (!WantsPodResources()) return;
    ASSERT_TRUE(WaitForSocket(PodResourcesSocket())) << ReadFile(dir_.File("log"));
    lister_ = pr::PodResourcesLister::NewStub(
        grpc::CreateChannel("unix:" + PodResourcesSocket(), grpc::InsecureChannelCredentials()));
  }

  void StopDaemon() {
    daemon_->Signal(SIGTERM);
    ASSERT_EQ(daemon_->WaitForExit(seconds(30)), 0) << ReadFile(dir_.File("log"));
    daemon_.reset();
  }

  virtual bool WantsPodResources() const { return true; }

  void Admit(const api::Pod& pod) {
    api::AdmitRequest request;
    *request.mutable_pod() = pod;
    api::AdmitResponse response;
    grpc::Status s = api_->Admit(Context().get(), request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(response.admitted()) << response.reason() << ": " << response.message();
  }

  void Release(const std::string& uid) {
    api::ReleaseRequest request;
    request.set_pod_uid(uid);
    api::ReleaseResponse response;
    grpc::Status s = api_->Release(Context().get(), request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  pr::ListPodResourcesResponse List() {
    pr::ListPodResourcesResponse response;
    grpc::Status s = Patiently([&](grpc::ClientContext* c) {
      response.Clear();
      return lister_->List(c, {}, &response);
    });
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  nlohmann::json Allocations() {
    CommandResult r = RunCommand(
        {TopoctlBinary(), "--socket", dir_.File("topologyd.sock"), "allocations", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  // List and Get say what `topoctl allocations -o json` says: the same pods and containers,
  // exclusive CPUs for exclusive containers only, the same devices and memory NUMA nodes.
  void ExpectListMatchesAllocations() {
    const nlohmann::json allocations = Allocations();
    const pr::ListPodResourcesResponse list = List();
    ASSERT_EQ(static_cast<size_t>(list.pod_resources_size()), allocations["pods"].size());
    for (const nlohmann::json& pod : allocations["pods"]) {
      SCOPED_TRACE(pod.dump());
      const auto listed = std::find_if(
          list.pod_resources().begin(), list.pod_resources().end(), [&](const auto& p) {
            return p.namespace_() == pod["namespace"] && p.name() == pod["name"];
          });
      ASSERT_NE(listed, list.pod_resources().end());
      ASSERT_EQ(static_cast<size_t>(listed->containers_size()), pod["containers"].size());
      for (size_t i = 0; i < pod["containers"].size(); ++i) {
        const nlohmann::json& want = pod["containers"][i];
        const pr::ContainerResources& got = listed->containers(static_cast<int>(i));
        EXPECT_EQ(got.name(), want["name"]);
        if (want["exclusive"].get<bool>()) {
          EXPECT_THAT(got.cpu_ids(), ElementsAreArray(CpuList(want["cpus"])));
        } else {
          EXPECT_THAT(got.cpu_ids(), IsEmpty());
        }
        std::set<std::string> want_devices;
        if (want.contains("devices")) {
          for (const auto& [resource, ids] : want["devices"].items()) {
            for (const auto& id : ids) want_devices.insert(resource + "/" + id.get<std::string>());
          }
        }
        std::set<std::string> got_devices;
        for (const pr::ContainerDevices& d : got.devices()) {
          for (const std::string& id : d.device_ids()) {
            got_devices.insert(d.resource_name() + "/" + id);
          }
        }
        EXPECT_EQ(got_devices, want_devices);
        std::set<int64_t> want_mems;
        if (want.contains("memory_numa")) {
          for (const auto& n : want["memory_numa"]) want_mems.insert(n.get<int64_t>());
        }
        std::set<int64_t> got_mems;
        for (const pr::ContainerMemory& m : got.memory()) {
          for (const pr::NUMANode& n : m.topology().nodes()) got_mems.insert(n.id());
        }
        EXPECT_EQ(got_mems, want_mems);
      }
      // Get answers the same for the pod.
      pr::GetPodResourcesRequest request;
      request.set_pod_namespace(pod["namespace"]);
      request.set_pod_name(pod["name"]);
      pr::GetPodResourcesResponse one;
      grpc::Status s =
          Patiently([&](grpc::ClientContext* c) { return lister_->Get(c, request, &one); });
      ASSERT_TRUE(s.ok()) << s.error_message();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(one.pod_resources(), *listed))
          << one.DebugString() << "\nvs\n"
          << listed->DebugString();
    }
    // Allocatable CPUs: all of them (16) but the reserved ones.
    pr::AllocatableResourcesResponse allocatable;
    grpc::Status s = Patiently([&](grpc::ClientContext* c) {
      allocatable.Clear();
      return lister_->GetAllocatableResources(c, {}, &allocatable);
    });
    ASSERT_TRUE(s.ok()) << s.error_message();
    const std::vector<int64_t> reserved = CpuList(allocations["reserved"]);
    std::vector<int64_t> want_cpus;
    for (int64_t cpu = 0; cpu < 16; ++cpu) {
      if (std::find(reserved.begin(), reserved.end(), cpu) == reserved.end()) {
        want_cpus.push_back(cpu);
      }
    }
    EXPECT_THAT(allocatable.cpu_ids(), ElementsAreArray(want_cpus));
  }

  TempDir dir_;
  std::string config_;
  std::optional<DaemonProcess> daemon_;
  std::unique_ptr<api::Topologyd::Stub> api_;
  std::unique_ptr<pr::PodResourcesLister::Stub> lister_;
};

TEST_F(PodResourcesSocketTest, AllocatableResourcesAreTheConfiguredOnes) {
  pr::AllocatableResourcesResponse allocatable;
  grpc::Status s = lister_->GetAllocatableResources(Context().get(), {}, &allocatable);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // reservedSystemCPUs "0" of 16 CPUs.
  std::vector<int64_t> cpus;
  for (int64_t cpu = 1; cpu < 16; ++cpu) cpus.push_back(cpu);
  EXPECT_THAT(allocatable.cpu_ids(), ElementsAreArray(cpus));
  // One entry per device and NUMA node; dev-c has no locality.
  std::vector<std::string> devices;
  for (const pr::ContainerDevices& d : allocatable.devices()) {
    ASSERT_EQ(d.device_ids_size(), 1);
    EXPECT_EQ(d.resource_name(), "example.com/dev");
    devices.push_back(d.device_ids(0) + (d.has_topology()
                                             ? "@" + std::to_string(d.topology().nodes(0).id())
                                             : std::string("@-")));
  }
  EXPECT_THAT(devices, ElementsAreArray({"dev-a@0", "dev-b@0", "dev-b@1", "dev-c@-"}));
  // Memory per NUMA node, node 0 less the 64Mi reserved there.
  std::map<int64_t, uint64_t> memory;
  for (const pr::ContainerMemory& m : allocatable.memory()) {
    ASSERT_EQ(m.topology().nodes_size(), 1);
    if (m.memory_type() == "memory") memory[m.topology().nodes(0).id()] = m.size();
  }
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[1] - memory[0], uint64_t{64} << 20);
}

TEST_F(PodResourcesSocketTest, AnswersFollowAdmissionsReleasesAndARestart) {
  ExpectListMatchesAllocations();
  EXPECT_EQ(List().pod_resources_size(), 0);

  Admit(MakePod("g1", {{"cpu", "2"}, {"memory", "128Mi"}, {"example.com/dev", "1"}}));
  Admit(MakePod("g2", {{"cpu", "3"}, {"memory", "256Mi"}}));
  Admit(MakePod("shared", {{"cpu", "500m"}}, /*guaranteed=*/false));
  // Admitted, none bound to a runtime container: all listed.
  EXPECT_EQ(List().pod_resources_size(), 3);
  ExpectListMatchesAllocations();
  {
    pr::GetPodResourcesRequest request;
    request.set_pod_namespace("team");
    request.set_pod_name("pod-g1");
    pr::GetPodResourcesResponse response;
    ASSERT_TRUE(Patiently([&](grpc::ClientContext* c) {
                  return lister_->Get(c, request, &response);
                }).ok());
    ASSERT_EQ(response.pod_resources().containers_size(), 1);
    const pr::ContainerResources& app = response.pod_resources().containers(0);
    EXPECT_EQ(app.cpu_ids_size(), 2);
    ASSERT_EQ(app.memory_size(), 1);
    EXPECT_EQ(app.memory(0).memory_type(), "memory");
    EXPECT_EQ(app.memory(0).size(), uint64_t{128} << 20);
    EXPECT_GE(app.devices_size(), 1);
  }

  Release("g2");
  EXPECT_EQ(List().pod_resources_size(), 2);
  ExpectListMatchesAllocations();

  const pr::ListPodResourcesResponse before = List();
  StopDaemon();
  StartDaemon();
  const pr::ListPodResourcesResponse after = List();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(before, after))
      << before.DebugString() << "\nvs\n"
      << after.DebugString();
  ExpectListMatchesAllocations();
}

TEST_F(PodResourcesSocketTest, GetOfAnUnknownPodIsTheKubeletsError) {
  pr::GetPodResourcesRequest request;
  request.set_pod_namespace("team");
  request.set_pod_name("nobody");
  pr::GetPodResourcesResponse response;
  grpc::Status s = lister_->Get(Context().get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "pod nobody in namespace team not found");
}

TEST_F(PodResourcesSocketTest, TheSocketIsNotTheTopologydApi) {
  // The topologyd API is not served on the PodResources socket.
  auto stub = api::Topologyd::NewStub(
      grpc::CreateChannel("unix:" + PodResourcesSocket(), grpc::InsecureChannelCredentials()));
  api::StatusResponse status;
  EXPECT_EQ(stub->Status(Context().get(), {}, &status).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(PodResourcesSocketTest, CallsBeyondTheKubeletsRateLimitAreRefused) {
  // A burst of 10 is allowed, then 100 calls a second; 50 calls in a row cannot all pass.
  int refused = 0;
  for (int i = 0; i < 50; ++i) {
    pr::AllocatableResourcesResponse response;
    grpc::Status s = lister_->GetAllocatableResources(Context().get(), {}, &response);
    if (s.ok()) continue;
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(s.error_message(), "rejected by rate limit");
    ++refused;
  }
  EXPECT_GT(refused, 0);
  // The topologyd API has no such limit.
  api::StatusResponse status;
  EXPECT_TRUE(api_->Status(Context().get(), {}, &status).ok());
}

class PodResourcesSocketPeersTest : public PodResourcesSocketTest {
 protected:
  std::string Extra() const override {
    return "podResources:\n  listen: unix://" + PodResourcesSocket() +
           "\n  allowedPeers: {uids: [4242]}\n";
  }
};

TEST_F(PodResourcesSocketPeersTest, ACallerOutsideItsAllowlistIsRefused) {
  pr::ListPodResourcesResponse response;
  grpc::Status s = lister_->List(Context().get(), {}, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("is not in podResources.allowedPeers"));
  // The topologyd API keeps its own allowlist, which lets this caller in.
  api::StatusResponse status;
  EXPECT_TRUE(api_->Status(Context().get(), {}, &status).ok());
}

TEST_F(PodResourcesSocketPeersTest, ItsAllowlistReloadsLive) {
  std::string config = config_;
  config.replace(config.find("uids: [4242]"), 12, "uids: [0]   ");
  WriteFile(dir_.File("config.yaml"), config);
  daemon_->Signal(SIGHUP);
  grpc::Status s;
  for (int i = 0; i < 200; ++i) {
    pr::ListPodResourcesResponse response;
    s = lister_->List(Context().get(), {}, &response);
    if (s.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(s.ok()) << s.error_message() << "\n" << ReadFile(dir_.File("log"));
  EXPECT_THAT(ReadFile(dir_.File("log")), HasSubstr("reload applied: podResources.allowedPeers"));
}

class PodResourcesSocketAbsentTest : public PodResourcesSocketTest {
 protected:
  std::string Extra() const override { return ""; }
  bool WantsPodResources() const override { return false; }
};

TEST_F(PodResourcesSocketAbsentTest, NoKeyNoSocket) {
  std::vector<std::string> sockets;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
    if (entry.is_socket()) sockets.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(sockets, ElementsAreArray({"topologyd.sock"}));
  EXPECT_THAT(ReadFile(dir_.File("log")), Not(HasSubstr("PodResources")));
}

}  // namespace
}  // namespace topologyd::testing
