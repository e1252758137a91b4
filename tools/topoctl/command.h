// How topoctl subcommands plug in. Each cmd_<name>.cc defines one installer and registers
// it with TOPOCTL_REGISTER_COMMAND; main.cc builds the CLI from every registered installer,
// so a new command is a new file and nothing else.
//
// Exit codes (../docs/cli.md): 0 success, 1 the request was refused or failed (message on
// stderr), 2 bad usage.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace topoctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;
inline constexpr int kExitUsage = 2;

enum class OutputFormat { kTable, kJson, kYaml };

// Options shared by every command; filled in by CLI11 before any action runs.
struct GlobalOptions {
  std::string socket = "/run/topologyd/topologyd.sock";
  // table | json | yaml | svg | html, one of the selected command's formats; when -o is not
  // given, main() sets the command's default before its action runs.
  std::string output;
  OutputFormat format() const;
};

// What a command installer gets: the root app to add its subcommand to, the global options
// (valid only when the action runs), and a slot for the action to run when selected.
struct CommandContext {
  const GlobalOptions* globals = nullptr;
  std::function<int()> action;
  // The `-o` formats the selected command prints, its default first; a command that prints
  // others sets them in its callback, and main() refuses any other by name (bad usage).
  std::vector<std::string> formats = {"table", "json", "yaml"};
};

using CommandInstaller = std::function<void(CLI::App& root, CommandContext& context)>;

std::vector<CommandInstaller>& CommandInstallers();

struct CommandRegistration {
  explicit CommandRegistration(CommandInstaller installer) {
    CommandInstallers().push_back(std::move(installer));
  }
};

}  // namespace topoctl

#define TOPOCTL_REGISTER_COMMAND_CONCAT_INNER(a, b) a##b
#define TOPOCTL_REGISTER_COMMAND_CONCAT(a, b) TOPOCTL_REGISTER_COMMAND_CONCAT_INNER(a, b)
// Registers `installer` (a `void(CLI::App&, topoctl::CommandContext&)` callable). Numbered by
// __COUNTER__, not __LINE__: in a unity build two commands can register on the same line.
#define TOPOCTL_REGISTER_COMMAND(installer)                                    \
  static const ::topoctl::CommandRegistration TOPOCTL_REGISTER_COMMAND_CONCAT( \
      topoctl_command_registration_, __COUNTER__)(installer)
