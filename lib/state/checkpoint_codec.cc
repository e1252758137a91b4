#include "lib/state/checkpoint_codec.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/state/canonical_checkpoint.h"
#include "lib/state/checkpoint_checksum.h"
#include "lib/state/json_limits.h"

namespace topologyd::state {
namespace {

using nlohmann::json;

constexpr std::string_view kCorruptAdvice =
    "the state checkpoint is corrupt and topologyd will not start on it. Restore the file from "
    "a backup, or drain the node (no pod may hold CPUs, memory or devices) and only then remove "
    "the file so that topologyd starts empty";

// Builds the DATA_LOSS error for a malformed member at `path`.
absl::Status Malformed(std::string_view source, std::string_view path, std::string_view problem) {
  return absl::DataLossError(fmt::format("{}: {}: {}; {}", source, path, problem, kCorruptAdvice));
}

std::string TypeName(const json& j) { return j.type_name(); }

// A member name as a path component: bare when it is a short identifier, else quoted and cut
// (unknown members come from the file and may be anything).
std::string PathComponent(std::string_view key) {
  const bool plain = !key.empty() && key.size() <= kMaxQuotedBytes &&
                     std::all_of(key.begin(), key.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '_' || c == '-';
                     });
  return plain ? std::string(key) : QuoteForMessage(key);
}

// Reads members of one JSON object, remembering which were consumed so that members this
// version does not know are reported instead of silently dropped on the next save.
class ObjectReader {
 public:
  // `version`: the file's format version, named when a member is unknown.
  static absl::StatusOr<ObjectReader> Make(const json& j, std::string path, std::string_view source,
                                           uint64_t version = kCheckpointVersion) {
    if (!j.is_object()) {
      return Malformed(source, path, fmt::format("expected an object, found {}", TypeName(j)));
    }
    return ObjectReader(j, std::move(path), source, version);
  }

  void set_version(uint64_t version) { version_ = version; }

  absl::StatusOr<const json*> Member(const char* key) {
    auto it = j_->find(key);
    if (it == j_->end()) return Malformed(source_, path_, fmt::format("missing \"{}\"", key));
    seen_.insert(key);
    return &*it;
  }

  absl::StatusOr<std::string> String(const char* key) {
    TOPOLOGYD_ASSIGN_OR_RETURN(const json* v, Member(key));
    if (!v->is_string()) return WrongType(key, "a string", *v);
    return v->get<std::string>();
  }

  absl::StatusOr<bool> Bool(const char* key) {
    TOPOLOGYD_ASSIGN_OR_RETURN(const json* v, Member(key));
    if (!v->is_boolean()) return WrongType(key, "true or false", *v);
    return v->get<bool>();
  }

  absl::StatusOr<uint64_t> Unsigned(const char* key) {
    TOPOLOGYD_ASSIGN_OR_RETURN(const json* v, Member(key));
    if (!v->is_number_unsigned()) return WrongType(key, "a non-negative integer", *v);
    return v->get<uint64_t>();
  }

  absl::StatusOr<int> Int(const char* key, int max) {
    TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t v, Unsigned(key));
    if (v > static_cast<uint64_t>(max)) {
      return Malformed(source_, Path(key), fmt::format("{} is larger than {}", v, max));
    }
    return static_cast<int>(v);
  }

  absl::Status NoUnknownMembers() const {
    for (const auto& [key, value] : j_->items()) {
      if (!seen_.contains(key)) {
        return Malformed(
            source_, Path(key),
            fmt::format("unknown member (not part of state format version {})", version_));
      }
    }
    return absl::OkStatus();
  }

  std::string Path(std::string_view key) const {
    const std::string shown = PathComponent(key);
    return path_.empty() ? shown : fmt::format("{}.{}", path_, shown);
  }

 private:
  ObjectReader(const json& j, std::string path, std::string_view source, uint64_t version)
      : j_(&j), path_(std::move(path)), source_(source), version_(version) {}

  absl::Status WrongType(const char* key, std::string_view expected, const json& v) const {
    return Malformed(
        source_, Path(key),
        fmt::format("expected {}, found {} {}", expected, TypeName(v), JsonForMessage(v)));
  }

