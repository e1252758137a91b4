// topoctl containers against a real topologyd (its cgroup root a fake tree, nothing applied),
// a fake CRI runtime (a RuntimeService that answers ContainerStatus with the cpusets it was
// given) and fake container cgroups: each bound container's cgroup and runtime cpusets are
// judged against topologyd's decision.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include <grpcpp/grpcpp.h>

#include "tests/integration/process.h"
#include "topologyd/v1/topologyd.grpc.pb.h"

#include "cri/v1/runtime.grpc.pb.h"

namespace topologyd::testing {
namespace {

namespace v1 = ::topologyd::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

// ContainerStatus answers with the stored cpusets; unknown ids are NOT_FOUND, as containerd
// answers them.
class FakeRuntime final : public runtime::v1::RuntimeService::Service {
 public:
  void Store(const std::string& id, const std::string& cpus, const std::string& mems) {
    std::lock_guard<std::mutex> lock(mu_);
    stored_[id] = {cpus, mems};
  }

  grpc::Status ContainerStatus(grpc::ServerContext*,
                               const runtime::v1::ContainerStatusRequest* request,
                               runtime::v1::ContainerStatusResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = stored_.find(request->container_id());
    if (it == stored_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "an error occurred when try to find container \"" +
                              request->container_id() + "\": not found");
    }
    runtime::v1::ContainerStatus* status = response->mutable_status();
    status->set_id(request->container_id());
    status->set_state(runtime::v1::CONTAINER_RUNNING);
    runtime::v1::LinuxContainerResources* linux = status->mutable_resources()->mutable_linux();
    linux->set_cpuset_cpus(it->second.first);
    linux->set_cpuset_mems(it->second.second);
    return grpc::Status::OK;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<std::string, std::string>> stored_;
};

v1::Pod PodOf(const std::string& uid, const std::string& container, const std::string& cpu,
              bool guaranteed) {
  v1::Pod pod;
  pod.set_uid(uid);
  pod.set_namespace_("shop");
  pod.set_name(uid);
  v1::Container* c = pod.add_containers();
  c->set_name(container);
  (*c->mutable_requests())["cpu"] = cpu;
  (*c->mutable_requests())["memory"] = "128Mi";
  if (guaranteed) *c->mutable_limits() = c->requests();
  return pod;
}

class TopoctlContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.File("config.yaml"), MinimalConfig(dir_.path()));
    daemon_.Start(dir_.File("config.yaml"), dir_.File("log"));
    ASSERT_TRUE(daemon_.WaitUntilServing(socket_, seconds(30))) << ReadFile(dir_.File("log"));
    stub_ = v1::Topologyd::NewStub(
        grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()));
    grpc::ServerBuilder builder;
    builder.AddListeningPort(runtime_endpoint_, grpc::InsecureServerCredentials());
    builder.RegisterService(&runtime_);
    runtime_server_ = builder.BuildAndStart();
    ASSERT_NE(runtime_server_, nullptr);
  }

  void TearDown() override {
    if (runtime_server_) runtime_server_->Shutdown();
  }

  // Admits `pod` and binds its container to `id` at `cgroup`; its CPUs.
  std::string AdmitAndBind(const v1::Pod& pod, const std::string& id, const std::string& cgroup) {
    grpc::ClientContext admit_context;
    v1::AdmitRequest admit;
    *admit.mutable_pod() = pod;
    v1::AdmitResponse admitted;
    EXPECT_TRUE(stub_->Admit(&admit_context, admit, &admitted).ok());
    EXPECT_TRUE(admitted.admitted()) << admitted.message();
    if (id.empty()) return admitted.containers(0).cpus();
    grpc::ClientContext allocate_context;
    v1::AllocateRequest allocate;
    allocate.set_pod_uid(pod.uid());
    allocate.set_container_name(pod.containers(0).name());
    allocate.set_container_id(id);
    allocate.set_cgroup(cgroup);
    v1::AllocateResponse bound;
    grpc::Status s = stub_->Allocate(&allocate_context, allocate, &bound);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return bound.container().cpus();
  }

  void MakeCgroup(const std::string& cgroup, const std::string& cpus, const std::string& mems) {
    const std::string path = dir_.File("cgroup/" + cgroup);
    std::filesystem::create_directories(path);
    WriteFile(path + "/cpuset.cpus", cpus + "\n");
    WriteFile(path + "/cpuset.mems", mems + "\n");
  }

  CommandResult Topoctl(std::vector<std::string> args) {
    args.insert(args.begin(), {TopoctlBinary(), "--socket", socket_, "containers"});
    return RunCommand(args);
  }

  // The rows of `containers --json`, by container name.
  std::map<std::string, nlohmann::json> Rows(const CommandResult& r) {
    std::map<std::string, nlohmann::json> rows;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return rows;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    for (const auto& row : doc["containers"]) rows[row["container"].get<std::string>()] = row;
    return rows;
  }

  TempDir dir_;
  const std::string socket_ = dir_.File("topologyd.sock");
  const std::string runtime_endpoint_ = "unix:" + dir_.File("cri.sock");
  DaemonProcess daemon_;
  std::unique_ptr<v1::Topologyd::Stub> stub_;
  FakeRuntime runtime_;
  std::unique_ptr<grpc::Server> runtime_server_;
};

