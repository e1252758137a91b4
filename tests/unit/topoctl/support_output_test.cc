#include "tools/topoctl/support_output.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace topoctl {
namespace {

// A container name from a manifest may hold any bytes; nlohmann's dump() throws on them.
const nlohmann::json kBadUtf8 = {{"containers", {{{"name", "c\xff"}}}}, {"admitted", true}};

TEST(SupportOutputTest, IdListJoinsWithCommas) {
  EXPECT_EQ(IdList({}), "");
  EXPECT_EQ(IdList({4}), "4");
  EXPECT_EQ(IdList({0, 2, 3}), "0,2,3");
}

TEST(SupportOutputTest, JsonTextReplacesInvalidUtf8) {
  std::string text;
  ASSERT_NO_THROW(text = JsonText(kBadUtf8));
  EXPECT_EQ(text, "{\"admitted\":true,\"containers\":[{\"name\":\"c\xef\xbf\xbd\"}]}");
}

TEST(SupportOutputTest, RenderedJsonIsValidAndKeepsTheRest) {
  std::string text;
  ASSERT_NO_THROW(text = RenderDocument(kBadUtf8, OutputFormat::kJson));
  const nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["containers"][0]["name"], "c\xef\xbf\xbd");
  EXPECT_EQ(back["admitted"], true);
  EXPECT_NE(text.find('\n'), std::string::npos);  // pretty-printed
}

TEST(SupportOutputTest, RenderedYamlDoesNotThrow) {
  std::string text;
  ASSERT_NO_THROW(text = RenderDocument(kBadUtf8, OutputFormat::kYaml));
  EXPECT_NE(text.find("admitted: true"), std::string::npos) << text;
}

}  // namespace
}  // namespace topoctl
