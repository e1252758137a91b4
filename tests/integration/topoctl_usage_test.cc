// topoctl as a new user meets it, without a daemon: unknown commands and bad flag values are
// bad usage (exit 2) and say what to do, every error carries one prefix `topoctl: COMMAND:`,
// every offline machine is `--input` or `--synthetic`, output formats are refused by name, and
// unreadable inputs say why (docs/cli.md).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/integration/process.h"

namespace topologyd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kMachine[] = "pack:1 numa:2 core:4 pu:1";  // CPUs 0-3 and 4-7

CommandResult Topoctl(std::vector<std::string> args) {
  args.insert(args.begin(), TopoctlBinary());
  return RunCommand(args);
}

class TopoctlUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.File("config.yaml");
    WriteFile(config_, "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n");
    pod_ = dir_.File("pod.yaml");
    WriteFile(pod_,
              "metadata: {name: web, uid: u1}\n"
              "spec:\n"
              "  containers:\n"
              "  - name: app\n"
              "    resources: {limits: {cpu: \"2\", memory: 64Mi}}\n");
  }

  TempDir dir_{"topoctl-usage"};
  std::string config_;
  std::string pod_;
};

TEST_F(TopoctlUsageTest, AnUnknownCommandIsNamedWithTheNearestOne) {
  CommandResult r = Topoctl({"statsu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "topoctl: unknown command \"statsu\"; did you mean \"status\"? (see topoctl --help)\n");
  CommandResult far = Topoctl({"-o", "json", "frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.err, StartsWith("topoctl: unknown command \"frobnicate\" (see"));
}

TEST_F(TopoctlUsageTest, AnUnknownOrMissingNestedCommandIsNamedToo) {
  CommandResult tre = Topoctl({"placement", "tre", "--synthetic", kMachine});
  EXPECT_EQ(tre.exit_code, 2);
  EXPECT_EQ(tre.err,
            "topoctl: unknown command \"placement tre\"; did you mean \"placement tree\"? (see "
            "topoctl placement --help)\n");
  CommandResult bare = Topoctl({"placement"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_EQ(bare.err,
            "topoctl: placement: a command is needed: sync, tree (see topoctl placement --help)\n");
  CommandResult none = Topoctl({"-o", "json"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, StartsWith("topoctl: a command is needed: admit, allocate, "));
  // Help and the version are not refused for want of a command.
  EXPECT_EQ(Topoctl({"placement", "--help"}).exit_code, 0);
  EXPECT_EQ(Topoctl({"--version"}).exit_code, 0);
}

TEST_F(TopoctlUsageTest, BadFlagValuesAreBadUsage) {
  CommandResult turbo = Topoctl(
      {"take", "--synthetic", kMachine, "--available", "0-7", "--count", "2", "--option", "turbo"});
  EXPECT_EQ(turbo.exit_code, 2);
  EXPECT_THAT(turbo.err, StartsWith("topoctl: take: --option: "));
  CommandResult page = Topoctl(
      {"placement", "tree", "--synthetic", kMachine, "--base-page-kib", "12", "--node-name", "n1"});
  EXPECT_EQ(page.exit_code, 2);
  EXPECT_EQ(page.err, "topoctl: placement: --base-page-kib: 12 is not a power of two\n");
  CommandResult no_endpoint = Topoctl({"placement", "sync", "--synthetic", kMachine});
  EXPECT_EQ(no_endpoint.exit_code, 2);
  EXPECT_THAT(no_endpoint.err, StartsWith("topoctl: placement: --endpoint is required"));
  // A request that fails is exit 1: kubelet's refusal of too many CPUs.
  CommandResult many =
      Topoctl({"take", "--synthetic", kMachine, "--available", "0-3", "--count", "8"});
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_THAT(many.err, StartsWith("topoctl: take: "));
}

TEST_F(TopoctlUsageTest, EveryOfflineMachineIsInputOrSynthetic) {
  const std::string xml = dir_.File("machine.xml");
  WriteFile(xml, "not hwloc");
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"take", "--available", "1-7", "--count", "2"},
                                             {"explain", "-f", pod_, "--config", config_},
                                             {"allocations", "--config", config_},
                                             {"nrt", "--config", config_},
                                             {"simulate", pod_, "--config", config_},
                                             {"placement", "tree", "--node-name", "n1"},
                                             {"topology"}}) {
    std::vector<std::string> synthetic = command;
    synthetic.insert(synthetic.end(), {"--synthetic", kMachine});
    CommandResult r = Topoctl(synthetic);
    EXPECT_EQ(r.exit_code, 0) << command[0] << ": " << r.err;
    // --input reads an XML file: this one is not, so the error comes from reading it.
    std::vector<std::string> input = command;
    input.insert(input.end(), {"--input", xml});
    r = Topoctl(input);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.out;
    EXPECT_THAT(r.err, StartsWith("topoctl: " + command[0] + ": ")) << r.err;
    input.insert(input.end(), {"--synthetic", kMachine});
    EXPECT_EQ(Topoctl(input).exit_code, 2) << command[0] << ": both";
  }
  // --topology, the former name on take, explain and allocations, still works, unlisted.
  CommandResult old_name = Topoctl({"take", "--topology", xml, "--available", "0", "--count", "1"});
  EXPECT_EQ(old_name.exit_code, 1);
  EXPECT_THAT(old_name.err, HasSubstr(xml));
  EXPECT_THAT(Topoctl({"explain", "--help"}).out, Not(HasSubstr("--topology")));
}

TEST_F(TopoctlUsageTest, OutputFormatsAreRefusedByNameAndAcceptedBeforeTheCommand) {
  CommandResult table =
      Topoctl({"nrt", "-o", "table", "--synthetic", kMachine, "--config", config_});
  EXPECT_EQ(table.exit_code, 2);
  EXPECT_EQ(table.err, "topoctl: nrt: -o table is not supported here; nrt prints yaml or json\n");
  EXPECT_TRUE(table.out.empty());
  CommandResult svg =
      Topoctl({"-o", "svg", "take", "--synthetic", kMachine, "--available", "1-7", "--count", "1"});
  EXPECT_EQ(svg.exit_code, 2);
  EXPECT_THAT(svg.err, StartsWith("topoctl: take: -o svg is not supported here"));
  for (const std::vector<std::string>& order : std::vector<std::vector<std::string>>{
           {"-o", "html", "simulate", pod_, "--synthetic", kMachine, "--config", config_},
           {"simulate", pod_, "--synthetic", kMachine, "--config", config_, "-o", "html"}}) {
    CommandResult html = Topoctl(order);
    EXPECT_EQ(html.exit_code, 0) << html.err;
    EXPECT_THAT(html.out, StartsWith("<!DOCTYPE html>"));
  }
}

TEST_F(TopoctlUsageTest, MergePrintsWhatEveryCommandPrints) {
  const std::string request = dir_.File("hints.json");
  WriteFile(request, R"({"numa_nodes":[0,1],"policy":"restricted","providers":[]})");
  CommandResult json = Topoctl({"-o", "json", "merge", "--input", request});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // No provider has a preference: kubelet's merge answers every node, preferred.
  EXPECT_EQ(
      json.out,
      "{\n  \"admit\": true,\n  \"affinity\": [\n    0,\n    1\n  ],\n  \"preferred\": true\n}\n");
  CommandResult yaml = Topoctl({"-o", "yaml", "merge", "--input", request});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_EQ(yaml.out, "admit: true\naffinity:\n  - 0\n  - 1\npreferred: true\n");
}

TEST_F(TopoctlUsageTest, HelpListsCommandsInOrderAndEveryFormat) {
  CommandResult help = Topoctl({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("html"));
  EXPECT_THAT(help.out, HasSubstr("docs/cli.md"));
  const size_t admit = help.out.find("\n  admit ");
  const size_t take = help.out.find("\n  take ");
  const size_t topology = help.out.find("\n  topology ");
  ASSERT_NE(admit, std::string::npos);
  EXPECT_LT(admit, take);
  EXPECT_LT(take, topology);
}

TEST_F(TopoctlUsageTest, UnreadableInputsSayWhy) {
  CommandResult missing = Topoctl({"admit", "-f", dir_.File("nope.yaml")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "topoctl: admit: " + dir_.File("nope.yaml") +
                             ": cannot read: No such file or directory\n");
  CommandResult directory = Topoctl({"admit", "-f", dir_.path()});
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_THAT(directory.err, HasSubstr(": is a directory; give a file holding a Pod manifest"));
  // The same words from every command that reads a file.
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"merge", "--input", dir_.path()},
           {"replay", "--input-case", dir_.path()},
           {"explain", "-f", dir_.path(), "--synthetic", kMachine, "--config", config_}}) {
    CommandResult r = Topoctl(command);
    EXPECT_EQ(r.exit_code, 1) << command[0];
    EXPECT_THAT(r.err, StartsWith("topoctl: " + command[0] + ": " + dir_.path() +
                                  ": is a directory; give a file holding "))
        << r.err;
  }
  CommandResult empty = RunCommand({"/bin/sh", "-c", TopoctlBinary() + " admit -f - </dev/null"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_EQ(empty.err, "topoctl: admit: <stdin>: is empty; expected a Pod manifest\n");
}

}  // namespace
}  // namespace topologyd::testing
