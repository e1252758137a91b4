// `topoctl placement tree|sync`: the OpenStack Placement resource-provider tree topologyd
// would publish for this node (docs/placement.md), and its sync into a Placement service
// (docs/cli.md, `placement`). The machine comes from --input FILE.xml or, without it, from the
// daemon (GetTopology); reservations and device pools from --config FILE (none without it);
// the Placement-only settings from that file's `placement` block, each overridden by its flag
// (--node-name, --shared-cpus, ...).
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"

#include "lib/config/config_loader.h"
#include "lib/placement/mapping.h"
#include "lib/placement/node_offer_config.h"
#include "lib/placement/placement_http.h"
#include "lib/placement/placement_target.h"
#include "lib/placement/sync.h"
#include "lib/placement/tree_json.h"
#include "lib/rpc/topology_proto.h"
#include "lib/topology/hwloc_source.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_machine.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

namespace placement = ::topologyd::placement;
namespace topo = ::topologyd::topology;

struct TreeFlags {
  MachineFlags machine;
  std::string config;
  std::string node_name;
  std::string root_provider_uuid;
  std::string shared_cpus;
  std::optional<double> vcpu_allocation_ratio;
  std::optional<uint64_t> base_page_kib;
};

struct SyncFlags {
  std::string endpoint;
  std::string token;
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
  bool dry_run = false;
};

// Where and how a sync connects, the flags completed from --config and the files read.
struct SyncEndpoint {
  std::string url;
  std::string token;
  topologyd::curl_easy::TlsOptions tls;
};

int PlacementFail(const std::string& message, int code = kExitRefused) {
  std::cerr << "topoctl: placement: " << message << "\n";
  return code;
}

// BuildProviderTree() names a bad setting "placement <key>"; a flag's value is named by its
// flag, a value from --config by its key there.
std::string NameTheSetting(const std::string& message, const TreeFlags& flags) {
  const std::pair<const char*, bool> settings[] = {
      {"nodeName", !flags.node_name.empty()},
      {"rootProviderUUID", !flags.root_provider_uuid.empty()},
      {"vcpuAllocationRatio", flags.vcpu_allocation_ratio.has_value()},
      {"basePageKiB", flags.base_page_kib.has_value()}};
  const char* const flag_names[] = {"--node-name", "--root-provider-uuid",
                                    "--vcpu-allocation-ratio", "--base-page-kib"};
  for (size_t i = 0; i < std::size(settings); ++i) {
    const std::string prefix = std::string("placement ") + settings[i].first + ":";
    if (!message.starts_with(prefix)) continue;
    const std::string rest = message.substr(prefix.size() - 1);  // ": what is wrong"
    if (settings[i].second) return flag_names[i] + rest;
    if (!flags.config.empty()) return flags.config + ": placement." + settings[i].first + rest;
  }
  return message;
}

absl::StatusOr<topo::Topology> LoadMachine(const TreeFlags& flags, const GlobalOptions& g) {
  if (flags.machine.given()) return topo::LoadTopology(flags.machine.Source());
  auto stub = ConnectToDaemon(g.socket);
  topologyd::v1::GetTopologyResponse response;
  grpc::Status s = stub->GetTopology(CallContext().get(), {}, &response);
  if (!s.ok()) {
    ReportRpcError("placement", s, g.socket);
    return absl::UnavailableError("");
  }
  return topologyd::rpc::TopologyFromProto(response.topology());
}

