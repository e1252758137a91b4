#include "lib/placement/sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lib/placement/mapping.h"
#include "tests/unit/placement/fake_placement.h"
#include "tests/unit/placement/test_host.h"

namespace topologyd::placement {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::topologyd::placement::testing::FakePlacement;

ProviderTree Desired(const NodeOffer& offer = testing::TestHostOffer()) {
  return *BuildProviderTree(testing::TestHost(), offer, testing::TestHostOptions());
}

std::map<std::string, int64_t> Generations(const FakePlacement& fake) {
  std::map<std::string, int64_t> out;
  for (const auto& [uuid, rp] : fake.providers) out[uuid] = rp.generation;
  return out;
}

// Runs `before` on each request, then passes it to the fake: another writer acting between
// the sync's read and its write.
class Hooked : public PlacementTransport {
 public:
  Hooked(FakePlacement& inner, std::function<void(const HttpRequest&)> before)
      : inner_(inner), before_(std::move(before)) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest& r, const std::string& mv) override {
    before_(r);
    return inner_.Send(r, mv);
  }

 private:
  FakePlacement& inner_;
  std::function<void(const HttpRequest&)> before_;
};

SyncReport Sync(FakePlacement& fake, const ProviderTree& tree, SyncOptions options = {}) {
  absl::StatusOr<SyncReport> report = SyncProviderTree(fake, tree, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : SyncReport{};
}

TEST(PlacementSyncLoop, CreatesTheTreeThenASecondSyncWritesNothing) {
  FakePlacement fake;
  const ProviderTree tree = Desired();
  const SyncReport first = Sync(fake, tree);
  EXPECT_TRUE(first.ok()) << first.errors.front();
  EXPECT_EQ(first.microversion, "1.39");
  EXPECT_EQ(fake.providers.size(), 17u);
  EXPECT_EQ(first.done.size(), first.plan.calls.size());
  const auto& numa0 = fake.providers.at(tree.providers[1].uuid);
  EXPECT_EQ(numa0.inventories["VCPU"]["allocation_ratio"], 4.0);
  EXPECT_EQ(numa0.generation, 2);  // inventories, then traits, against the answered generation

  const auto before = Generations(fake);
  fake.requests.clear();
  const SyncReport second = Sync(fake, tree);
  EXPECT_THAT(second.plan.calls, IsEmpty());
  EXPECT_EQ(fake.Writes().size(), 0u);
  EXPECT_EQ(Generations(fake), before);
}

TEST(PlacementSyncLoop, ChangedReservationMovesExactlyThatInventory) {
  FakePlacement fake;
  Sync(fake, Desired());
  const auto before = Generations(fake);
  NodeOffer offer = testing::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");  // CPU 8 is node 1's
  const ProviderTree changed = Desired(offer);
  fake.requests.clear();
  const SyncReport report = Sync(fake, changed);
  ASSERT_EQ(fake.Writes().size(), 1u);
  EXPECT_EQ(fake.Writes()[0].path,
            "/resource_providers/" + changed.providers[5].uuid + "/inventories");
  auto after = Generations(fake);
  EXPECT_EQ(after[changed.providers[5].uuid], before.at(changed.providers[5].uuid) + 1);
  after[changed.providers[5].uuid] = before.at(changed.providers[5].uuid);
  EXPECT_EQ(after, before);
}

TEST(PlacementSyncLoop, ConflictIsReReadAndRetried) {
  FakePlacement fake;
  Sync(fake, Desired());
  NodeOffer offer = testing::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");
  const ProviderTree changed = Desired(offer);
  fake.conflicts_to_inject = 2;
  int waits = 0;
  SyncOptions options;
  options.wait_before_retry = [&waits](int attempt) { waits = attempt; };
  const SyncReport report = Sync(fake, changed, options);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.conflicts, 2);
  EXPECT_EQ(waits, 2);
  EXPECT_EQ(fake.providers.at(changed.providers[5].uuid).inventories["PCPU"]["reserved"], 1);
  // The re-read is of that provider.
  int rereads = 0;
  for (const HttpRequest& r : fake.requests) {
    rereads += r.method == "GET" && r.path == "/resource_providers/" + changed.providers[5].uuid;
  }
  EXPECT_EQ(rereads, 2);
}

TEST(PlacementSyncLoop, EndlessConflictsGiveUpAfterTheBound) {
  FakePlacement fake;
  Sync(fake, Desired());
  NodeOffer offer = testing::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");
  fake.conflicts_to_inject = 1000;
  SyncOptions options;
  options.max_conflict_retries = 3;
  const SyncReport report = Sync(fake, Desired(offer), options);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_THAT(report.errors[0], HasSubstr("after 3 retries"));
  EXPECT_EQ(report.conflicts, 4);
}

