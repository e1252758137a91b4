#include "lib/config/config_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/config/duration.h"
#include "lib/config/listen_address.h"
#include "lib/config/placement_config.h"
#include "lib/config/pod_resources_config.h"
#include "lib/config/socket_keys.h"
#include "lib/config/yaml_documents.h"
#include "lib/config/yaml_map_reader.h"
#include "lib/pod/names.h"

namespace topologyd::config {
namespace {

void ReadHexId(MapReader& r, const std::string& key, std::optional<uint16_t>* out) {
  YAML::Node n = r.Get(key);
  if (!n.IsDefined() || n.IsNull()) return;
  std::string text = n.IsScalar() ? n.Scalar() : "";
  if (text.rfind("0x", 0) == 0) text = text.substr(2);
  uint16_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (!n.IsScalar() || text.empty() || text.size() > 4 || ec != std::errc() ||
      ptr != text.data() + text.size()) {
    r.problems()->Add(n, r.KeyPath(key), "expected a PCI id of up to 4 hex digits, e.g. \"10de\"");
    return;
  }
  *out = value;
}

void ReadTopology(MapReader& r, TopologySourceConfig* t) {
  std::string source = "live";
  r.String("source", &source, {"live", "xml", "synthetic"});
  // An empty `path` is an error with any source; only a stale non-empty one is let be.
  std::string path;
  r.Path("path", &path);
  if (source == "xml") {
    t->source = TopologySourceConfig::Kind::kXml;
    t->path = path;
    if (!r.Get("path").IsDefined())
      r.problems()->Add(r.Get("source"), r.KeyPath("path"), "required when source is xml");
  } else if (source == "synthetic") {
    t->source = TopologySourceConfig::Kind::kSynthetic;
    r.String("description", &t->description);
    if (t->description.empty()) {
      r.problems()->Add(r.Get("source"), r.KeyPath("description"),
                        "required when source is synthetic");
    }
  } else {
    t->source = TopologySourceConfig::Kind::kLive;
  }
  // Keys of the other sources are still known, so a stale `description` is not an error.
  r.Get("description");
}

void ReadLimits(MapReader& r, LimitsConfig* limits) {
  if (r.Integer("containersPerPod", &limits->containers_per_pod) &&
      limits->containers_per_pod == 0) {
    r.problems()->Add(r.Get("containersPerPod"), r.KeyPath("containersPerPod"),
                      "must be at least 1");
  }
  // Below 512 KiB a pod with the API server's 256 KiB of annotations may not fit; gRPC takes
  // the limit as an int.
  constexpr uint32_t kMinRequestBytes = 512 * 1024;
  constexpr uint32_t kMaxRequestBytes = std::numeric_limits<int32_t>::max();
  if (r.Integer("requestBytes", &limits->request_bytes) &&
      (limits->request_bytes < kMinRequestBytes || limits->request_bytes > kMaxRequestBytes)) {
    r.problems()->Add(r.Get("requestBytes"), r.KeyPath("requestBytes"),
                      fmt::format("must be {} to {}", kMinRequestBytes, kMaxRequestBytes));
  }
}

void ReadDevices(MapReader& r, std::vector<DevicePoolConfig>* pools) {
  r.SequenceOfMaps("devices", [&](MapReader& item, size_t) {
    DevicePoolConfig pool;
    item.String("resourceName", &pool.resource_name);
    if (pool.resource_name.empty()) {
      item.problems()->Add(item.Get("resourceName"), item.KeyPath("resourceName"), "required");
    }
    item.Nested("pci", [&](MapReader& pci) {
      DevicePciMatch match;
      ReadHexId(pci, "vendor", &match.vendor);
      ReadHexId(pci, "device", &match.device);
      ReadHexId(pci, "class", &match.class_id);
      pci.Bool("virtualFunctions", &match.virtual_functions);
      pool.pci = match;
    });
    item.SequenceOfMaps("devices", [&](MapReader& dev, size_t) {
      ExplicitDeviceConfig d;
      dev.String("id", &d.id);
      // -1 is how sysfs spells "no NUMA locality", the same as leaving numaNode out; other
      // negative values are typos, not a locality.
      int numa = -1;
      if (dev.Integer("numaNode", &numa) && numa < -1) {
        dev.problems()->Add(dev.Get("numaNode"), dev.KeyPath("numaNode"),
                            fmt::format("must be a NUMA node id (>= 0), or -1 for no NUMA "
                                        "locality; got {}",
                                        numa));
      }
      if (numa >= 0) d.numa_nodes.push_back(numa);
      // One spelling per device: with both, one would silently win over the other.
      if (dev.Get("numaNode").IsDefined() && dev.Get("numaNodes").IsDefined()) {
        dev.problems()->Add(dev.KeyNode("numaNodes"), dev.KeyPath("numaNodes"),
                            "set either numaNode or numaNodes, not both");
      }
      dev.IntegerList("numaNodes", &d.numa_nodes);
      pool.devices.push_back(d);
    });
    if (!pool.pci && pool.devices.empty()) {
      item.problems()->Add(item.Get("resourceName"), item.KeyPath("resourceName"),
                           "a device pool needs `pci` or `devices`");
    }
    // A pool is either matched on the machine or listed, never a mix of both.
    if (item.Get("pci").IsDefined() && item.Get("devices").IsDefined()) {
      item.problems()->Add(item.KeyNode("devices"), item.KeyPath("devices"),
                           "set either pci or devices, not both");
    }
    pools->push_back(pool);
  });
}

// `p` as the daemon will use it: relative paths are taken from `base`, the config file's
// directory (empty: left as written, for ParseConfig).
std::string ResolvePath(const std::filesystem::path& base, const std::string& p) {
  if (base.empty() || p.empty() || p[0] == '/') return p;
  return (base / p).lexically_normal().string();
}

void ReadRoot(MapReader& r, const std::filesystem::path& base, Config* c) {
  r.Path("listen", &c->listen);
  if (c->listen.rfind("unix://", 0) != 0 || c->listen.size() <= 7) {
    r.problems()->Add(
        r.Get("listen"), "listen",
        fmt::format("must be unix://PATH (e.g. unix:///run/topologyd/topologyd.sock), got {}",
                    QuoteForMessage(c->listen)));
  } else {
    // bind(2) takes the path in sun_path, NUL included; checked here so that --check-config
    // and a reload refuse what start-up would.
    const std::string socket = ResolvePath(base, c->SocketPath());
    constexpr size_t kSunPathSize = sizeof(sockaddr_un::sun_path);
    if (socket.size() >= kSunPathSize) {
      r.problems()->Add(r.Get("listen"), "listen",
                        fmt::format("socket path \"{}\" is {} bytes; a Unix socket path must be "
                                    "shorter than {} bytes",
                                    EscapeForMessage(socket), socket.size(), kSunPathSize));
    }
  }
  r.Nested("socket", [&](MapReader& s) { ReadSocketConfig(s, &c->socket); });
  r.Nested("allowedPeers", [&](MapReader& p) { ReadAllowedPeers(p, &c->allowed_peers); });
  r.Path("stateDir", &c->state_dir);
  r.Nested("topology", [&](MapReader& t) { ReadTopology(t, &c->topology); });

  r.String("cpuManagerPolicy", &c->cpu_manager_policy, {"none", "static"});
  r.StringMap("cpuManagerPolicyOptions", &c->cpu_manager_policy_options);
  // kubelet's names; other gates are refused rather than ignored, so a copied KubeletConfiguration
  // says which of its gates topologyd does not know.
  r.Nested("featureGates", [&](MapReader& g) {
    g.Bool("CPUManagerPolicyAlphaOptions", &c->feature_gates.cpu_manager_policy_alpha_options);
    g.Bool("CPUManagerPolicyBetaOptions", &c->feature_gates.cpu_manager_policy_beta_options);
    g.Bool("DisableCPUQuotaWithExclusiveCPUs",
           &c->feature_gates.disable_cpu_quota_with_exclusive_cpus);
  });
  std::string reserved;
  if (r.Scalar("reservedSystemCPUs", &reserved)) c->reserved_system_cpus = reserved;
  int count = 0;
  if (r.Integer("cpuReservedCount", &count)) {
    if (count < 0) {
      r.problems()->Add(r.Get("cpuReservedCount"), "cpuReservedCount", "must be >= 0");
    } else {
      c->cpu_reserved_count = count;
    }
  }
  if (c->reserved_system_cpus && c->cpu_reserved_count) {
    r.problems()->Add(r.Get("cpuReservedCount"), "cpuReservedCount",
                      "set either reservedSystemCPUs or cpuReservedCount, not both");
  }

  r.String("topologyManagerPolicy", &c->topology_manager_policy,
           {"none", "best-effort", "restricted", "single-numa-node"});
  r.String("topologyManagerScope", &c->topology_manager_scope, {"container", "pod"});
  r.StringMap("topologyManagerPolicyOptions", &c->topology_manager_policy_options);

  r.String("memoryManagerPolicy", &c->memory_manager_policy, {"None", "Static"});
  r.SequenceOfMaps("reservedMemory", [&](MapReader& item, size_t) {
    ReservedMemoryConfig m;
    item.Integer("numaNode", &m.numa_node);
    item.StringMap("limits", &m.limits);
    c->reserved_memory.push_back(m);
  });
  for (auto [key, out] : {std::pair{"kubeReserved", &c->kube_reserved},
                          std::pair{"systemReserved", &c->system_reserved},
                          std::pair{"evictionHard", &c->eviction_hard}}) {
    if (!r.Get(key).IsDefined()) continue;
    out->emplace();
    r.StringMap(key, &**out);
  }

  r.Bool("podPolicyOverride", &c->pod_policy_override);
  ReadDevices(r, &c->devices);
  r.Nested("cgroup", [&](MapReader& g) {
    g.Path("root", &c->cgroup.root);
    // The allowed spellings are checked here; the parsers then cannot fail.
    if (std::string driver; g.String("driver", &driver, {"systemd", "cgroupfs"}), !driver.empty()) {
      c->cgroup.driver = *cgroup::ParseCgroupDriver(driver);
    }
    if (std::string runtime;
        g.String("runtime", &runtime, {"containerd", "cri-o"}), !runtime.empty()) {
      c->cgroup.runtime = *cgroup::ParseRuntime(runtime);
    }
    g.String("version", &c->cgroup.version, {"auto", "v1", "v2"});
    g.Bool("apply", &c->cgroup.apply);
    g.Duration("releaseGracePeriod", &c->cgroup.release_grace);
  });
  r.Duration("reconcilePeriod", &c->reconcile_period);
  if (c->reconcile_period.count() <= 0) {
    r.problems()->Add(r.Get("reconcilePeriod"), "reconcilePeriod", "must be positive");
  }
  r.Nested("limits", [&](MapReader& l) { ReadLimits(l, &c->limits); });
  r.Nested("log", [&](MapReader& l) {
    l.String("level", &c->log.level,
             {"trace", "debug", "info", "warn", "error", "critical", "off"});
    l.String("format", &c->log.format, {"text", "json"});
  });
  r.Nested("podResources", [&](MapReader& p) {
    ReadPodResources(
        p, [&](const std::string& path) { return ResolvePath(base, path); },
        ResolvePath(base, c->SocketPath()), &c->pod_resources.emplace());
  });
  r.Nested("nrt", [&](MapReader& n) {
    n.Path("file", &c->nrt.file);
    if (!c->nrt.file.empty() &&
        std::filesystem::path(ResolvePath(base, c->nrt.file)).parent_path().lexically_normal() ==
            std::filesystem::path(ResolvePath(base, c->state_dir)).lexically_normal()) {
      // The state directory is the checkpoint's; a file there could replace it.
      n.problems()->Add(n.Get("file"), n.KeyPath("file"), "must not be in stateDir");
    }
    n.String("nodeName", &c->nrt.node_name);
    if (!c->nrt.node_name.empty() && !pod::IsDnsSubdomain(c->nrt.node_name)) {
      n.problems()->Add(n.Get("nodeName"), n.KeyPath("nodeName"),
                        "must be a Kubernetes node name (lower-case letters, digits, '-' and "
                        "'.', starting and ending with a letter or digit; at most 253)");
    }
    n.Nested("apiServer", [&](MapReader& a) {
      NrtApiServerConfig& api = c->nrt.api_server.emplace();
      a.String("kubeconfig", &api.kubeconfig);
      if (api.kubeconfig.empty()) {
        a.problems()->Add(a.Get("kubeconfig"), a.KeyPath("kubeconfig"),
                          "required: a kubeconfig file, or \"in-cluster\" for the pod's service "
                          "account");
      }
      a.Duration("resyncPeriod", &api.resync_period);
      if (api.resync_period.count() <= 0) {
        a.problems()->Add(a.Get("resyncPeriod"), a.KeyPath("resyncPeriod"), "must be positive");
      }
      a.Duration("timeout", &api.timeout);
      if (api.timeout.count() <= 0) {
        a.problems()->Add(a.Get("timeout"), a.KeyPath("timeout"), "must be positive");
      }
    });
  });
  r.Nested("metrics", [&](MapReader& m) {
    m.String("listen", &c->metrics.listen);
    if (absl::Status s = CheckListenAddress(c->metrics.listen); !s.ok()) {
      m.problems()->Add(m.Get("listen"), m.KeyPath("listen"), std::string(s.message()));
    }
  });
  r.Nested("placement", [&](MapReader& p) {
    ReadPlacement(
        p, [&](const std::string& path) { return ResolvePath(base, path); },
        &c->placement.emplace());
  });
}

}  // namespace

std::string Config::SocketPath() const {
  constexpr std::string_view kScheme = "unix://";
  return listen.rfind(kScheme, 0) == 0 ? listen.substr(kScheme.size()) : listen;
}

namespace {

absl::Status YamlProblem(const std::string& file_name, const yaml::YamlError& error) {
  if (error.mark.is_null()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", file_name, error.message));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}:{}: {}", file_name, error.mark.line + 1, error.message));
}

}  // namespace