// The desired tree; on failure the reason has been printed and `exit_code` says whose fault it
// is: a flag's value is bad usage, the rest a refused input.
absl::StatusOr<placement::ProviderTree> DesiredTree(const TreeFlags& flags, const GlobalOptions& g,
                                                    int& exit_code) {
  exit_code = kExitRefused;
  topologyd::config::Config config;
  if (!flags.config.empty()) {
    absl::StatusOr<topologyd::config::Config> loaded =
        topologyd::config::LoadConfigFile(flags.config);
    if (!loaded.ok()) {
      PlacementFail(std::string(loaded.status().message()));
      return loaded.status();
    }
    config = *std::move(loaded);
  }
  absl::StatusOr<topo::Topology> machine = LoadMachine(flags, g);
  if (!machine.ok()) {
    if (!machine.status().message().empty()) PlacementFail(std::string(machine.status().message()));
    return machine.status();
  }
  absl::StatusOr<placement::NodeOffer> offer = placement::NodeOfferFromConfig(config, *machine);
  if (!offer.ok()) {
    PlacementFail((flags.config.empty() ? "" : flags.config + ": ") +
                  std::string(offer.status().message()));
    return offer.status();
  }
  placement::PlacementOptions options;
  if (config.placement) {
    absl::StatusOr<placement::PlacementOptions> configured =
        placement::PlacementOptionsFromConfig(*config.placement);
    if (!configured.ok()) {
      PlacementFail(flags.config + ": " + std::string(configured.status().message()));
      return configured.status();
    }
    options = *std::move(configured);
  } else {
    options.node_name = placement::HostName();
  }
  if (!flags.node_name.empty()) options.node_name = flags.node_name;
  if (!flags.root_provider_uuid.empty()) options.root_provider_uuid = flags.root_provider_uuid;
  if (!flags.shared_cpus.empty()) {
    absl::StatusOr<topologyd::CpuSet> shared = topologyd::CpuSet::Parse(flags.shared_cpus);
    if (!shared.ok()) {
      exit_code =
          PlacementFail("--shared-cpus: " + std::string(shared.status().message()), kExitUsage);
      return shared.status();
    }
    options.shared_cpus = *shared;
  }
  if (flags.vcpu_allocation_ratio) options.vcpu_allocation_ratio = *flags.vcpu_allocation_ratio;
  if (flags.base_page_kib) options.base_page_kib = *flags.base_page_kib;
  absl::StatusOr<placement::ProviderTree> tree =
      placement::BuildProviderTree(*machine, *offer, options);
  if (!tree.ok()) {
    const std::string named = NameTheSetting(std::string(tree.status().message()), flags);
    exit_code = PlacementFail(named, named.starts_with("--") ? kExitUsage : kExitRefused);
  }
  return tree;
}

void PrintTreeTable(const placement::ProviderTree& tree) {
  std::vector<std::vector<std::string>> rows;
  for (const placement::Provider& p : tree.providers) {
    std::string parent = "-";
    if (p.parent_uuid) {
      const placement::Provider* found = tree.FindByUuid(*p.parent_uuid);
      parent = found ? found->name : *p.parent_uuid;
    }
    std::string traits;
    for (const std::string& t : p.traits) traits += (traits.empty() ? "" : ",") + t;
    if (traits.empty()) traits = "-";
    if (p.inventories.empty()) {
      rows.push_back({p.name, p.uuid, parent, "-", traits});
      continue;
    }
    bool first = true;
    for (const auto& [rc, inv] : p.inventories) {
      rows.push_back({first ? p.name : "", first ? p.uuid : "", first ? parent : "",
                      placement::InventoryText(rc, inv), first ? traits : ""});
      first = false;
    }
  }
  std::cout << RenderTable({"PROVIDER", "UUID", "PARENT", "INVENTORY", "TRAITS"}, rows);
}

int RunTree(const TreeFlags& flags, const GlobalOptions& g) {
  int exit_code = kExitOk;
  absl::StatusOr<placement::ProviderTree> tree = DesiredTree(flags, g, exit_code);
  if (!tree.ok()) return exit_code;
  if (g.format() == OutputFormat::kTable) {
    PrintTreeTable(*tree);
  } else {
    PrintDocument(placement::TreeToJson(*tree), g.format());
  }
  return kExitOk;
}

// --endpoint, --token and the TLS files, else the `placement` block of --config; the token
// and PEM files read now.
constexpr char kNoEndpoint[] =
    "--endpoint is required (or a --config file with placement.endpoint); e.g. --endpoint "
    "http://127.0.0.1:8778";

