// The sync against a real OpenStack Placement (Debian's python3-placement, Zed): a server on a
// free loopback port with sqlite and noauth2 in a temp directory, started per test and stopped
// with SIGTERM. Skips when Placement is not installed (tools/install-deps.sh test installs it).
// On failure the server's log is kept as build/Testing/placement_service_test.<test>.log.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "nlohmann/json.hpp"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/mapping.h"
#include "lib/placement/placement_http.h"
#include "lib/placement/sync.h"
#include "lib/placement/uuid5.h"
#include "tests/integration/placement_server.h"
#include "tests/integration/process.h"
#include "tests/support/require_component.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
namespace th = ::topologyd::placement::testing;

class PlacementService : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string missing = topologyd::testing::PlacementMissing(); !missing.empty()) {
      SKIP_OR_FAIL() << missing;
    }
    const std::string problem = server_.Start(dir_.path());
    ASSERT_EQ(problem, "");
    url_ = server_.url();
    transport_.emplace(*CurlPlacementTransport::Create({.url = url_, .token = "admin"}));
  }

  void TearDown() override {
    server_.Stop();
    if (HasFailure()) server_.KeepLog("placement_service_test");
  }

  SyncReport Sync(const ProviderTree& tree) {
    absl::StatusOr<SyncReport> report = SyncProviderTree(*transport_, tree, {});
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return {};
    for (const std::string& e : report->errors) ADD_FAILURE() << e;
    return *report;
  }

  json Get(const std::string& path) {
    absl::StatusOr<HttpResponse> r =
        transport_->Send({"GET", path, std::nullopt}, kNewestMicroversion);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return json::object();
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    json body = json::parse(r->body, nullptr, false);
    return body.is_object() ? body : json::object();
  }

  long Put(const std::string& path, const json& body) {
    absl::StatusOr<HttpResponse> r = transport_->Send({"PUT", path, body}, kNewestMicroversion);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->status : 0;
  }

  std::map<std::string, int64_t> Generations(const ProviderTree& tree) {
    std::map<std::string, int64_t> out;
    const json listed = Get("/resource_providers?in_tree=" + tree.root().uuid);
    for (const json& rp : listed["resource_providers"]) out[rp["name"]] = rp["generation"];
    return out;
  }

  // For each allocation candidate of `query`, the NUMA node id that served each of `groups`.
  std::vector<std::vector<int>> Candidates(const ProviderTree& tree, const std::string& query,
                                           const std::vector<std::string>& groups) {
    const json answer = Get("/allocation_candidates?" + query);
    std::vector<std::vector<int>> out;
    for (const json& request : answer.value("allocation_requests", json::array())) {
      std::vector<int> nodes;
      const json mappings = request.value("mappings", json::object());
      for (const std::string& group : groups) {
        if (!mappings.contains(group) || mappings[group].empty()) {
          ADD_FAILURE() << "no mapping for " << group << " in " << request.dump();
          nodes.push_back(-2);
          continue;
        }
        nodes.push_back(NumaOf(tree, mappings[group][0].get<std::string>()));
      }
      out.push_back(nodes);
    }
    return out;
  }

  // The NUMA node a provider of `tree` is under (-1 for the root and what hangs off it).
  static int NumaOf(const ProviderTree& tree, std::string uuid) {
    while (const Provider* p = tree.FindByUuid(uuid)) {
      if (p->traits.contains(kTraitNumaRoot))
        return std::stoi(p->name.substr(p->name.rfind("NUMA") + 4));
      if (!p->parent_uuid) return -1;
      uuid = *p->parent_uuid;
    }
    return -1;
  }

  static ProviderTree Tree(const NodeOffer& offer = th::TestHostOffer(),
                           const topology::Topology& host = th::TestHost()) {
    return *BuildProviderTree(host, offer, th::TestHostOptions());
  }

  topologyd::testing::TempDir dir_;
  topologyd::testing::PlacementServer server_;
  std::string url_;
  std::optional<CurlPlacementTransport> transport_;
};