TEST_F(TopoctlContainersTest, JudgesTheCgroupAndTheRuntimeAgainstTopologyd) {
  const std::string app = AdmitAndBind(PodOf("p1", "app", "2", true), "c1", "kubepods/podp1/c1");
  AdmitAndBind(PodOf("p2", "web", "100m", false), "c2", "kubepods/burstable/podp2/c2");
  AdmitAndBind(PodOf("p3", "idle", "1", true), "", "");
  AdmitAndBind(PodOf("p4", "gone", "1", true), "c4", "kubepods/podp4/c4");
  // The shared pool, after every admission: what the shared-pool container is to run on.
  grpc::ClientContext list_context;
  v1::ListAllocationsResponse list;
  ASSERT_TRUE(stub_->ListAllocations(&list_context, {}, &list).ok());
  const std::string pool = list.shared_pool();
  ASSERT_NE(app, pool);

  MakeCgroup("kubepods/podp1/c1", app, "0-1");  // agrees (topologyd places no memory here)
  MakeCgroup("kubepods/burstable/podp2/c2", "0-3", "0-1");  // differs
  runtime_.Store("c1", "0-3", "");                          // differs
  runtime_.Store("c2", pool, "");                           // agrees

  std::map<std::string, nlohmann::json> rows =
      Rows(Topoctl({"--runtime-endpoint", runtime_endpoint_, "--json"}));
  ASSERT_EQ(rows.size(), 4u);
  const nlohmann::json& a = rows["app"];
  EXPECT_EQ(a["pod_uid"], "p1");
  EXPECT_EQ(a["namespace"], "shop");
  EXPECT_EQ(a["pod"], "p1");
  EXPECT_EQ(a["cpus"], app);
  EXPECT_TRUE(a["exclusive"].get<bool>());
  EXPECT_EQ(a["container_id"], "c1");
  EXPECT_EQ(a["cgroup"], "kubepods/podp1/c1");
  EXPECT_EQ(a["cgroup_cpuset"], "agrees");
  EXPECT_EQ(a["runtime_cpuset"], "differs: runtime 0-3");
  EXPECT_EQ(rows["web"]["cpus"], pool);
  EXPECT_FALSE(rows["web"]["exclusive"].get<bool>());
  EXPECT_EQ(rows["web"]["cgroup_cpuset"], "differs: cgroup 0-3");
  EXPECT_EQ(rows["web"]["runtime_cpuset"], "agrees");
  // Not bound: nothing to compare.
  EXPECT_EQ(rows["idle"]["container_id"], "");
  EXPECT_TRUE(rows["idle"]["cgroup_cpuset"].is_null());
  EXPECT_TRUE(rows["idle"]["runtime_cpuset"].is_null());
  // Bound, but neither the cgroup nor the runtime knows it.
  EXPECT_THAT(rows["gone"]["cgroup_cpuset"].get<std::string>(),
              HasSubstr("unknown: cannot read " + dir_.File("cgroup/kubepods/podp4/c4")));
  EXPECT_THAT(rows["gone"]["runtime_cpuset"].get<std::string>(), HasSubstr("unknown: runtime: "));
  EXPECT_THAT(rows["gone"]["runtime_cpuset"].get<std::string>(), HasSubstr("not found"));

  // The table, without a runtime: the cgroup column only.
  CommandResult table = Topoctl({});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("CONTAINER-ID"));
  EXPECT_THAT(table.out, HasSubstr("shop/p1"));
  EXPECT_THAT(table.out, HasSubstr("differs: cgroup 0-3"));
  EXPECT_THAT(table.out, Not(HasSubstr("RUNTIME")));
  table = Topoctl({"--runtime-endpoint", runtime_endpoint_});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("RUNTIME"));
  EXPECT_THAT(table.out, HasSubstr("differs: runtime 0-3"));

  // --output json is the same document; --cgroup-root moves where cgroups are read.
  rows = Rows(RunCommand({TopoctlBinary(), "--socket", socket_, "--output", "json", "containers",
                          "--cgroup-root", dir_.File("elsewhere")}));
  EXPECT_THAT(rows["app"]["cgroup_cpuset"].get<std::string>(),
              HasSubstr("unknown: cannot read " + dir_.File("elsewhere/kubepods/podp1/c1")));
  EXPECT_TRUE(rows["app"]["runtime_cpuset"].is_null());
}

TEST_F(TopoctlContainersTest, NoPodsAdmitted) {
  CommandResult r = Topoctl({});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no pods admitted"));
  EXPECT_TRUE(Rows(Topoctl({"--json"})).empty());
}

}  // namespace
}  // namespace topologyd::testing
