#include "shim/shim_config.h"

#include <exception>

#include "fmt/format.h"

#include "lib/config/config_loader.h"
#include "lib/config/yaml_map_reader.h"

namespace topologyd::shim {
namespace {

constexpr std::string_view kUnixScheme = "unix://";

std::string WithoutScheme(const std::string& endpoint) {
  return endpoint.starts_with(kUnixScheme) ? endpoint.substr(kUnixScheme.size()) : endpoint;
}

// A socket option must be "unix://" and an absolute path: the shim only speaks to local
// sockets, and a relative path would depend on the directory systemd starts it in.
void CheckUnixEndpoint(config::MapReader& r, const std::string& key, const std::string& value,
                       bool scheme_required) {
  const bool has_scheme = value.starts_with(kUnixScheme);
  const std::string path = WithoutScheme(value);
  if ((scheme_required && !has_scheme) || !path.starts_with('/')) {
    r.problems()->Add(r.Get(key), r.KeyPath(key),
                      fmt::format("expected {}an absolute socket path, got \"{}\"",
                                  scheme_required ? "unix:// and " : "", value));
  }
}

void ReadRoot(config::MapReader& r, ShimConfig* c) {
  r.String("listen", &c->listen);
  CheckUnixEndpoint(r, "listen", c->listen, true);
  std::string mode;
  if (r.Scalar("socketMode", &mode)) {
    uint32_t value = 0;
    auto [ptr, ec] = std::from_chars(mode.data(), mode.data() + mode.size(), value, 8);
    if (ec != std::errc() || ptr != mode.data() + mode.size() || value > 0777) {
      r.problems()->Add(r.Get("socketMode"), "socketMode",
                        "expected an octal file mode such as \"0660\"");
    } else {
      c->socket_mode = value;
    }
  }
  r.String("runtimeEndpoint", &c->runtime_endpoint);
  CheckUnixEndpoint(r, "runtimeEndpoint", c->runtime_endpoint, true);
  r.String("topologydSocket", &c->topologyd_socket);
  CheckUnixEndpoint(r, "topologydSocket", c->topologyd_socket, false);
  r.Duration("topologydTimeout", &c->topologyd_timeout);
  std::string policy(ToString(c->failure_policy));
  r.String("failurePolicy", &policy, {"Fail", "Ignore"});
  c->failure_policy = policy == "Ignore" ? FailurePolicy::kIgnore : FailurePolicy::kFail;
  r.Integer("maxMessageBytes", &c->max_message_bytes);
  if (c->max_message_bytes < (4 << 20)) {
    r.problems()->Add(r.Get("maxMessageBytes"), "maxMessageBytes",
                      "must be at least 4194304 (gRPC's default; kubelet uses 16 MiB)");
  }
  r.Nested("cgroup", [&](config::MapReader& g) {
    std::string driver(cgroup::ToString(c->cgroup_driver));
    g.String("driver", &driver, {"cgroupfs", "systemd"});
    c->cgroup_driver =
        driver == "systemd" ? cgroup::CgroupDriver::kSystemd : cgroup::CgroupDriver::kCgroupfs;
    std::string runtime(cgroup::ToString(c->runtime));
    g.String("runtime", &runtime, {"containerd", "cri-o"});
    c->runtime = runtime == "cri-o" ? cgroup::Runtime::kCrio : cgroup::Runtime::kContainerd;
    g.Path("root", &c->cgroup_root);
    if (!c->cgroup_root.starts_with('/')) {
      g.problems()->Add(g.Get("root"), g.KeyPath("root"),
                        fmt::format("expected an absolute path, got \"{}\"", c->cgroup_root));
    }
    std::string version = "auto";
    g.String("version", &version, {"auto", "v1", "v2"});
    if (absl::StatusOr<cgroup::CgroupVersionSetting> parsed =
            cgroup::ParseCgroupVersionSetting(version);
        parsed.ok()) {
      c->cgroup_version = *parsed;
    }
  });
  r.Nested("podSpec", [&](config::MapReader& p) {
    YAML::Node sources = p.Get("sources");
    if (sources.IsDefined() && !sources.IsNull()) {
      if (!sources.IsSequence() || sources.size() == 0) {
        p.problems()->Add(sources, p.KeyPath("sources"),
                          "expected a non-empty list of apiServer, annotation, estimate");
      } else {
        c->pod_spec.sources.clear();
        for (size_t i = 0; i < sources.size(); ++i) {
          const std::string name = sources[i].IsScalar() ? sources[i].Scalar() : "";
          std::optional<PodSpecSource> source;
          if (name == "apiServer") source = PodSpecSource::kApiServer;
          if (name == "annotation") source = PodSpecSource::kAnnotation;
          if (name == "estimate") source = PodSpecSource::kEstimate;
          if (!source) {
            p.problems()->Add(sources[i], fmt::format("{}[{}]", p.KeyPath("sources"), i),
                              "expected apiServer, annotation or estimate");
          } else if (std::find(c->pod_spec.sources.begin(), c->pod_spec.sources.end(), *source) !=
                     c->pod_spec.sources.end()) {
            p.problems()->Add(sources[i], fmt::format("{}[{}]", p.KeyPath("sources"), i),
                              fmt::format("{} is listed twice", name));
          } else {
            c->pod_spec.sources.push_back(*source);
          }
        }
      }
    }
    p.String("kubeconfig", &c->pod_spec.kubeconfig);
    p.Duration("apiServerTimeout", &c->pod_spec.api_server_timeout);
  });
  r.Nested("resync", [&](config::MapReader& s) {
    s.Duration("period", &c->resync.period);
    s.Bool("releaseOrphans", &c->resync.release_orphans);
  });
  r.Nested("log", [&](config::MapReader& l) {
    l.String("level", &c->log.level,
             {"trace", "debug", "info", "warn", "error", "critical", "off"});
    l.String("format", &c->log.format, {"text", "json"});
  });
}

}  // namespace

std::string_view ToString(FailurePolicy policy) {
  return policy == FailurePolicy::kIgnore ? "Ignore" : "Fail";
}

std::string_view ToString(PodSpecSource source) {
  switch (source) {
    case PodSpecSource::kApiServer:
      return "apiServer";
    case PodSpecSource::kAnnotation:
      return "annotation";
    case PodSpecSource::kEstimate:
      return "estimate";
  }
  return "?";
}

std::string ShimConfig::ListenPath() const { return WithoutScheme(listen); }
std::string ShimConfig::RuntimePath() const { return WithoutScheme(runtime_endpoint); }

absl::StatusOr<ShimConfig> ParseShimConfig(std::string_view yaml_text,
                                           const std::string& file_name) {
  absl::StatusOr<YAML::Node> root = config::LoadConfigDocument(std::string(yaml_text), file_name);
  if (!root.ok()) return root.status();
  ShimConfig shim;
  shim.source_file = file_name;
  if (root->IsNull()) return shim;
  if (!root->IsMap()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: the configuration must be a YAML mapping of keys to values", file_name,
                    root->Mark().line + 1));
  }
  config::Problems problems(file_name);
  try {
    config::MapReader reader(*root, "", &problems);
    ReadRoot(reader, &shim);
    reader.Finish();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot read the configuration: {}", file_name, e.what()));
  }
  const bool wants_api = std::find(shim.pod_spec.sources.begin(), shim.pod_spec.sources.end(),
                                   PodSpecSource::kApiServer) != shim.pod_spec.sources.end();
  if (wants_api && shim.pod_spec.kubeconfig.empty()) {
    problems.Add(YAML::Node(YAML::NodeType::Undefined), "podSpec.kubeconfig",
                 "the apiServer source needs a kubeconfig file or \"in-cluster\"");
  }
  if (!problems.empty()) return absl::InvalidArgumentError(problems.Joined());
  return ValidateShimConfig(std::move(shim));
}