  const json* j_;
  std::string path_;
  std::string_view source_;
  uint64_t version_;
  std::set<std::string> seen_;
};

absl::StatusOr<const json*> Array(ObjectReader& r, const char* key, std::string_view source) {
  TOPOLOGYD_ASSIGN_OR_RETURN(const json* v, r.Member(key));
  if (!v->is_array()) {
    return Malformed(source, r.Path(key), fmt::format("expected an array, found {}", TypeName(*v)));
  }
  return v;
}

absl::StatusOr<ContainerRecord> DecodeContainer(const json& j, const std::string& path,
                                                std::string_view source, uint64_t version) {
  TOPOLOGYD_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(j, path, source, version));
  ContainerRecord c;
  TOPOLOGYD_ASSIGN_OR_RETURN(c.name, r.String("name"));
  TOPOLOGYD_ASSIGN_OR_RETURN(c.init, r.Bool("init"));
  // Version 1 did not record sidecars: its containers read as not restartable.
  if (version >= 2) {
    TOPOLOGYD_ASSIGN_OR_RETURN(c.restartable, r.Bool("restartable"));
    if (c.restartable && !c.init) {
      return Malformed(source, r.Path("restartable"),
                       "true for a container that is not an init container (\"init\" is false)");
    }
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string cpus, r.String("cpus"));
  absl::StatusOr<CpuSet> parsed = CpuSet::Parse(cpus);
  if (!parsed.ok()) {
    return Malformed(source, r.Path("cpus"),
                     fmt::format("invalid CPU list {}", QuoteForMessage(cpus)));
  }
  c.cpus = *std::move(parsed);
  TOPOLOGYD_ASSIGN_OR_RETURN(c.exclusive, r.Bool("exclusive"));

  TOPOLOGYD_ASSIGN_OR_RETURN(const json* affinity, Array(r, "numa_affinity", source));
  for (size_t i = 0; i < affinity->size(); ++i) {
    const json& v = (*affinity)[i];
    const std::string at = fmt::format("{}[{}]", r.Path("numa_affinity"), i);
    if (!v.is_number_unsigned() ||
        v.get<uint64_t>() > static_cast<uint64_t>(kMaxCheckpointNumaId)) {
      return Malformed(source, at,
                       fmt::format("expected a NUMA node id, found {}", JsonForMessage(v)));
    }
    c.numa_affinity.push_back(v.get<int>());
  }

  TOPOLOGYD_ASSIGN_OR_RETURN(const json* memory, Array(r, "memory", source));
  for (size_t i = 0; i < memory->size(); ++i) {
    TOPOLOGYD_ASSIGN_OR_RETURN(
        ObjectReader m, ObjectReader::Make((*memory)[i], fmt::format("{}[{}]", r.Path("memory"), i),
                                           source, version));
    TOPOLOGYD_ASSIGN_OR_RETURN(int node, m.Int("numa_node", kMaxCheckpointNumaId));
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string resource, m.String("resource"));
    TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t bytes, m.Unsigned("bytes"));
    TOPOLOGYD_RETURN_IF_ERROR(m.NoUnknownMembers());
    if (!c.memory[node].emplace(resource, bytes).second) {
      return Malformed(
          source, fmt::format("{}[{}]", r.Path("memory"), i),
          fmt::format("NUMA node {} resource {} listed twice", node, QuoteForMessage(resource)));
    }
  }

  TOPOLOGYD_ASSIGN_OR_RETURN(const json* devices, r.Member("devices"));
  if (!devices->is_object()) {
    return Malformed(source, r.Path("devices"),
                     fmt::format("expected an object, found {}", TypeName(*devices)));
  }
  for (const auto& [resource, ids] : devices->items()) {
    const std::string at = fmt::format("{}[{}]", r.Path("devices"), QuoteForMessage(resource));
    if (!ids.is_array()) {
      return Malformed(source, at, fmt::format("expected an array, found {}", TypeName(ids)));
    }
    std::vector<std::string>& out = c.devices[resource];
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].is_string()) {
        return Malformed(
            source, fmt::format("{}[{}]", at, i),
            fmt::format("expected a device id string, found {}", JsonForMessage(ids[i])));
      }
      out.push_back(ids[i].get<std::string>());
    }
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(c.container_id, r.String("container_id"));
  TOPOLOGYD_ASSIGN_OR_RETURN(c.cgroup, r.String("cgroup"));
  TOPOLOGYD_RETURN_IF_ERROR(r.NoUnknownMembers());
  return c;
}