// The file's one document (a Null node when it has none). A second document is an error, even
// an empty one: YAML::Load would read the first and drop the rest without a word.
absl::StatusOr<YAML::Node> LoadConfigDocument(const std::string& text,
                                              const std::string& file_name) {
  size_t documents = 0;
  YAML::Mark second;
  std::optional<yaml::YamlError> error =
      yaml::ReadYamlDocuments(text, nullptr, [&](const yaml::YamlDocument& document) {
        if (document.index == 1) second = document.root;
        ++documents;
        return true;
      });
  if (error) return YamlProblem(file_name, *error);
  if (documents > 1) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: the file holds {} YAML documents; topologyd reads one", file_name,
                    second.line + 1, documents));
  }
  YAML::Node root;
  error = yaml::LoadFirstYamlDocument(text, &root);
  if (error) return YamlProblem(file_name, *error);
  return root;
}

namespace {

// Every key's line, by its path as problems name it.
void RecordKeyLines(const YAML::Node& node, const std::string& prefix,
                    std::map<std::string, int>* lines) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string path = KeyPathOf(prefix, it->first.Scalar());
      lines->emplace(path, it->first.Mark().line + 1);
      RecordKeyLines(it->second, path, lines);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string path = fmt::format("{}[{}]", prefix, i);
      lines->emplace(path, node[i].Mark().line + 1);
      RecordKeyLines(node[i], path, lines);
    }
  }
}

