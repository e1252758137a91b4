#include "tools/topoctl/support_simulate_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

#include "lib/common/absl_fmt.h"
#include "lib/config/config_loader.h"
#include "lib/pod/pod_manifest.h"

namespace topoctl {
namespace {

namespace fs = std::filesystem;
namespace config = topologyd::config;

bool IsBlank(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') return false;
  }
  return true;
}

absl::Status LoadFile(const fs::path& path, size_t max_containers,
                      std::vector<topologyd::pod::Pod>& pods) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot read {}", path.string()));
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::vector<std::string> documents = SplitYamlStream(buf.str());
  const size_t before = pods.size();
  for (size_t i = 0; i < documents.size(); ++i) {
    if (IsBlank(documents[i])) continue;
    absl::StatusOr<topologyd::pod::Pod> pod =
        topologyd::pod::ParsePodManifest(documents[i], max_containers);
    if (!pod.ok()) {
      return absl::InvalidArgumentError(
          documents.size() == 1
              ? fmt::format("{}: {}", path.string(), pod.status().message())
              : fmt::format("{}, document {}: {}", path.string(), i + 1, pod.status().message()));
    }
    pods.push_back(*std::move(pod));
  }
  if (pods.size() == before) {
    return absl::InvalidArgumentError(fmt::format("{}: no Pod manifest in it", path.string()));
  }
  return absl::OkStatus();
}

bool IsManifestName(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

using Change = std::function<void(config::Config&)>;
struct AxisValue {
  std::string label;
  Change change;
};

bool IsTopologyManagerOption(const std::string& name) {
  return name == "prefer-closest-numa-nodes" || name == "max-allowable-numa-nodes";
}

absl::StatusOr<std::vector<AxisValue>> Axis(const std::string& entry) {
  const size_t eq = entry.find('=');
  if (eq == std::string::npos || eq + 1 == entry.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "--compare {}: expected KEY=VALUE[,VALUE...] with KEY policy, scope, option or config",
        entry));
  }
  const std::string key = entry.substr(0, eq);
  std::vector<std::string> values;
  std::stringstream rest(entry.substr(eq + 1));
  for (std::string v; std::getline(rest, v, ',');) {
    if (v.empty()) return absl::InvalidArgumentError("--compare " + entry + ": an empty value");
    values.push_back(v);
  }
  std::vector<AxisValue> axis;
  for (const std::string& v : values) {
    const std::string label = key + "=" + v;
    if (key == "policy") {
      axis.push_back({label, [v](config::Config& c) { c.topology_manager_policy = v; }});
    } else if (key == "scope") {
      axis.push_back({label, [v](config::Config& c) { c.topology_manager_scope = v; }});
    } else if (key == "option") {
      std::vector<std::pair<std::string, std::string>> options;
      std::stringstream parts(v);
      for (std::string part; v != "-" && std::getline(parts, part, '+');) {
        const size_t oeq = part.find('=');
        if (oeq == std::string::npos || oeq == 0 || oeq + 1 == part.size()) {
          return absl::InvalidArgumentError(fmt::format(
              "--compare {}: option \"{}\" is not NAME=VALUE (\"-\" for no option)", entry, part));
        }
        options.emplace_back(part.substr(0, oeq), part.substr(oeq + 1));
      }
      axis.push_back({label, [options](config::Config& c) {
                        for (const auto& o : options) {
                          (IsTopologyManagerOption(o.first)
                               ? c.topology_manager_policy_options
                               : c.cpu_manager_policy_options)[o.first] = o.second;
                        }
                      }});
    } else if (key == "config") {
      absl::StatusOr<config::Config> loaded = config::LoadConfigFile(v);
      if (!loaded.ok()) return loaded.status();
      const std::string name = fs::path(v).filename().string();
      axis.push_back({key + "=" + name, [loaded = *loaded](config::Config& c) { c = loaded; }});
    } else {
      return absl::InvalidArgumentError(fmt::format(
          "--compare {}: unknown key \"{}\" (policy, scope, option or config)", entry, key));
    }
  }
  return axis;
}

}  // namespace

std::vector<std::string> SplitYamlStream(const std::string& text) {
  std::vector<std::string> documents(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const bool marker = line.rfind("---", 0) == 0 &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    if (marker) {
      documents.emplace_back();
      // Content after the marker on the same line belongs to the new document.
      const size_t content = line.find_first_not_of(" \t\r", 3);
      if (content != std::string::npos) documents.back() += line.substr(content) + "\n";
      continue;
    }
    documents.back() += line + "\n";
  }
  return documents;
}

absl::StatusOr<std::vector<topologyd::pod::Pod>> LoadWorkload(const std::vector<std::string>& paths,
                                                              size_t max_containers) {
  std::vector<topologyd::pod::Pod> pods;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file() && IsManifestName(e.path())) files.push_back(e.path());
      }
      if (ec) return absl::NotFoundError(fmt::format("cannot list {}: {}", p, ec.message()));
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: no *.yaml, *.yml or *.json file in the directory", p));
      }
      for (const fs::path& f : files) {
        if (absl::Status s = LoadFile(f, max_containers, pods); !s.ok()) return s;
      }
    } else if (absl::Status s = LoadFile(p, max_containers, pods); !s.ok()) {
      return s;
    }
  }
  return pods;
}

absl::StatusOr<std::vector<SimulateVariant>> BuildVariants(
    const config::Config& base, const std::string& base_name,
    const std::vector<std::string>& compare) {
  std::vector<std::vector<AxisValue>> axes;
  for (const std::string& entry : compare) {
    absl::StatusOr<std::vector<AxisValue>> axis = Axis(entry);
    if (!axis.ok()) return axis.status();
    // A whole configuration replaces the base: it goes first, the other axes change it.
    if (entry.rfind("config=", 0) == 0) {
      axes.insert(axes.begin(), *std::move(axis));
    } else {
      axes.push_back(*std::move(axis));
    }
  }
  std::vector<SimulateVariant> variants{{base_name, base}};
  bool first_axis = true;
  for (const std::vector<AxisValue>& axis : axes) {
    std::vector<SimulateVariant> next;
    for (const SimulateVariant& v : variants) {
      for (const AxisValue& value : axis) {
        SimulateVariant n{first_axis ? value.label : v.name + " " + value.label, v.config};
        value.change(n.config);
        next.push_back(std::move(n));
      }
    }
    variants = std::move(next);
    first_axis = false;
  }
  return variants;
}

}  // namespace topoctl
