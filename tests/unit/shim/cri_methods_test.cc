#include "lib/shim/cri_methods.h"

#include <gtest/gtest.h>

namespace topologyd::shim {
namespace {

TEST(CriMethodsTest, TodaysRuntimeAndImageMethodsAreKnown) {
  EXPECT_TRUE(IsKnownCriMethod("/runtime.v1.RuntimeService/ListContainers"));
  EXPECT_TRUE(IsKnownCriMethod("/runtime.v1.RuntimeService/GetContainerEvents"));
  EXPECT_TRUE(IsKnownCriMethod("/runtime.v1.RuntimeService/StreamContainerStats"));
  EXPECT_TRUE(IsKnownCriMethod("/runtime.v1.ImageService/PullImage"));
}

TEST(CriMethodsTest, AnythingElseIsNot) {
  EXPECT_FALSE(IsKnownCriMethod("/runtime.v1.RuntimeService/SomethingNew"));
  EXPECT_FALSE(IsKnownCriMethod("/runtime.v1alpha2.RuntimeService/ListContainers"));
  EXPECT_FALSE(IsKnownCriMethod("/runtime.v1.ImageService/ListContainers"));
  EXPECT_FALSE(IsKnownCriMethod("/runtime.v1.RuntimeService/"));
  EXPECT_FALSE(IsKnownCriMethod("ListContainers"));
}

}  // namespace
}  // namespace topologyd::shim
