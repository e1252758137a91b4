// topoctl: the topologyd command-line client. Online commands talk to the daemon over its
// Unix socket; offline "what-if" commands run the same library code locally.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/common/nearest_name.h"
#include "lib/common/version.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_errors.h"

namespace topoctl {

std::vector<CommandInstaller>& CommandInstallers() {
  static std::vector<CommandInstaller> installers;
  return installers;
}

namespace {

// Commands register in link order, which a unity build shuffles; --help lists them by name.
class SortedCommandsFormatter : public CLI::Formatter {
 public:
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    std::vector<const CLI::App*> commands = app->get_subcommands(
        [](const CLI::App* c) { return !c->get_name().empty() && !c->get_group().empty(); });
    if (commands.empty()) return "";
    std::sort(commands.begin(), commands.end(),
              [](const CLI::App* a, const CLI::App* b) { return a->get_name() < b->get_name(); });
    std::string out = "\nCommands:\n";
    for (const CLI::App* c : commands) {
      out += mode == CLI::AppFormatMode::All ? c->help(c->get_name(), CLI::AppFormatMode::Sub)
                                             : make_subcommand(c);
    }
    return out;
  }
};

// Where the command starts: the first word that is neither a global flag nor a global flag's
// value; argc when there is none.
int CommandIndex(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--socket" || arg == "-o" || arg == "--output") {
      ++i;
    } else if (!arg.starts_with("-")) {
      return i;
    }
  }
  return argc;
}

// `topoctl statsu`, `topoctl placement tre`: name the words and the command they most likely
// meant, as kubectl does, instead of CLI11's "A subcommand is required". Each word is checked
// while the command so far has subcommands; a flag ends the check (CLI11 judges flags).
std::optional<int> RefuseUnknownCommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string typed;  // the known words so far, "placement"
  for (int i = CommandIndex(argc, argv); i < argc; ++i) {
    const std::string word = argv[i];
    if (word.starts_with("-")) return std::nullopt;
    std::vector<std::string> names;
    for (const CLI::App* c : at->get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(c->get_name());
    }
    if (names.empty()) return std::nullopt;  // its words are its own arguments
    const std::string prefix = typed.empty() ? "" : typed + " ";
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::string message = fmt::format("topoctl: unknown command \"{}{}\"", prefix, word);
      if (std::optional<std::string> near = topologyd::NearestName(word, names)) {
        message += fmt::format("; did you mean \"{}{}\"?", prefix, *near);
      }
      std::cerr << message << " (see topoctl " << prefix << "--help)\n";
      return kExitUsage;
    }
    at = at->get_subcommand(word);
    typed = prefix + word;
  }
  // `topoctl`, `topoctl state`: which commands it takes (unless help or the version is asked).
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") return std::nullopt;
  }
  std::vector<std::string> names;
  for (const CLI::App* c : at->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(c->get_name());
  }
  if (names.empty() || at->get_require_subcommand_min() == 0) return std::nullopt;
  std::sort(names.begin(), names.end());
  const std::string where = typed.empty() ? "" : typed + ": ";
  std::cerr << fmt::format("topoctl: {}a command is needed: {} (see topoctl {}--help)\n", where,
                           fmt::join(names, ", "), typed.empty() ? "" : typed + " ");
  return kExitUsage;
}

// "placement sync": the selected command as typed, nested names included.
std::string SelectedCommand(const CLI::App& app) {
  std::string name;
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    name += (name.empty() ? "" : " ") + at->get_name();
  }
  return name;
}

std::string FormatList(const std::vector<std::string>& formats) {
  std::string out;
  for (size_t i = 0; i < formats.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  }
  return out;
}

}  // namespace
}  // namespace topoctl

int main(int argc, char** argv) {
  topoctl::GlobalOptions globals;
  topoctl::CommandContext context;
  context.globals = &globals;

  CLI::App app{"topoctl: inspect and drive topologyd, or ask it what-if questions offline",
               "topoctl"};
  app.formatter(std::make_shared<topoctl::SortedCommandsFormatter>());
  app.footer("Documentation: docs/cli.md; topoctl COMMAND --help for a command's flags.");
  app.set_version_flag("--version", std::string("topoctl ") + topologyd::kVersion);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--socket", globals.socket, "daemon socket path")->capture_default_str();
  app.add_option("-o,--output", globals.output,
                 "output format: table (default), json, yaml; svg for topology and allocations, "
                 "html for simulate")
      ->check(CLI::IsMember({"table", "json", "yaml", "svg", "html"}));
  for (const auto& install : topoctl::CommandInstallers()) install(app, context);

  if (std::optional<int> code = topoctl::RefuseUnknownCommand(app, argc, argv)) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // --help and --version are successes; everything else CLI11 rejects is bad usage.
    return code == 0 ? topoctl::kExitOk : topoctl::kExitUsage;
  }
  if (!context.action) {
    std::cerr << "topoctl: no command given; see topoctl --help\n";
    return topoctl::kExitUsage;
  }
  const std::string command = topoctl::SelectedCommand(app);
  if (globals.output.empty()) {
    globals.output = context.formats.front();
  } else if (std::find(context.formats.begin(), context.formats.end(), globals.output) ==
             context.formats.end()) {
    return topoctl::Fail(command, topoctl::kExitUsage,
                         fmt::format("-o {} is not supported here; {} prints {}", globals.output,
                                     command, topoctl::FormatList(context.formats)));
  }
  return context.action();
}