absl::StatusOr<PodRecord> DecodePod(const json& j, const std::string& path, std::string_view source,
                                    uint64_t version) {
  TOPOLOGYD_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(j, path, source, version));
  PodRecord pod;
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.uid, r.String("uid"));
  if (pod.uid.empty()) return Malformed(source, r.Path("uid"), "empty pod uid");
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.namespace_name, r.String("namespace"));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.name, r.String("name"));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.qos, r.String("qos"));
  TOPOLOGYD_ASSIGN_OR_RETURN(const json* containers, Array(r, "containers", source));
  std::set<std::string> names;
  for (size_t i = 0; i < containers->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", r.Path("containers"), i);
    TOPOLOGYD_ASSIGN_OR_RETURN(ContainerRecord c,
                               DecodeContainer((*containers)[i], at, source, version));
    if (!names.insert(c.name).second) {
      return Malformed(source, at,
                       fmt::format("container {} listed twice", QuoteForMessage(c.name)));
    }
    pod.containers.push_back(std::move(c));
  }
  TOPOLOGYD_RETURN_IF_ERROR(r.NoUnknownMembers());
  return pod;
}

json EncodeContainer(const ContainerRecord& c) {
  json memory = json::array();
  for (const auto& [node, resources] : c.memory) {
    for (const auto& [resource, bytes] : resources) {
      memory.push_back({{"numa_node", node}, {"resource", resource}, {"bytes", bytes}});
    }
  }
  json devices = json::object();
  for (const auto& [resource, ids] : c.devices) devices[resource] = ids;
  return {{"name", c.name},
          {"init", c.init},
          {"restartable", c.restartable},
          {"cpus", c.cpus.ToString()},
          {"exclusive", c.exclusive},
          {"numa_affinity", c.numa_affinity},
          {"memory", std::move(memory)},
          {"devices", std::move(devices)},
          {"container_id", c.container_id},
          {"cgroup", c.cgroup}};
}

json EncodeData(const State& state) {
  json pods = json::array();
  for (const auto& [uid, pod] : state.pods) {
    json containers = json::array();
    for (const ContainerRecord& c : pod.containers) containers.push_back(EncodeContainer(c));
    pods.push_back({{"uid", pod.uid},
                    {"namespace", pod.namespace_name},
                    {"name", pod.name},
                    {"qos", pod.qos},
                    {"containers", std::move(containers)}});
  }
  return {{"pods", std::move(pods)}};
}

// What EncodeState() refuses beyond strings JSON cannot carry: a file no reader would take.
absl::Status CheckEncodable(const State& state) {
  for (const auto& [uid, pod] : state.pods) {
    for (const ContainerRecord& c : pod.containers) {
      if (c.restartable && !c.init) {
        return absl::InvalidArgumentError(fmt::format(
            "state cannot be encoded: container {} of pod {} is restartable but not an init "
            "container",
            QuoteForMessage(c.name), QuoteForMessage(uid)));
      }
    }
  }
  return absl::OkStatus();
}

// The checksum of a document whose data has the canonical text `canonical_data`.
std::string ChecksumOf(std::string_view canonical_data, uint64_t generation, uint64_t version) {
  CheckpointChecksum checksum;
  checksum.AddData(canonical_data);
  return checksum.Finish(generation, version);
}