absl::StatusOr<SyncEndpoint> Endpoint(const TreeFlags& flags, const SyncFlags& sync) {
  topologyd::config::PlacementConfig files;
  if (!flags.config.empty()) {
    absl::StatusOr<topologyd::config::Config> loaded =
        topologyd::config::LoadConfigFile(flags.config);
    if (!loaded.ok()) return loaded.status();
    if (loaded->placement) files = *loaded->placement;
  }
  SyncEndpoint endpoint{.url = sync.endpoint.empty() ? files.endpoint : sync.endpoint,
                        .token = sync.token,
                        .tls = {}};
  if (endpoint.url.empty()) return absl::InvalidArgumentError(kNoEndpoint);
  if (endpoint.token.empty() && !files.token_file.empty()) {
    absl::StatusOr<std::string> token = placement::ReadTokenFile(files.token_file);
    if (!token.ok()) return token.status();
    endpoint.token = *std::move(token);
  }
  if (!sync.ca_file.empty()) files.ca_file = sync.ca_file;
  if (!sync.client_cert_file.empty() || !sync.client_key_file.empty()) {
    files.client_cert_file = sync.client_cert_file;
    files.client_key_file = sync.client_key_file;
  }
  absl::StatusOr<topologyd::curl_easy::TlsOptions> tls = placement::ReadTlsFiles(files);
  if (!tls.ok()) return tls.status();
  endpoint.tls = *std::move(tls);
  return endpoint;
}

int RunSync(const TreeFlags& flags, const SyncFlags& sync_flags, const GlobalOptions& g) {
  absl::StatusOr<SyncEndpoint> endpoint = Endpoint(flags, sync_flags);
  if (!endpoint.ok()) {
    const std::string message(endpoint.status().message());
    return PlacementFail(message, message == kNoEndpoint ? kExitUsage : kExitRefused);
  }
  absl::StatusOr<placement::CurlPlacementTransport> transport =
      placement::CurlPlacementTransport::Create(
          {.url = endpoint->url, .token = endpoint->token, .tls = endpoint->tls});
  if (!transport.ok()) return PlacementFail(std::string(transport.status().message()));
  int exit_code = kExitOk;
  absl::StatusOr<placement::ProviderTree> tree = DesiredTree(flags, g, exit_code);
  if (!tree.ok()) return exit_code;
  placement::SyncOptions options;
  options.dry_run = sync_flags.dry_run;
  options.wait_before_retry = placement::JitteredRetryWait;
  absl::StatusOr<placement::SyncReport> report =
      placement::SyncProviderTree(*transport, *tree, options);
  if (!report.ok()) return PlacementFail(std::string(report.status().message()));

  nlohmann::json planned = nlohmann::json::array();
  for (const placement::PlannedCall& c : report->plan.calls) {
    planned.push_back(placement::DescribeCall(c));
  }
  const nlohmann::json doc = {{"endpoint", endpoint->url},
                              {"microversion", report->microversion},
                              {"dry_run", sync_flags.dry_run},
                              {"root_provider_uuid", tree->root().uuid},
                              {"planned", planned},
                              {"done", report->done},
                              {"kept", report->kept},
                              {"errors", report->errors},
                              {"conflicts", report->conflicts}};
  PrintResult(doc, g.format(), [&](const nlohmann::json&) {
    std::cout << "Placement " << endpoint->url << ", microversion " << report->microversion
              << ", root " << tree->root().name << " (" << tree->root().uuid << ")\n";
    if (report->plan.calls.empty()) std::cout << "In sync: nothing to write.\n";
    if (sync_flags.dry_run && !report->plan.calls.empty()) {
      std::cout << "Planned (" << report->plan.calls.size() << "):\n";
      for (const auto& c : report->plan.calls) {
        std::cout << "  " << placement::DescribeCall(c) << "\n";
      }
    }
    if (!sync_flags.dry_run && !report->done.empty()) {
      std::cout << "Done (" << report->done.size() << "):\n";
      for (const std::string& d : report->done) std::cout << "  " << d << "\n";
    }
    if (report->conflicts > 0) {
      std::cout << "Generation conflicts retried: " << report->conflicts << "\n";
    }
    for (const std::string& k : report->kept) std::cout << "Kept: " << k << "\n";
  });
  for (const std::string& e : report->errors) std::cerr << "topoctl: placement sync: " << e << "\n";
  return report->ok() ? kExitOk : kExitRefused;
}

