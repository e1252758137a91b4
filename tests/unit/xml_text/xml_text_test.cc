#include "lib/xml_text/xml_text.h"

#include <string>

#include "gtest/gtest.h"

namespace topologyd {
namespace {

TEST(XmlEscapeTest, EscapesMarkupAndReplacesWhatXmlCannotCarry) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(XmlEscape("tab\there\nnl"), "tab\there\nnl");
  EXPECT_EQ(XmlEscape(std::string("nul\0bell\x07", 9)),
            "nul\xEF\xBF\xBD"
            "bell\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscape("caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80");        // well-formed UTF-8 stays
  EXPECT_EQ(XmlEscape("\xC3"), "\xEF\xBF\xBD");                  // truncated
  EXPECT_EQ(XmlEscape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(XmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBE"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFE
}

TEST(XmlEscapeTest, OneApostropheEntityForHtmlToo) {
  // The simulation's HTML report uses the same escaping: &apos; is valid HTML5 as well.
  EXPECT_EQ(XmlEscape("it's <b>"), "it&apos;s &lt;b&gt;");
}

}  // namespace
}  // namespace topologyd
