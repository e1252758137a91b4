#include "lib/placement/sync_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/mapping.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ProviderTree Desired() {
  return *BuildProviderTree(testing::TestHost(), testing::TestHostOffer(),
                            testing::TestHostOptions());
}

// What Placement would hold after writing `tree`, at generation 3 everywhere.
ObservedState Converged(const ProviderTree& tree) {
  ObservedState observed;
  observed.resource_classes = tree.custom_resource_classes;
  observed.traits = tree.custom_traits;
  for (const Provider& p : tree.providers) {
    observed.providers.push_back(ObservedProvider{.uuid = p.uuid,
                                                  .name = p.name,
                                                  .parent_uuid = p.parent_uuid,
                                                  .generation = 3,
                                                  .inventories = p.inventories,
                                                  .traits = p.traits,
                                                  .has_allocations = false});
  }
  return observed;
}

ObservedProvider* Find(ObservedState& observed, const std::string& name) {
  for (ObservedProvider& p : observed.providers) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> Described(const SyncPlan& plan) {
  std::vector<std::string> out;
  for (const PlannedCall& c : plan.calls) {
    const HttpRequest r = RequestFor(c, 0);
    out.push_back(r.method + " " + c.provider_name + (c.provider_name.empty() ? c.target : "") +
                  (r.path.ends_with("/inventories") ? " inventories"
                   : r.path.ends_with("/traits")    ? " traits"
                                                    : ""));
  }
  return out;
}

TEST(PlacementPlanSync, ConvergedPlansNothing) {
  const ProviderTree tree = Desired();
  const SyncPlan plan = PlanSync(Converged(tree), tree);
  EXPECT_THAT(plan.calls, IsEmpty());
  EXPECT_THAT(plan.kept, IsEmpty());
}

TEST(PlacementPlanSync, AllocationRatioComparedAsPlacementStoresIt) {
  const ProviderTree tree = Desired();
  ObservedState observed = Converged(tree);
  Find(observed, "e2e-host_NUMA0")->inventories["VCPU"].allocation_ratio = 4.0000001;
  EXPECT_THAT(PlanSync(observed, tree).calls, IsEmpty());
}

TEST(PlacementPlanSync, EmptyPlacementCreatesEverythingParentsFirst) {
  const ProviderTree tree = Desired();
  const SyncPlan plan = PlanSync(ObservedState{}, tree);
  const std::vector<std::string> d = Described(plan);
  ASSERT_GE(d.size(), 7u);
  EXPECT_EQ(d[0], "PUT CUSTOM_PCI_10DE_20B0");
  EXPECT_EQ(d[1], "PUT CUSTOM_MEMORY_PAGE_SIZE_1048576");
  EXPECT_EQ(d[6], "POST e2e-host");
  EXPECT_EQ(d[7], "POST e2e-host_NUMA0");
  EXPECT_EQ(d[8], "PUT e2e-host_NUMA0 inventories");
  EXPECT_EQ(d[9], "PUT e2e-host_NUMA0 traits");
  EXPECT_EQ(d[10], "POST e2e-host_NUMA0_PAGE_4KB");
  // Every provider once, inventories only where there are some, traits except on the root.
  int posts = 0, inventories = 0, traits = 0;
  for (const PlannedCall& c : plan.calls) {
    posts += c.kind == CallKind::kCreateProvider;
    inventories += c.kind == CallKind::kSetInventories;
    traits += c.kind == CallKind::kSetTraits;
  }
  EXPECT_EQ(posts, 17);
  EXPECT_EQ(inventories, 16);  // all but the root
  EXPECT_EQ(traits, 16);
}

TEST(PlacementPlanSync, OneChangedInventoryIsOnePut) {
  const ProviderTree tree = Desired();
  ObservedState observed = Converged(tree);
  Find(observed, "e2e-host_NUMA1")->inventories["PCPU"].reserved = 1;
  const SyncPlan plan = PlanSync(observed, tree);
  ASSERT_EQ(plan.calls.size(), 1u);
  const HttpRequest r = RequestFor(plan.calls[0], 3);
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.path, "/resource_providers/" + tree.providers[5].uuid + "/inventories");
  EXPECT_EQ((*r.body)["resource_provider_generation"], 3);
  // The whole set, every field.
  EXPECT_EQ((*r.body)["inventories"],
            nlohmann::json::parse(R"({"PCPU": {"total": 16, "reserved": 0, "min_unit": 1,
              "max_unit": 16, "step_size": 1, "allocation_ratio": 1.0}})"));
  EXPECT_THAT(plan.calls[0].why, ::testing::HasSubstr("reserved 1"));
}

