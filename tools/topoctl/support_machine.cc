#include "tools/topoctl/support_machine.h"

namespace topoctl {

topologyd::topology::TopologySource MachineFlags::Source() const {
  using topologyd::topology::TopologySource;
  return input.empty() ? TopologySource::Synthetic(synthetic) : TopologySource::Xml(input);
}

CLI::Option* AddMachineFlags(CLI::App* command, MachineFlags* flags, std::string_view of_what) {
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NON-EMPTY");
  const std::string suffix(of_what);
  CLI::Option* input =
      command->add_option("--input", flags->input, "offline: hwloc XML file " + suffix)
          ->check(non_empty);
  CLI::Option* synthetic = command
                               ->add_option("--synthetic", flags->synthetic,
                                            "offline: hwloc synthetic description " + suffix +
                                                ", e.g. \"pack:2 numa:4 core:8 pu:2\"")
                               ->check(non_empty);
  // The former name of --input on take, explain and allocations; kept for scripts, not listed.
  CLI::Option* old_name =
      command->add_option("--topology", flags->input, "the former name of --input")
          ->check(non_empty)
          ->group("");
  input->excludes(synthetic);
  old_name->excludes(synthetic);
  old_name->excludes(input);
  return input;
}

}  // namespace topoctl