void AddTreeFlags(CLI::App* cmd, TreeFlags* flags) {
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NON-EMPTY");
  AddMachineFlags(cmd, &flags->machine, "of the node instead of the daemon's");
  cmd->add_option("--config", flags->config,
                  "topologyd config file: reserved CPUs and memory, CPU policy, device pools")
      ->check(non_empty);
  cmd->add_option("--node-name", flags->node_name,
                  "root provider name, prefix of the others (default: placement.nodeName of "
                  "--config, else the host name)")
      ->check(non_empty);
  cmd->add_option("--root-provider-uuid", flags->root_provider_uuid,
                  "uuid of the root provider (default: derived from the node name)");
  cmd->add_option("--shared-cpus", flags->shared_cpus,
                  "CPUs reported as VCPU (the others are PCPU), e.g. 0-5,32-35");
  cmd->add_option("--vcpu-allocation-ratio", flags->vcpu_allocation_ratio,
                  "allocation_ratio of VCPU (default 1)");
  cmd->add_option("--base-page-kib", flags->base_page_kib,
                  "the kernel's base page size in KiB (default 4; 64 on POWER and 64K-page ARM "
                  "kernels)");
}

void InstallPlacement(CLI::App& root, CommandContext& context) {
  CLI::App* command =
      root.add_subcommand("placement", "the OpenStack Placement provider tree of this node");
  command->require_subcommand(1);

  auto tree_flags = std::make_shared<TreeFlags>();
  CLI::App* tree = command->add_subcommand(
      "tree", "show the resource-provider tree topologyd would publish, without publishing it");
  AddTreeFlags(tree, tree_flags.get());
  tree->callback([tree_flags, &context] {
    context.action = [tree_flags, &context] { return RunTree(*tree_flags, *context.globals); };
  });

  auto sync_tree_flags = std::make_shared<TreeFlags>();
  auto sync_flags = std::make_shared<SyncFlags>();
  CLI::App* sync = command->add_subcommand(
      "sync", "create or update the tree in a Placement service; delete what is no longer wanted");
  AddTreeFlags(sync, sync_tree_flags.get());
  sync->add_option("--endpoint", sync_flags->endpoint,
                   "Placement base URL, e.g. http://127.0.0.1:8778 (default: placement.endpoint "
                   "of --config)");
  sync->add_option("--token", sync_flags->token,
                   "Keystone token sent as X-Auth-Token (default: placement.tokenFile's)");
  sync->add_option("--ca-file", sync_flags->ca_file,
                   "PEM file of the CAs to trust for an https endpoint, instead of the system's "
                   "(default: placement.caFile)");
  CLI::Option* client_cert =
      sync->add_option("--client-cert", sync_flags->client_cert_file,
                       "PEM client certificate for TLS (default: placement.clientCertFile)");
  CLI::Option* client_key =
      sync->add_option("--client-key", sync_flags->client_key_file,
                       "PEM key of --client-cert (default: placement.clientKeyFile)");
  client_cert->needs(client_key);
  client_key->needs(client_cert);
  sync->add_flag("--dry-run", sync_flags->dry_run, "print the planned calls and change nothing");
  sync->callback([sync_tree_flags, sync_flags, &context] {
    context.action = [sync_tree_flags, sync_flags, &context] {
      return RunSync(*sync_tree_flags, *sync_flags, *context.globals);
    };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallPlacement);

}  // namespace
}  // namespace topoctl
