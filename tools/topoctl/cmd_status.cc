// topoctl status: the daemon's version, uptime, configuration and last reload.
#include <ctime>
#include <iostream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"
#include "tools/topoctl/support_client.h"
#include "tools/topoctl/support_output.h"

namespace topoctl {
namespace {

double Seconds(const google::protobuf::Duration& d) { return d.seconds() + d.nanos() / 1e9; }

// RFC 3339 in UTC, e.g. "2026-11-27T15:04:05Z"; null when unset.
nlohmann::json TimeText(bool set, const google::protobuf::Timestamp& t) {
  if (!set) return nullptr;
  const std::time_t seconds = static_cast<std::time_t>(t.seconds());
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::json PlacementToJson(const topologyd::v1::PlacementSyncStatus& p) {
  return {{"endpoint", p.endpoint()},
          {"root_provider_name", p.root_provider_name()},
          {"root_provider_uuid", p.root_provider_uuid()},
          {"syncs", p.syncs()},
          {"failed_syncs", p.failed_syncs()},
          {"consecutive_failures", p.consecutive_failures()},
          {"last_sync_time", TimeText(p.has_last_sync_time(), p.last_sync_time())},
          {"last_trigger", p.last_trigger()},
          {"last_ok", p.last_ok()},
          {"last_error", p.last_error()},
          {"last_success_time", TimeText(p.has_last_success_time(), p.last_success_time())},
          {"microversion", p.microversion()},
          {"providers", p.providers()},
          {"providers_written", p.providers_written()},
          {"providers_deleted", p.providers_deleted()},
          {"providers_kept", p.providers_kept()}};
}

nlohmann::json NrtApiToJson(const topologyd::v1::NrtPublishStatus& n) {
  return {{"server", n.server()},
          {"node_name", n.node_name()},
          {"publishes", n.publishes()},
          {"failed_publishes", n.failed_publishes()},
          {"consecutive_failures", n.consecutive_failures()},
          {"last_attempt_time", TimeText(n.has_last_attempt_time(), n.last_attempt_time())},
          {"last_trigger", n.last_trigger()},
          {"last_ok", n.last_ok()},
          {"last_error", n.last_error()},
          {"last_success_time", TimeText(n.has_last_success_time(), n.last_success_time())},
          {"published_generation", n.published_generation()},
          {"last_delay_ms", n.last_delay_us() / 1000.0}};
}

nlohmann::json StatusToJson(const topologyd::v1::StatusResponse& r) {
  nlohmann::json doc = {
      {"version", r.version()},
      {"uptime_seconds", Seconds(r.uptime())},
      {"config_path", r.config_path()},
      {"socket", r.socket_path()},
      {"cpu_manager_policy", r.cpu_manager_policy()},
      {"topology_manager_policy", r.topology_manager_policy()},
      {"topology_manager_scope", r.topology_manager_scope()},
      {"memory_manager_policy", r.memory_manager_policy()},
      {"state_generation", r.state_generation()},
      {"admitted_pods", r.admitted_pods()},
      {"cgroup",
       {{"apply", r.cgroup().apply()},
        {"version", r.cgroup().version()},
        {"driver", r.cgroup().driver()},
        {"root", r.cgroup().root()},
        {"writes", r.cgroup().writes()},
        {"failed_writes", r.cgroup().failed_writes()},
        {"drift_repairs", r.cgroup().drift_repairs()},
        {"constrained", r.cgroup().constrained()}}},
      {"healthy", nullptr},
      {"problem", nullptr},
      {"checkpoint", nullptr},
      {"last_reload", nullptr},
      {"placement", nullptr},
      {"nrt_api_server", nullptr},
  };
  if (r.has_placement()) doc["placement"] = PlacementToJson(r.placement());
  if (r.has_nrt_api_server()) doc["nrt_api_server"] = NrtApiToJson(r.nrt_api_server());
  // A daemon older than these fields sends no checkpoint: its health is unknown, not bad.
  if (r.has_checkpoint()) {
    doc["healthy"] = r.healthy();
    doc["checkpoint"] = {{"path", r.checkpoint().path()},
                         {"durable_generation", r.checkpoint().durable_generation()},
                         {"writes", r.checkpoint().writes()},
                         {"failed_writes", r.checkpoint().failed_writes()},
                         {"last_batch", r.checkpoint().last_batch()},
                         {"last_error", r.checkpoint().last_error()},
                         {"write_running_seconds", nullptr}};
    if (r.checkpoint().has_write_running()) {
      doc["checkpoint"]["write_running_seconds"] = Seconds(r.checkpoint().write_running());
    }
    // A daemon that predates `problem` was unhealthy only for a failed write.
    doc["problem"] = !r.problem().empty() || r.healthy()
                         ? r.problem()
                         : "the state checkpoint cannot be written: " + r.checkpoint().last_error();
  }
  if (r.has_last_reload()) {
    const auto& lr = r.last_reload();
    doc["last_reload"] = {
        {"ok", lr.ok()},
        {"applied_keys",
         std::vector<std::string>(lr.applied_keys().begin(), lr.applied_keys().end())},
        {"refused_keys",
         std::vector<std::string>(lr.refused_keys().begin(), lr.refused_keys().end())},
        {"error", lr.error()},
        {"age_seconds", Seconds(lr.age())},
    };
  }
  return doc;
}

std::string HealthText(const nlohmann::json& doc) {
  if (doc["healthy"].is_null()) return "unknown (the daemon does not report it)";
  if (doc["healthy"].get<bool>()) return "ok";
  return "NOT ACKNOWLEDGING CHANGES: " + doc["problem"].get<std::string>();
}

std::string CheckpointText(const nlohmann::json& c) {
  if (c.is_null()) return "unknown";
  return c["path"].get<std::string>() + ": generation " +
         std::to_string(c["durable_generation"].get<uint64_t>()) + " on disk, " +
         std::to_string(c["writes"].get<uint64_t>()) + " writes (" +
         std::to_string(c["failed_writes"].get<uint64_t>()) + " failed)";
}

std::string ConstrainedText(uint64_t constrained) {
  if (constrained == 0) return "";
  return fmt::format("; {} container cgroup(s) run on less than their cpuset (see the log)",
                     constrained);
}

std::string PlacementText(const nlohmann::json& p) {
  if (p.is_null()) return "off";
  std::string text = p["endpoint"].get<std::string>();
  if (p["syncs"].get<uint64_t>() == 0) return text + ": first sync under way";
  text += fmt::format(", {} syncs ({} failed), last {} ({})", p["syncs"].get<uint64_t>(),
                      p["failed_syncs"].get<uint64_t>(), p["last_sync_time"].get<std::string>(),
                      p["last_trigger"].get<std::string>());
  if (!p["last_ok"].get<bool>()) return text + ": FAILED: " + p["last_error"].get<std::string>();
  return text + fmt::format(": ok, {} providers ({} written, {} deleted, {} kept)",
                            p["providers"].get<uint32_t>(), p["providers_written"].get<uint32_t>(),
                            p["providers_deleted"].get<uint32_t>(),
                            p["providers_kept"].get<uint32_t>());
}

std::string NrtApiText(const nlohmann::json& n) {
  if (n.is_null()) return "off";
  std::string text = n["server"].get<std::string>();
  if (n["last_attempt_time"].is_null()) return text + ": first apply under way";
  text +=
      fmt::format(", {} applies ({} failed), last {} ({})", n["publishes"].get<uint64_t>(),
                  n["failed_publishes"].get<uint64_t>(), n["last_attempt_time"].get<std::string>(),
                  n["last_trigger"].get<std::string>());
  if (!n["last_ok"].get<bool>()) return text + ": FAILED: " + n["last_error"].get<std::string>();
  return text + fmt::format(": ok, {} at generation {}", n["node_name"].get<std::string>(),
                            n["published_generation"].get<uint64_t>());
}

void PrintStatusTable(const nlohmann::json& doc) {
  std::vector<std::vector<std::string>> rows = {
      {"version", doc["version"]},
      {"uptime", std::to_string(static_cast<int64_t>(doc["uptime_seconds"].get<double>())) + "s"},
      {"config", doc["config_path"]},
      {"socket", doc["socket"]},
      {"cpu manager", doc["cpu_manager_policy"]},
      {"topology manager", doc["topology_manager_policy"].get<std::string>() + " (scope " +
                               doc["topology_manager_scope"].get<std::string>() + ")"},
      {"memory manager", doc["memory_manager_policy"]},
      {"admitted pods", std::to_string(doc["admitted_pods"].get<uint32_t>())},
      {"cgroup", doc["cgroup"]["driver"].get<std::string>() + " " +
                     doc["cgroup"]["version"].get<std::string>() + " at " +
                     doc["cgroup"]["root"].get<std::string>() +
                     (doc["cgroup"]["apply"].get<bool>() ? "" : " (dry run)") +
                     ConstrainedText(doc["cgroup"]["constrained"].get<uint64_t>())},
      {"health", HealthText(doc)},
      {"checkpoint", CheckpointText(doc["checkpoint"])},
  };
  const auto& lr = doc["last_reload"];
  if (lr.is_null()) {
    rows.push_back({"last reload", "none"});
  } else if (!lr["error"].get<std::string>().empty()) {
    rows.push_back({"last reload", "REJECTED: " + lr["error"].get<std::string>()});
  } else {
    std::string text = lr["ok"].get<bool>() ? "ok" : "partly refused";
    if (!lr["applied_keys"].empty()) text += "; applied: " + JsonText(lr["applied_keys"]);
    if (!lr["refused_keys"].empty()) {
      text += "; refused (restart needed): " + JsonText(lr["refused_keys"]);
    }
    rows.push_back({"last reload", text});
  }
  rows.push_back({"placement", PlacementText(doc["placement"])});
  rows.push_back({"nrt api server", NrtApiText(doc["nrt_api_server"])});
  std::cout << RenderTable({"FIELD", "VALUE"}, rows);
}

void InstallStatus(CLI::App& root, CommandContext& ctx) {
  CLI::App* cmd =
      root.add_subcommand("status", "show the daemon's version, uptime and configuration");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> int {
      const GlobalOptions& g = *ctx.globals;
      auto stub = ConnectToDaemon(g.socket);
      topologyd::v1::StatusResponse response;
      grpc::Status s = stub->Status(CallContext().get(), {}, &response);
      if (!s.ok()) return ReportRpcError("status", s, g.socket);
      nlohmann::json doc = StatusToJson(response);
      PrintResult(doc, g.format(), PrintStatusTable);
      return kExitOk;
    };
  });
}

TOPOCTL_REGISTER_COMMAND(InstallStatus);

}  // namespace
}  // namespace topoctl