TEST(PlacementPlanSync, ChangedTraitsAndParentAndMissingClass) {
  const ProviderTree tree = Desired();
  ObservedState observed = Converged(tree);
  observed.resource_classes.clear();
  Find(observed, "e2e-host_NUMA2")->traits.insert("CUSTOM_FOO");
  Find(observed, "e2e-host_0000:3B:00.0")->parent_uuid = tree.root().uuid;
  const SyncPlan plan = PlanSync(observed, tree);
  EXPECT_THAT(Described(plan), ElementsAre("PUT CUSTOM_PCI_10DE_20B0", "PUT e2e-host_NUMA2 traits",
                                           "PUT e2e-host_0000:3B:00.0"));
  const HttpRequest reparent = RequestFor(plan.calls[2], 0);
  EXPECT_EQ((*reparent.body)["parent_provider_uuid"], tree.providers[5].uuid);
  EXPECT_EQ((*reparent.body)["name"], "e2e-host_0000:3B:00.0");
  EXPECT_EQ((*RequestFor(plan.calls[1], 3).body)["traits"],
            nlohmann::json::parse(R"(["HW_NUMA_ROOT"])"));
}

TEST(PlacementPlanSync, UnwantedProvidersDeletedDeepestFirstUnlessAllocated) {
  const ProviderTree tree = Desired();
  ObservedState observed = Converged(tree);
  const std::string numa1 = tree.providers[5].uuid;
  // An old NUMA node 4 with a page child and a device, and an old device under NUMA 1.
  observed.providers.push_back(
      {.uuid = "u-numa4", .name = "e2e-host_NUMA4", .parent_uuid = tree.root().uuid});
  observed.providers.push_back(
      {.uuid = "u-numa4-page", .name = "e2e-host_NUMA4_PAGE_4KB", .parent_uuid = "u-numa4"});
  observed.providers.push_back(
      {.uuid = "u-old-gpu", .name = "e2e-host_0000:D8:00.0", .parent_uuid = numa1});
  SyncPlan plan = PlanSync(observed, tree);
  EXPECT_THAT(Described(plan),
              ElementsAre("DELETE e2e-host_NUMA4_PAGE_4KB", "DELETE e2e-host_0000:D8:00.0",
                          "DELETE e2e-host_NUMA4"));
  EXPECT_THAT(plan.kept, IsEmpty());

  // The page child holds allocations: it stays, and so does its parent.
  Find(observed, "e2e-host_NUMA4_PAGE_4KB")->has_allocations = true;
  plan = PlanSync(observed, tree);
  EXPECT_THAT(Described(plan), ElementsAre("DELETE e2e-host_0000:D8:00.0"));
  EXPECT_THAT(plan.kept, ElementsAre(::testing::StartsWith("e2e-host_NUMA4 "),
                                     ::testing::StartsWith("e2e-host_NUMA4_PAGE_4KB ")));
}

TEST(PlacementPlanProvider, RemovedClassIsAWholeSetWithoutIt) {
  const ProviderTree tree = Desired();
  ObservedProvider current{.uuid = tree.providers[1].uuid,
                           .name = tree.providers[1].name,
                           .parent_uuid = tree.root().uuid,
                           .generation = 7,
                           .inventories = tree.providers[1].inventories,
                           .traits = tree.providers[1].traits};
  current.inventories["DISK_GB"] = Inventory{.total = 10, .max_unit = 10};
  const std::vector<PlannedCall> calls = PlanProvider(&current, tree.providers[1]);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, CallKind::kSetInventories);
  EXPECT_THAT(calls[0].why, ::testing::HasSubstr("DISK_GB removed"));
  EXPECT_FALSE((*RequestFor(calls[0], 7).body)["inventories"].contains("DISK_GB"));
}

}  // namespace
}  // namespace topologyd::placement
