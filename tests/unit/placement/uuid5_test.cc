#include "lib/placement/uuid5.h"

#include <gtest/gtest.h>

namespace topologyd::placement {
namespace {

TEST(PlacementUuid5, PythonUuid5OfDnsNamespace) {
  // uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
  EXPECT_EQ(UuidText(Uuid5(kNamespaceDns, "python.org")), "886313e1-3b8a-5372-9b90-0c9aee199e5d");
  EXPECT_EQ(UuidText(Uuid5(kNamespaceDns, "placement.topologyd.io")),
            "ea7b6eff-d8d2-534e-b783-1db219381729");
}

TEST(PlacementProviderUuid, TheDocumentedExamples) {
  EXPECT_EQ(ProviderUuid("e2e-host"), "0102dcb9-f457-5456-a113-77a7f45bf491");
  EXPECT_EQ(ProviderUuid("e2e-host_NUMA0"), "52e655b2-ecee-5c3f-ac8e-1cccf3a13eb6");
  EXPECT_EQ(ProviderUuid("e2e-host_NUMA0_PAGE_4KB"), "0bc7a8d4-fcdb-580c-ab48-449ec7c5a3b6");
  EXPECT_EQ(ProviderUuid("e2e-host_0000:3B:00.0"), "bca219ae-82d3-5efa-9e2d-e0e6c67c3fe4");
}

TEST(PlacementParseUuid, RoundTripsAndRejects) {
  const auto parsed = ParseUuid("0102DCB9-F457-5456-A113-77A7F45BF491");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(UuidText(*parsed), "0102dcb9-f457-5456-a113-77a7f45bf491");
  EXPECT_FALSE(ParseUuid("0102dcb9f4575456a11377a7f45bf491").has_value());
  EXPECT_FALSE(ParseUuid("0102dcb9-f457-5456-a113-77a7f45bf49g").has_value());
  EXPECT_FALSE(ParseUuid("").has_value());
}

}  // namespace
}  // namespace topologyd::placement