// One guest NUMA cell: `cpus` PCPU and `mib` of memory with trait `pages`, in one subtree.
std::string Cell(int i, int cpus, int mib, const std::string& pages) {
  const std::string n = std::to_string(i);
  return "resources_PROC" + n + "=PCPU:" + std::to_string(cpus) + "&required_PROC" + n +
         "=HW_NUMA_ROOT&resources_MEM" + n + "=MEMORY_MB:" + std::to_string(mib) + "&required_MEM" +
         n + "=" + pages + "&same_subtree=_PROC" + n + ",_MEM" + n;
}

TEST_F(PlacementService, SyncIsIdempotentAndUpdatesExactlyWhatChanged) {
  const ProviderTree tree = Tree();
  const SyncReport first = Sync(tree);
  EXPECT_EQ(first.microversion, "1.39");
  EXPECT_EQ(first.done.size(), first.plan.calls.size());
  std::map<std::string, int64_t> generations = Generations(tree);
  ASSERT_EQ(generations.size(), 17u);

  // What Placement holds is the tree, every field of every inventory.
  for (const Provider& p : tree.providers) {
    const json inv = Get("/resource_providers/" + p.uuid + "/inventories")["inventories"];
    for (const auto& [rc, want] : p.inventories) {
      ASSERT_TRUE(inv.contains(rc)) << p.name << " " << rc;
      EXPECT_EQ(inv[rc]["total"], want.total) << p.name;
      EXPECT_EQ(inv[rc]["reserved"], want.reserved) << p.name;
      EXPECT_EQ(inv[rc]["min_unit"], want.min_unit) << p.name;
      EXPECT_EQ(inv[rc]["max_unit"], want.max_unit) << p.name;
      EXPECT_EQ(inv[rc]["step_size"], want.step_size) << p.name;
      EXPECT_DOUBLE_EQ(inv[rc]["allocation_ratio"].get<double>(), want.allocation_ratio);
    }
    EXPECT_EQ(inv.size(), p.inventories.size()) << p.name;
    std::set<std::string> traits = Get("/resource_providers/" + p.uuid + "/traits")["traits"];
    EXPECT_EQ(traits, p.traits) << p.name;
  }

  // Again: nothing planned, no generation moves.
  const SyncReport second = Sync(tree);
  EXPECT_THAT(second.plan.calls, IsEmpty());
  EXPECT_EQ(Generations(tree), generations);

  // Reserved CPUs: CPU 8 (node 1) too. Exactly NUMA1's inventory moves.
  NodeOffer offer = th::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");
  const SyncReport reserved = Sync(Tree(offer));
  EXPECT_EQ(reserved.done.size(), 1u);
  std::map<std::string, int64_t> expected = generations;
  ++expected["e2e-host_NUMA1"];
  EXPECT_EQ(Generations(tree), expected);
  EXPECT_EQ(Get("/resource_providers/" + tree.providers[5].uuid +
                "/inventories")["inventories"]["PCPU"]["reserved"],
            1);

  // A new device pool (the NIC): its class and provider appear, nothing else moves.
  offer.device_selectors.push_back(device::PciMatch{.vendor = 0x8086, .device = 0x1593});
  const SyncReport pool = Sync(Tree(offer));
  EXPECT_EQ(pool.done.size(), 4u);  // class, provider, inventory, traits
  std::map<std::string, int64_t> now = Generations(tree);
  EXPECT_EQ(now.at("e2e-host_0000:18:00.0"), 2);
  now.erase("e2e-host_0000:18:00.0");
  EXPECT_EQ(now, expected);

  // Huge pages on node 2: its base pages shrink and a 2M child appears.
  topology::Topology host = th::TestHost();
  host.numa_nodes[2].hugepages = {{2048, 256}, {1048576, 0}};
  const SyncReport pages = Sync(Tree(offer, host));
  now = Generations(tree);
  EXPECT_EQ(now.at("e2e-host_NUMA2_PAGE_4KB"), expected.at("e2e-host_NUMA2_PAGE_4KB") + 1);
  EXPECT_EQ(now.at("e2e-host_NUMA2_PAGE_2048KB"), 2);
  EXPECT_EQ(now.size(), 19u);
  for (const auto& [name, generation] : expected) {
    if (name != "e2e-host_NUMA2_PAGE_4KB") {
      EXPECT_EQ(now.at(name), generation) << name;
    }
  }
  EXPECT_EQ(Sync(Tree(offer, host)).plan.calls.size(), 0u);
}