// ParseConfig, with relative paths checked as resolved against `base` (see ResolvePath).
// Reads every key it can into `config` and every problem with a key into `problems` (a bad
// value leaves its default). An error only for a file that is not a mapping of keys.
absl::Status ReadAll(std::string_view yaml_text, const std::string& file_name,
                     const std::filesystem::path& base, Config* config, Problems* problems) {
  absl::StatusOr<YAML::Node> root = LoadConfigDocument(std::string(yaml_text), file_name);
  if (!root.ok()) return root.status();
  config->source_file = file_name;
  // An empty file (or one of comments only) means all defaults.
  if (root->IsNull()) return absl::OkStatus();
  if (!root->IsMap()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: the configuration must be a YAML mapping of keys to values", file_name,
                    root->Mark().line + 1));
  }
  try {
    MapReader reader(*root, "", problems);
    ReadRoot(reader, base, config);
    reader.Finish();
    RecordKeyLines(*root, "", &config->key_lines.lines);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: invalid YAML: {}", file_name, e.mark.line + 1, e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot read the configuration: {}", file_name, e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Config> Parse(std::string_view yaml_text, const std::string& file_name,
                             const std::filesystem::path& base) {
  Config config;
  Problems problems(file_name);
  TOPOLOGYD_RETURN_IF_ERROR(ReadAll(yaml_text, file_name, base, &config, &problems));
  if (!problems.empty()) return absl::InvalidArgumentError(problems.Joined());
  return config;
}

// Each line of `error` ("KEY: what is wrong") into `problems`, at the line of its key (or of
// the nearest enclosing key the file sets).
void AddKeyErrors(const Config& config, const absl::Status& error, Problems* problems) {
  if (error.ok()) return;
  const std::vector<std::string> lines = absl::StrSplit(std::string(error.message()), '\n');
  for (const std::string& line : lines) {
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      problems->AddAtLine(0, "configuration", line);
      continue;
    }
    const std::string key = line.substr(0, colon);
    int at = 0;
    for (std::string prefix = key; !prefix.empty();) {
      if (auto found = config.key_lines.lines.find(prefix); found != config.key_lines.lines.end()) {
        at = found->second;
        break;
      }
      const size_t cut = prefix.find_last_of(".[");
      prefix = cut == std::string::npos ? "" : prefix.substr(0, cut);
    }
    problems->AddAtLine(at, key, line.substr(colon + 2));
  }
}