// `text` with every line after the first indented by two more spaces. JSON text from dump()
// has no raw newline inside strings, so this only moves lines.
std::string IndentNested(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.append("  ");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> StateChecksum(const State& state) {
  TOPOLOGYD_RETURN_IF_ERROR(CheckEncodable(state));
  try {
    return ChecksumOf(EncodeData(state).dump(), state.generation, kCheckpointVersion);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(fmt::format("state cannot be encoded: {}", e.what()));
  }
}

absl::StatusOr<std::string> EncodeState(const State& state) {
  TOPOLOGYD_RETURN_IF_ERROR(CheckEncodable(state));
  try {
    const json data = EncodeData(state);
    // The envelope keeps a reading order for people (version first, data last); the data part
    // is emitted with sorted keys, its canonical order. Written out by hand so the data is
    // serialized once for the checksum and once for the file, never re-parsed.
    return fmt::format(
        "{{\n  \"version\": {},\n  \"generation\": {},\n  \"checksum\": \"{}\",\n  "
        "\"data\": {}\n}}\n",
        kCheckpointVersion, state.generation,
        ChecksumOf(data.dump(), state.generation, kCheckpointVersion), IndentNested(data.dump(2)));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(fmt::format("state cannot be encoded: {}", e.what()));
  }
}

absl::StatusOr<State> DecodeState(std::string_view bytes, std::string_view source) {
  if (std::optional<State> state = DecodeCanonicalCheckpoint(bytes)) return *std::move(state);
  return internal::DecodeStateByDocument(bytes, source);
}

namespace internal {

absl::StatusOr<State> DecodeStateByDocument(std::string_view bytes, std::string_view source) {
  // Before parsing: the checksum below serializes the data, and dump() recurses per level.
  if (absl::Status nesting = CheckJsonNesting(bytes); !nesting.ok()) {
    return absl::DataLossError(fmt::format("{}: {}, deeper than any checkpoint; {}", source,
                                           nesting.message(), kCorruptAdvice));
  }
  json doc;
  try {
    doc = json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    return absl::DataLossError(fmt::format("{}: not valid JSON ({}); {}", source,
                                           ParseErrorForMessage(e.what()), kCorruptAdvice));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::Make(doc, "", source));
  TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t version, top.Unsigned("version"));
  top.set_version(version);
  if (version > kCheckpointVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: state format version {} was written by a newer topologyd (this one reads versions "
        "up to {}); upgrade topologyd, or restore the state file saved before the upgrade",
        source, version, kCheckpointVersion));
  }
  if (version == 0) return Malformed(source, "version", "version 0 does not exist");
  TOPOLOGYD_ASSIGN_OR_RETURN(uint64_t generation, top.Unsigned("generation"));
  // Every change adds one: a generation near the top would wrap, and a wrapped counter makes
  // new changes look durable before they are written. No real history gets close.
  if (generation > kMaxGeneration) {
    return Malformed(
        source, "generation",
        fmt::format("{} is beyond the largest generation, {}", generation, kMaxGeneration));
  }
  TOPOLOGYD_ASSIGN_OR_RETURN(std::string stored, top.String("checksum"));
  TOPOLOGYD_ASSIGN_OR_RETURN(const json* data, top.Member("data"));
  TOPOLOGYD_RETURN_IF_ERROR(top.NoUnknownMembers());
  // Parsed strings are valid UTF-8, so dump() cannot throw here.
  const std::string actual = ChecksumOf(data->dump(), generation, version);
  if (stored != actual) {
    return absl::DataLossError(
        fmt::format("{}: checksum mismatch (the file says {}, its contents give \"{}\"); {}",
                    source, QuoteForMessage(stored), actual, kCorruptAdvice));
  }

  State state;
  state.generation = generation;
  TOPOLOGYD_ASSIGN_OR_RETURN(ObjectReader d, ObjectReader::Make(*data, "data", source, version));
  TOPOLOGYD_ASSIGN_OR_RETURN(const json* pods, Array(d, "pods", source));
  for (size_t i = 0; i < pods->size(); ++i) {
    const std::string at = fmt::format("data.pods[{}]", i);
    TOPOLOGYD_ASSIGN_OR_RETURN(PodRecord pod, DecodePod((*pods)[i], at, source, version));
    const std::string uid = pod.uid;
    if (!state.pods.emplace(uid, std::move(pod)).second) {
      return Malformed(source, at, fmt::format("pod {} listed twice", QuoteForMessage(uid)));
    }
  }
  TOPOLOGYD_RETURN_IF_ERROR(d.NoUnknownMembers());
  if (absl::Status valid = Validate(state); !valid.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: the recorded allocations conflict: {}. The file passed its checksum, so it was "
        "written this way; restore an earlier copy, or drain the node and then remove the file",
        source, valid.message()));
  }
  return state;
}

}  // namespace internal

}  // namespace topologyd::state