// Another writer between the sync's read and its write: Placement answers 409
// placement.concurrent_update, the sync re-reads that provider and writes again.
TEST_F(PlacementService, GenerationConflictIsReReadAndRetried) {
  const ProviderTree tree = Tree();
  Sync(tree);
  NodeOffer offer = th::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");
  const std::string numa1 = tree.providers[5].uuid;

  // Before each of the first two inventory writes, another writer changes NUMA1's traits and
  // changes them back, which moves its generation twice.
  class Racing : public PlacementTransport {
   public:
    Racing(PlacementTransport& inner, std::string uuid) : inner_(inner), uuid_(std::move(uuid)) {}
    absl::StatusOr<HttpResponse> Send(const HttpRequest& r, const std::string& mv) override {
      if (races_ < 2 && r.method == "PUT" && r.path.ends_with("/inventories")) {
        ++races_;
        absl::StatusOr<HttpResponse> traits =
            inner_.Send({"GET", "/resource_providers/" + uuid_ + "/traits", std::nullopt}, mv);
        // Placement moves the generation only when the set changes: add a trait, then put the
        // set back.
        json body = json::parse(traits->body);
        const json original = body["traits"];
        body["traits"].push_back("CUSTOM_MEMORY_PAGE_SIZE_SMALL");
        for (const json& traits_now : {body["traits"], original}) {
          body["traits"] = traits_now;
          absl::StatusOr<HttpResponse> w =
              inner_.Send({"PUT", "/resource_providers/" + uuid_ + "/traits", body}, mv);
          EXPECT_EQ(w->status, 200) << w->body;
          body["resource_provider_generation"] =
              json::parse(w->body)["resource_provider_generation"];
        }
      }
      return inner_.Send(r, mv);
    }

   private:
    PlacementTransport& inner_;
    std::string uuid_;
    int races_ = 0;
  } racing(*transport_, numa1);

  const int64_t before = Generations(tree).at("e2e-host_NUMA1");
  absl::StatusOr<SyncReport> report = SyncProviderTree(racing, Tree(offer), {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->errors.front();
  EXPECT_EQ(report->conflicts, 2);
  EXPECT_EQ(report->done.size(), 1u);
  // Four trait writes and our one inventory write.
  EXPECT_EQ(Generations(tree).at("e2e-host_NUMA1"), before + 5);
  EXPECT_EQ(Get("/resource_providers/" + numa1 + "/inventories")["inventories"]["PCPU"]["reserved"],
            1);
}

TEST_F(PlacementService, AllocationCandidatesAnswerTheNumaQuestions) {
  const ProviderTree tree = Tree();
  Sync(tree);
  const std::string small = "CUSTOM_MEMORY_PAGE_SIZE_SMALL";

  // hw:numa_nodes=1, PCPU:4 + 2048 MB: one candidate per node, CPUs and memory on one node.
  const auto one =
      Candidates(tree, Cell(1, 4, 2048, small) + "&group_policy=none", {"_PROC1", "_MEM1"});
  std::multiset<int> nodes;
  for (const auto& c : one) {
    EXPECT_EQ(c[0], c[1]);
    nodes.insert(c[0]);
  }
  EXPECT_EQ(nodes, (std::multiset<int>{0, 1, 2, 3}));

  // hw:numa_nodes=2 with isolate: the 6 node pairs, in both orders, never one node twice.
  const auto two = Candidates(
      tree, Cell(1, 2, 1024, small) + "&" + Cell(2, 2, 1024, small) + "&group_policy=isolate",
      {"_PROC1", "_MEM1", "_PROC2", "_MEM2"});
  EXPECT_EQ(two.size(), 12u);
  std::set<std::pair<int, int>> pairs;
  for (const auto& c : two) {
    EXPECT_EQ(c[0], c[1]);
    EXPECT_EQ(c[2], c[3]);
    EXPECT_NE(c[0], c[2]);
    pairs.insert({c[0], c[2]});
  }
  EXPECT_EQ(pairs.size(), 12u);

  // Cannot fit: 17 PCPU in one cell (no node has more than 16); three cells of more base
  // pages than any node has.
  EXPECT_THAT(Candidates(tree, Cell(1, 17, 1024, small) + "&group_policy=none", {}), IsEmpty());
  EXPECT_THAT(Candidates(tree,
                         Cell(1, 1, 70000, small) + "&" + Cell(2, 1, 70000, small) + "&" +
                             Cell(3, 1, 70000, small) + "&group_policy=isolate",
                         {}),
              IsEmpty());

  // 1G pages: 2 GiB fit on nodes 0 (3 of 4 free) and 1; 1.5 GiB is not a step multiple.
  const auto huge =
      Candidates(tree, Cell(1, 1, 2048, "CUSTOM_MEMORY_PAGE_SIZE_1048576") + "&group_policy=none",
                 {"_PROC1", "_MEM1"});
  std::set<int> huge_nodes;
  for (const auto& c : huge) huge_nodes.insert(c[1]);
  EXPECT_EQ(huge_nodes, (std::set<int>{0, 1}));
  EXPECT_THAT(
      Candidates(tree, Cell(1, 1, 1536, "CUSTOM_MEMORY_PAGE_SIZE_1048576") + "&group_policy=none",
                 {}),
      IsEmpty());

  // CPUs with a GPU on the same node: nodes 1 and 3; the GPU local to nodes {0,1} hangs off
  // the root and never qualifies.
  const auto gpu = Candidates(tree,
                              "resources_PROC1=PCPU:4&required_PROC1=HW_NUMA_ROOT"
                              "&resources_DEV1=CUSTOM_PCI_10DE_20B0:1"
                              "&same_subtree=_PROC1,_DEV1&group_policy=none",
                              {"_PROC1", "_DEV1"});
  std::vector<int> gpu_nodes;
  for (const auto& c : gpu) {
    EXPECT_EQ(c[0], c[1]);
    gpu_nodes.push_back(c[0]);
  }
  EXPECT_THAT(gpu_nodes, UnorderedElementsAre(1, 3));

  // A non-NUMA flavor never lands on a NUMA-reporting host.
  EXPECT_THAT(Get("/allocation_candidates?resources=VCPU:1,MEMORY_MB:512"
                  "&required=!HW_NUMA_ROOT")["allocation_requests"],
              IsEmpty());
}

TEST_F(PlacementService, UnwantedProvidersAreDeletedUnlessAllocated) {
  const ProviderTree tree = Tree();
  Sync(tree);
  const std::string gpu = tree.providers[14].uuid;  // e2e-host_0000:3B:00.0
  ASSERT_EQ(tree.providers[14].name, "e2e-host_0000:3B:00.0");
  const std::string consumer = "5b6f3c2e-1d2a-4e5f-8a9b-0c1d2e3f4a5b";
  ASSERT_EQ(Put("/allocations/" + consumer,
                {{"allocations", {{gpu, {{"resources", {{"CUSTOM_PCI_10DE_20B0", 1}}}}}}},
                 {"project_id", "p"},
                 {"user_id", "u"},
                 {"consumer_generation", nullptr},
                 {"consumer_type", "INSTANCE"}}),
            204);

  NodeOffer no_devices = th::TestHostOffer();
  no_devices.device_selectors.clear();
  const SyncReport report = Sync(Tree(no_devices));
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_THAT(report.kept[0], ::testing::HasSubstr("e2e-host_0000:3B:00.0"));
  std::map<std::string, int64_t> generations = Generations(tree);
  EXPECT_EQ(generations.size(), 15u);
  EXPECT_TRUE(generations.contains("e2e-host_0000:3B:00.0"));

  // Once the allocation is gone, the next sync deletes it.
  absl::StatusOr<HttpResponse> deleted =
      transport_->Send({"DELETE", "/allocations/" + consumer, std::nullopt}, kNewestMicroversion);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 204);
  const SyncReport again = Sync(Tree(no_devices));
  EXPECT_THAT(again.kept, IsEmpty());
  EXPECT_EQ(Generations(tree).size(), 14u);
}

// The command line end to end on a recorded machine: sync, sync again, a dry run of a change.
TEST_F(PlacementService, TopoctlSyncOnARecordedMachine) {
  const std::string xml =
      std::string(TOPOLOGYD_SHARED_TOPOLOGIES) + "/intel-xeon8259cl-2s-8xt4-aws-g4dn-metal.xml";
  if (!std::filesystem::exists(xml)) GTEST_SKIP() << xml << " not found (the recorded machines)";
  const std::string config = dir_.File("topologyd.yaml");
  topologyd::testing::WriteFile(
      config,
      "cpuManagerPolicy: static\nreservedSystemCPUs: \"0,48\"\n"
      "devices:\n- resourceName: nvidia.com/gpu\n  pci: {vendor: \"10de\"}\n");
  const auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {topologyd::testing::TopoctlBinary(),
                                     "-o",
                                     "json",
                                     "placement",
                                     "sync",
                                     "--input",
                                     xml,
                                     "--config",
                                     config,
                                     "--node-name",
                                     "g4dn",
                                     "--endpoint",
                                     url_,
                                     "--token",
                                     "admin"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return topologyd::testing::RunCommand(argv);
  };
  auto first = run({});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json done = json::parse(first.out);
  EXPECT_FALSE(done["done"].empty());
  EXPECT_THAT(done["errors"], IsEmpty());

  auto second = run({});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(json::parse(second.out)["planned"], IsEmpty());

  auto dry = run({"--shared-cpus", "1-3", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  const json plan = json::parse(dry.out);
  EXPECT_EQ(plan["planned"].size(), 1u) << plan.dump();  // NUMA0's inventories gain VCPU
  EXPECT_THAT(plan["done"], IsEmpty());
  auto after = run({"--dry-run"});
  EXPECT_THAT(json::parse(after.out)["planned"], IsEmpty());

  // The endpoint and token from the config's placement block when no flag gives them.
  topologyd::testing::WriteFile(dir_.File("token"), "admin\n");
  topologyd::testing::WriteFile(config, topologyd::testing::ReadFile(config) +
                                            "placement: {endpoint: \"" + url_ +
                                            "\", tokenFile: " + dir_.File("token") + "}\n");
  auto from_config = topologyd::testing::RunCommand(
      {topologyd::testing::TopoctlBinary(), "-o", "json", "placement", "sync", "--input", xml,
       "--config", config, "--node-name", "g4dn", "--dry-run"});
  ASSERT_EQ(from_config.exit_code, 0) << from_config.err;
  EXPECT_EQ(json::parse(from_config.out)["endpoint"], url_);
  EXPECT_THAT(json::parse(from_config.out)["planned"], IsEmpty());
  ::unlink(dir_.File("token").c_str());
  auto no_token = topologyd::testing::RunCommand({topologyd::testing::TopoctlBinary(), "placement",
                                                  "sync", "--input", xml, "--config", config,
                                                  "--node-name", "g4dn", "--dry-run"});
  EXPECT_EQ(no_token.exit_code, 1);
  EXPECT_THAT(no_token.err, ::testing::HasSubstr("placement.tokenFile: cannot read"));

  // A Placement that is not there: a clear error, exit 1.
  auto down = topologyd::testing::RunCommand({topologyd::testing::TopoctlBinary(), "placement",
                                              "sync", "--input", xml, "--node-name", "g4dn",
                                              "--endpoint", "http://127.0.0.1:1"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_THAT(down.err, ::testing::HasSubstr("topoctl: placement: GET http://127.0.0.1:1/"));
}

// `placement tree` without --input: the machine is the daemon's (a synthetic 2-node machine,
// CPUs 0-15, CPU 0 reserved). Needs no Placement.
TEST(TopoctlPlacementTree, TheDaemonsMachine) {
  topologyd::testing::TempDir dir;
  const std::string config = dir.File("config.yaml");
  const std::string socket = dir.File("topologyd.sock");
  topologyd::testing::WriteFile(config, topologyd::testing::MinimalConfig(dir.path()));
  topologyd::testing::DaemonProcess daemon;
  daemon.Start(config, dir.File("log"));
  ASSERT_TRUE(daemon.WaitUntilServing(socket, std::chrono::seconds(30)))
      << topologyd::testing::ReadFile(dir.File("log"));
  const topologyd::testing::CommandResult r = topologyd::testing::RunCommand(
      {topologyd::testing::TopoctlBinary(), "--socket", socket, "-o", "json", "placement", "tree",
       "--config", config, "--node-name", "n1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json tree = json::parse(r.out);
  std::map<std::string, json> by_name;
  for (const json& p : tree["resource_providers"]) by_name[p["name"]] = p;
  ASSERT_TRUE(by_name.contains("n1_NUMA0")) << r.out;
  ASSERT_TRUE(by_name.contains("n1_NUMA1")) << r.out;
  EXPECT_EQ(by_name["n1_NUMA0"]["inventories"]["PCPU"]["total"], 8);
  EXPECT_EQ(by_name["n1_NUMA0"]["inventories"]["PCPU"]["reserved"], 1);
  EXPECT_EQ(by_name["n1_NUMA1"]["inventories"]["PCPU"]["reserved"], 0);
  EXPECT_EQ(tree["root_provider_uuid"], ProviderUuid("n1"));

  // The settings of a `placement` block, each overridden by its flag; a bad flag is named.
  const std::string with_block = dir.File("with-placement.yaml");
  topologyd::testing::WriteFile(with_block,
                                topologyd::testing::MinimalConfig(
                                    dir.path(),
                                    "placement: {endpoint: \"http://127.0.0.1:1\", nodeName: "
                                    "from-config, sharedCPUs: \"8-9\", vcpuAllocationRatio: 2}\n"));
  const auto tree_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {topologyd::testing::TopoctlBinary(),
                                     "--socket",
                                     socket,
                                     "-o",
                                     "json",
                                     "placement",
                                     "tree",
                                     "--config",
                                     with_block};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return topologyd::testing::RunCommand(argv);
  };
  const topologyd::testing::CommandResult configured = tree_of({});
  ASSERT_EQ(configured.exit_code, 0) << configured.err;
  // The inventories of the provider named `name` in a tree document.
  const auto inventories = [](const json& doc, const std::string& name) {
    for (const json& p : doc["resource_providers"]) {
      if (p["name"] == name) return p["inventories"];
    }
    ADD_FAILURE() << "no " << name << " in " << doc.dump();
    return json::object();
  };
  json doc = json::parse(configured.out);
  EXPECT_EQ(doc["root_provider_uuid"], ProviderUuid("from-config"));
  EXPECT_EQ(inventories(doc, "from-config_NUMA1")["VCPU"]["total"], 2);
  EXPECT_EQ(inventories(doc, "from-config_NUMA1")["VCPU"]["allocation_ratio"], 2.0);
  const topologyd::testing::CommandResult overridden =
      tree_of({"--node-name", "n2", "--vcpu-allocation-ratio", "3"});
  ASSERT_EQ(overridden.exit_code, 0) << overridden.err;
  doc = json::parse(overridden.out);
  EXPECT_EQ(doc["root_provider_uuid"], ProviderUuid("n2"));
  EXPECT_EQ(inventories(doc, "n2_NUMA1")["VCPU"]["allocation_ratio"], 3.0);
  const topologyd::testing::CommandResult bad = tree_of({"--base-page-kib", "12"});
  EXPECT_EQ(bad.exit_code, 2);  // a bad flag value is bad usage
  EXPECT_THAT(bad.err, ::testing::HasSubstr("topoctl: placement: --base-page-kib: 12 is not a "
                                            "power of two"));
}

}  // namespace
}  // namespace topologyd::placement