absl::StatusOr<ShimConfig> ValidateShimConfig(ShimConfig config) {
  auto check = [](std::string_view name, const std::string& value, bool scheme) -> absl::Status {
    if ((scheme && !value.starts_with(kUnixScheme)) || !WithoutScheme(value).starts_with('/')) {
      return absl::InvalidArgumentError(
          fmt::format("{}: expected {}an absolute socket path, got \"{}\"", name,
                      scheme ? "unix:// and " : "", value));
    }
    return absl::OkStatus();
  };
  for (absl::Status s : {check("listen", config.listen, true),
                         check("runtimeEndpoint", config.runtime_endpoint, true),
                         check("topologydSocket", config.topologyd_socket, false)}) {
    if (!s.ok()) return s;
  }
  if (config.ListenPath() == config.RuntimePath() ||
      config.ListenPath() == WithoutScheme(config.topologyd_socket)) {
    return absl::InvalidArgumentError(fmt::format(
        "listen: {} is also the runtime's or topologyd's socket; the shim would call itself",
        config.listen));
  }
  return config;
}

absl::StatusOr<ShimConfig> LoadShimConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = config::ReadConfigFile(path);
  if (!text.ok()) return text.status();
  return ParseShimConfig(*text, path);
}

}  // namespace topologyd::shim
