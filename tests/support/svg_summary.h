// What an SVG machine picture holds, read back with /usr/bin/python3's xml.etree
// (tests/support/svg_summary.py): the test that it parses as XML, and the elements to
// compare with the machine and the allocations.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/support/require_component.h"
#include "tests/support/shell.h"

namespace topologyd::testing {

inline bool HavePython() { return std::filesystem::exists("/usr/bin/python3"); }

// The summary of `svg` (see svg_summary.py), or null after adding a test failure when the
// document does not parse.
inline nlohmann::json SvgSummary(const std::string& svg) {
  char name[] = "/tmp/topologyd-test-svg-XXXXXX";
  const int fd = ::mkstemp(name);
  if (fd < 0) {
    ADD_FAILURE() << "mkstemp failed";
    return nullptr;
  }
  ::close(fd);
  std::ofstream(name) << svg;
  const ShellResult r = RunShell(
      "/usr/bin/python3 " +
      ShellQuote(std::string(TOPOLOGYD_SOURCE_DIR) + "/tests/support/svg_summary.py") + " " + name);
  ::unlink(name);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "the SVG does not parse: " << r.err;
    return nullptr;
  }
  return nlohmann::json::parse(r.out);
}

}  // namespace topologyd::testing

// Skips the current test when /usr/bin/python3 is missing.
#define TOPOLOGYD_REQUIRE_PYTHON()                                                  \
  do {                                                                              \
    if (!::topologyd::testing::HavePython()) {                                      \
      SKIP_OR_FAIL() << "/usr/bin/python3 not found: the SVG check parses with it"; \
    }                                                                               \
  } while (false)