TEST(PlacementSyncLoop, AnotherWriterAlreadyDidItMeansNoSecondWrite) {
  FakePlacement fake;
  Sync(fake, Desired());
  NodeOffer offer = testing::TestHostOffer();
  offer.reserved_cpus = *CpuSet::Parse("0,8,32");
  const ProviderTree changed = Desired(offer);
  const std::string numa1 = changed.providers[5].uuid;
  fake.requests.clear();
  // Another agent writes the same inventories between our read and our write.
  Hooked racing(fake, [&fake, &numa1](const HttpRequest& r) {
    if (r.method == "PUT" && r.path.ends_with("/inventories")) {
      fake.providers.at(numa1).inventories["PCPU"]["reserved"] = 1;
      ++fake.providers.at(numa1).generation;
    }
  });
  const absl::StatusOr<SyncReport> report = SyncProviderTree(racing, changed, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->conflicts, 1);
  EXPECT_THAT(report->done, IsEmpty());  // re-read, found nothing left to do
  EXPECT_EQ(fake.Writes().size(), 1u);   // the one write that conflicted
}

TEST(PlacementSyncLoop, DeletesUnwantedProvidersAndKeepsAllocatedOnes) {
  FakePlacement fake;
  const ProviderTree tree = Desired();
  Sync(fake, tree);
  NodeOffer fewer = testing::TestHostOffer();
  fewer.device_selectors.clear();
  const ProviderTree without_gpus = Desired(fewer);
  // One GPU holds an allocation.
  const std::string busy = tree.FindByUuid(tree.providers[14].uuid)->uuid;
  fake.providers.at(busy).usages["CUSTOM_PCI_10DE_20B0"] = 1;
  const SyncReport report = Sync(fake, without_gpus);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(fake.providers.size(), 15u);
  EXPECT_TRUE(fake.providers.contains(busy));
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_THAT(report.kept[0], HasSubstr(tree.providers[14].name));
  EXPECT_THAT(report.kept[0], HasSubstr("allocations"));
}

TEST(PlacementSyncLoop, AllocationAppearingBeforeTheDeleteIsKept) {
  FakePlacement fake;
  const ProviderTree tree = Desired();
  Sync(fake, tree);
  NodeOffer fewer = testing::TestHostOffer();
  fewer.device_selectors.clear();
  const std::string gpu = tree.providers[14].uuid;
  // A dry run plans the three deletions and changes nothing.
  fake.requests.clear();
  const absl::StatusOr<SyncReport> dry = SyncProviderTree(fake, Desired(fewer), {.dry_run = true});
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->plan.calls.size(), 3u);
  EXPECT_EQ(fake.providers.size(), 17u);
  EXPECT_EQ(fake.Writes().size(), 0u);
  // Allocations arrive after the read: the DELETE answers inuse.
  Hooked allocating(fake, [&fake, &gpu](const HttpRequest& r) {
    if (r.method == "DELETE" && r.path.ends_with(gpu)) {
      fake.providers.at(gpu).usages["CUSTOM_PCI_10DE_20B0"] = 1;
    }
  });
  const absl::StatusOr<SyncReport> report = SyncProviderTree(allocating, Desired(fewer), {});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_THAT(report->kept[0], HasSubstr("holds allocations"));
  EXPECT_TRUE(fake.providers.contains(gpu));
  EXPECT_EQ(fake.providers.size(), 15u);
}

TEST(PlacementSyncLoop, TooOldPlacementIsRefusedBeforeAnyWrite) {
  FakePlacement fake;
  fake.max_version = "1.35";
  absl::StatusOr<SyncReport> report = SyncProviderTree(fake, Desired(), {});
  EXPECT_EQ(report.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("1.35"));
  EXPECT_EQ(fake.Writes().size(), 0u);
  fake.max_version = "1.37";
  EXPECT_EQ(Sync(fake, Desired()).microversion, "1.37");
}

TEST(PlacementSyncLoop, UnreadableAnswersChangeNothing) {
  FakePlacement fake;
  fake.overrides["/resource_classes"] = HttpResponse{200, "<html>proxy</html>"};
  absl::StatusOr<SyncReport> report = SyncProviderTree(fake, Desired(), {});
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fake.Writes().size(), 0u);
  fake.overrides["/resource_classes"] = HttpResponse{
      403,
      R"({"errors":[{"status":403,"code":"placement.undefined_code","detail":"Policy does not allow placement:resource_classes:list"}]})"};
  report = SyncProviderTree(fake, Desired(), {});
  EXPECT_EQ(report.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("HTTP 403"));
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("Policy does not allow"));
  EXPECT_EQ(fake.Writes().size(), 0u);
}

TEST(PlacementSyncLoop, FailedCreationSkipsTheChildren) {
  FakePlacement fake;
  const ProviderTree tree = Desired();
  // Someone else owns a provider named like our NUMA node 2.
  fake.providers["other"] = FakePlacement::Rp{.name = "e2e-host_NUMA2"};
  const SyncReport report = Sync(fake, tree);
  ASSERT_EQ(report.errors.size(), 2u);
  EXPECT_THAT(report.errors[0], HasSubstr("placement.duplicate_name"));
  EXPECT_THAT(report.errors[1], HasSubstr("e2e-host_NUMA2_PAGE_4KB: not created"));
  EXPECT_EQ(fake.providers.size(), 1u + 17u - 2u);
}

}  // namespace
}  // namespace topologyd::placement
