// The documented examples that need no daemon or cluster run as written and print what the
// docs say they print, so the docs cannot drift from the programs. An example is a ```console
// block in docs/cli.md or docs/configuration.md: lines starting "$ " are commands, run from the
// source tree with topoctl and topologyd of this build first on PATH; the lines after each,
// up to the next command, are its stdout and stderr as a terminal shows them.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

struct Example {
  std::string doc;
  int line = 0;  // of the command, for the failure message
  std::string command;
  std::string output;
};

std::vector<Example> ExamplesIn(const std::string& doc) {
  std::ifstream in(std::string(TOPOLOGYD_SOURCE_DIR) + "/" + doc);
  EXPECT_TRUE(in.good()) << doc;
  std::vector<Example> examples;
  bool in_console = false;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!in_console) {
      in_console = text == "```console";
      continue;
    }
    if (text == "```") {
      in_console = false;
    } else if (text.starts_with("$ ")) {
      examples.push_back({doc, line, text.substr(2), ""});
    } else if (!examples.empty()) {
      examples.back().output += text + "\n";
    }
  }
  return examples;
}

// What a terminal shows: stdout and stderr in the order written.
std::string RunAsWritten(const std::string& command) {
  const std::string path = std::string(TOPOLOGYD_BINARY_DIR) +
                           "/tools/topoctl:" + TOPOLOGYD_BINARY_DIR + "/daemon:/usr/bin:/bin";
  CommandResult r = RunCommand({"/bin/sh", "-c",
                                "cd '" + std::string(TOPOLOGYD_SOURCE_DIR) + "' && PATH='" + path +
                                    "' " + command + " 2>&1"});
  return r.out;
}

class DocsExamplesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DocsExamplesTest, EveryConsoleExamplePrintsWhatTheDocsSay) {
  const std::vector<Example> examples = ExamplesIn(GetParam());
  ASSERT_FALSE(examples.empty()) << GetParam() << " shows no console examples";
  for (const Example& e : examples) {
    EXPECT_EQ(RunAsWritten(e.command), e.output) << e.doc << ":" << e.line << ": $ " << e.command;
  }
}

INSTANTIATE_TEST_SUITE_P(Docs, DocsExamplesTest,
                         ::testing::Values("docs/cli.md", "docs/configuration.md"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return std::filesystem::path(param.param).stem().string();
                         });

}  // namespace
}  // namespace topologyd::testing