// Relative paths in a file are taken relative to the file's directory, so a checkout-local
// config (config/dev.yaml) works from any working directory.
void ResolveRelativePaths(const std::filesystem::path& base, Config* c) {
  auto resolve = [&](std::string* p) { *p = ResolvePath(base, *p); };
  std::string socket = c->SocketPath();
  resolve(&socket);
  c->listen = "unix://" + socket;
  resolve(&c->state_dir);
  resolve(&c->cgroup.root);
  if (c->topology.source == TopologySourceConfig::Kind::kXml) resolve(&c->topology.path);
  if (c->pod_resources) {
    c->pod_resources->listen = "unix://" + ResolvePath(base, c->pod_resources->SocketPath());
  }
  if (!c->nrt.file.empty()) resolve(&c->nrt.file);
  if (c->nrt.api_server && !c->nrt.api_server->kubeconfig.empty() &&
      c->nrt.api_server->kubeconfig != kInCluster) {
    resolve(&c->nrt.api_server->kubeconfig);
  }
}

absl::Status ReadError(int err, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      fmt::format("cannot read config file {}: {}", path, std::strerror(err)));
}

// A directory or /dev/null reads as an empty file, which would mean "all defaults", and a
// FIFO blocks the reader: only a regular file (after symlinks) is a config file.
absl::Status CheckRegularFile(const struct stat& st, const std::string& path) {
  if (S_ISREG(st.st_mode)) return absl::OkStatus();
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format("config file {} is a directory", path));
  }
  std::string_view kind = S_ISFIFO(st.st_mode)   ? " (it is a FIFO)"
                          : S_ISCHR(st.st_mode)  ? " (it is a character device)"
                          : S_ISBLK(st.st_mode)  ? " (it is a block device)"
                          : S_ISSOCK(st.st_mode) ? " (it is a socket)"
                                                 : "";
  return absl::InvalidArgumentError(
      fmt::format("config file {} is not a regular file{}", path, kind));
}

}  // namespace

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  // stat first so a device or FIFO is never opened; O_NONBLOCK and fstat cover a file
  // swapped in between.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ReadError(errno, path);
  if (absl::Status regular = CheckRegularFile(st, path); !regular.ok()) return regular;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ReadError(errno, path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return ReadError(errno, path);
  if (absl::Status regular = CheckRegularFile(st, path); !regular.ok()) return regular;
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ReadError(errno, path);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

absl::StatusOr<Config> ParseConfig(std::string_view yaml_text, const std::string& file_name) {
  return Parse(yaml_text, file_name, {});
}

absl::Status LocateKeyErrors(const Config& config, const absl::Status& error,
                             const std::string& file_name) {
  if (error.ok()) return error;
  Problems problems(file_name);
  AddKeyErrors(config, error, &problems);
  return absl::Status(error.code(), problems.Joined());
}

absl::Status CheckConfigFile(const std::string& path,
                             const std::function<absl::Status(const Config&)>& check) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (!text.ok()) return text.status();
  const std::filesystem::path base = std::filesystem::absolute(path).parent_path();
  Config config;
  Problems problems(path);
  TOPOLOGYD_RETURN_IF_ERROR(ReadAll(*text, path, base, &config, &problems));
  ResolveRelativePaths(base, &config);
  config.source_file = std::filesystem::absolute(path).lexically_normal().string();
  AddKeyErrors(config, check(config), &problems);
  if (!problems.empty()) return absl::InvalidArgumentError(problems.Joined());
  return absl::OkStatus();
}

absl::StatusOr<Config> LoadConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (!text.ok()) return text.status();
  const std::filesystem::path base = std::filesystem::absolute(path).parent_path();
  absl::StatusOr<Config> config = Parse(*text, path, base);
  if (config.ok()) {
    ResolveRelativePaths(base, &*config);
    config->source_file = std::filesystem::absolute(path).lexically_normal().string();
  }
  return config;
}

}  // namespace topologyd::config
