#include "shim/allocation_cache.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

v1::ListAllocationsResponse Listing(uint64_t generation, std::string pool) {
  v1::ListAllocationsResponse listing;
  listing.set_state_generation(generation);
  listing.set_shared_pool(std::move(pool));
  v1::PodAllocation* pod = listing.add_pods();
  pod->set_uid("u1");
  v1::ContainerAllocation* exclusive = pod->add_containers();
  exclusive->set_name("pinned");
  exclusive->set_cpus("2-3");
  exclusive->set_exclusive(true);
  exclusive->add_memory_numa(0);
  exclusive->set_container_id("c1");
  v1::ContainerAllocation* shared = pod->add_containers();
  shared->set_name("shared");
  shared->set_cpus("0-1");
  shared->set_container_id("c2");
  v1::ContainerAllocation* unbound = pod->add_containers();
  unbound->set_name("unbound");
  unbound->set_cpus("0-1");
  return listing;
}

TEST(AllocationCacheTest, SharedPoolContainersShowTheCurrentPool) {
  AllocationCache cache;
  cache.Replace(Listing(5, "0-1"));
  EXPECT_EQ(cache.Find("u1", "pinned")->cpus, "2-3");
  EXPECT_EQ(cache.Find("u1", "pinned")->mems, "0");
  EXPECT_EQ(cache.Find("u1", "shared")->cpus, "0-1");
  cache.Replace(Listing(6, "0"));
  EXPECT_EQ(cache.Find("u1", "shared")->cpus, "0");
  EXPECT_FALSE(cache.Find("u1", "absent"));
  EXPECT_EQ(cache.HeldContainers("u1"), (std::set<std::string>{"pinned", "shared", "unbound"}));
}

TEST(AllocationCacheTest, AnOlderListingIsIgnoredUnlessItStartsANewStream) {
  AllocationCache cache;
  cache.Replace(Listing(9, "0"));
  cache.Replace(Listing(4, "0-1"));
  EXPECT_EQ(cache.generation(), 9u);
  EXPECT_EQ(cache.shared_pool(), "0");
  cache.Replace(Listing(4, "0-1"), /*fresh_stream=*/true);
  EXPECT_EQ(cache.generation(), 4u);
  EXPECT_EQ(cache.shared_pool(), "0-1");
}

TEST(AllocationCacheTest, BoundListsOnlyContainersWithARuntimeId) {
  AllocationCache cache;
  cache.Replace(Listing(1, "0"));
  std::vector<std::pair<std::string, Placement>> bound = cache.Bound();
  ASSERT_EQ(bound.size(), 2u);
  std::map<std::string, std::string> cpus;
  for (const auto& [id, placement] : bound) cpus[id] = placement.cpus;
  EXPECT_EQ(cpus, (std::map<std::string, std::string>{{"c1", "2-3"}, {"c2", "0"}}));
}

TEST(AllocationCacheTest, AdmitRepliesAndReleasesUpdateOnePod) {
  AllocationCache cache;
  v1::AdmitResponse reply;
  reply.set_admitted(true);
  reply.set_state_generation(3);
  v1::ContainerAllocation* c = reply.add_containers();
  c->set_name("app");
  c->set_cpus("1");
  c->set_exclusive(true);
  cache.PutPod("u2", reply);
  EXPECT_TRUE(cache.HoldsPod("u2"));
  EXPECT_EQ(cache.Find("u2", "app")->cpus, "1");
  cache.EraseContainer("u2", "app");
  EXPECT_FALSE(cache.HoldsPod("u2"));  // its last container
  cache.PutPod("u2", reply);
  cache.ErasePod("u2");
  EXPECT_FALSE(cache.Find("u2", "app"));
}

TEST(AllocationCacheTest, KeepsWhichContainersRunWithoutACfsQuota) {
  AllocationCache cache;
  v1::ListAllocationsResponse listing = Listing(1, "0-1");
  listing.mutable_pods(0)->mutable_containers(0)->set_cpu_quota_unlimited(true);
  cache.Replace(listing);
  // A restart answered from the cache keeps topologyd's word.
  EXPECT_TRUE(cache.Find("u1", "pinned")->cpu_quota_unlimited);
  EXPECT_FALSE(cache.Find("u1", "shared")->cpu_quota_unlimited);
  EXPECT_TRUE(cache.PodCpuQuotaUnlimited("u1"));
  EXPECT_FALSE(cache.PodCpuQuotaUnlimited("absent"));

  v1::AdmitResponse reply;
  reply.set_admitted(true);
  v1::ContainerAllocation* c = reply.add_containers();
  c->set_name("app");
  c->set_cpus("1");
  c->set_exclusive(true);  // the gate off: topologyd does not say unlimited
  cache.PutPod("u2", reply);
  EXPECT_FALSE(cache.PodCpuQuotaUnlimited("u2"));
  c->set_cpu_quota_unlimited(true);
  cache.PutPod("u2", reply);
  EXPECT_TRUE(cache.PodCpuQuotaUnlimited("u2"));
}

}  // namespace
}  // namespace topologyd::shim
