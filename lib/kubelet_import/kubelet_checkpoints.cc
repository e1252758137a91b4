#include "lib/kubelet_import/kubelet_checkpoints.h"

#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/kubelet_import/kubelet_checksum.h"
#include "lib/state/json_limits.h"

namespace topologyd::state::kubelet {
namespace {

// Member order matters for encoding/json's "last one wins", so keep the file's order.
using json = nlohmann::ordered_json;

// Reads JSON into the Go-shaped structs with encoding/json's rules; errors name the JSON path.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(const std::string& path, std::string_view problem) const {
    return absl::DataLossError(
        fmt::format("{}: {}: {}; kubelet itself would refuse this checkpoint", source_,
                    path.empty() ? "top level" : path, problem));
  }

  // Calls `field(lower-case member name, value, path)` for each member of the object `j` (the
  // member names of Go structs match case-insensitively). `null` for the whole object leaves
  // the struct as it is.
  absl::Status Struct(const json& j, const std::string& path,
                      const std::function<absl::Status(const std::string&, const json&,
                                                       const std::string&)>& field) const {
    if (j.is_null()) return absl::OkStatus();
    if (!j.is_object()) {
      return Error(path, fmt::format("expected an object, found {}", JsonForMessage(j)));
    }
    for (const auto& [key, value] : j.items()) {
      std::string lower = key;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      TOPOLOGYD_RETURN_IF_ERROR(field(lower, value, Join(path, key)));
    }
    return absl::OkStatus();
  }

  absl::Status String(const json& j, const std::string& path, std::string& out) const {
    if (j.is_null()) return absl::OkStatus();
    if (!j.is_string()) {
      return Error(path, fmt::format("expected a string, found {}", JsonForMessage(j)));
    }
    out = j.get<std::string>();
    return absl::OkStatus();
  }

  absl::Status Uint64(const json& j, const std::string& path, uint64_t& out) const {
    if (j.is_null()) return absl::OkStatus();
    if (!j.is_number_unsigned()) {
      return Error(path, fmt::format("expected an unsigned integer, found {}", JsonForMessage(j)));
    }
    out = j.get<uint64_t>();
    return absl::OkStatus();
  }

  absl::Status Int64(const json& j, const std::string& path, int64_t& out) const {
    if (j.is_null()) return absl::OkStatus();
    if (j.is_number_unsigned() &&
        j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      out = static_cast<int64_t>(j.get<uint64_t>());
      return absl::OkStatus();
    }
    if (j.is_number_integer() && !j.is_number_unsigned()) {
      out = j.get<int64_t>();
      return absl::OkStatus();
    }
    return Error(path, fmt::format("expected an integer, found {}", JsonForMessage(j)));
  }

  template <typename T, typename ReadElement>
  absl::Status List(const json& j, const std::string& path, std::optional<std::vector<T>>& out,
                    ReadElement read) const {
    if (j.is_null()) {
      out.reset();
      return absl::OkStatus();
    }
    if (!j.is_array()) {
      return Error(path, fmt::format("expected an array, found {}", JsonForMessage(j)));
    }
    out.emplace();
    for (size_t i = 0; i < j.size(); ++i) {
      T element{};
      TOPOLOGYD_RETURN_IF_ERROR(read(j[i], fmt::format("{}[{}]", path, i), element));
      out->push_back(std::move(element));
    }
    return absl::OkStatus();
  }

  // A JSON object into a Go map (decoding into an existing map adds to it, as Go does).
  template <typename K, typename V, typename ReadValue>
  absl::Status Map(const json& j, const std::string& path, std::optional<std::map<K, V>>& out,
                   ReadValue read) const {
    if (j.is_null()) {
      out.reset();
      return absl::OkStatus();
    }
    if (!j.is_object()) {
      return Error(path, fmt::format("expected an object, found {}", JsonForMessage(j)));
    }
    if (!out) out.emplace();
    for (const auto& [key, value] : j.items()) {
      const std::string at = fmt::format("{}[{}]", path, QuoteForMessage(key));
      K k{};
      if constexpr (std::is_same_v<K, std::string>) {
        k = key;
      } else {
        const char* end = key.data() + key.size();
        auto [ptr, ec] = std::from_chars(key.data(), end, k);
        if (ec != std::errc() || ptr != end || key.empty()) {
          return Error(at, "map key is not an integer");
        }
      }
      V v{};
      TOPOLOGYD_RETURN_IF_ERROR(read(value, at, v));
      (*out)[k] = std::move(v);
    }
    return absl::OkStatus();
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }

  std::string_view source() const { return source_; }

 private:
  std::string_view source_;
};

absl::StatusOr<json> ParseJson(std::string_view bytes, std::string_view source) {
  // Before parsing: messages below serialize values, and dump() recurses per level.
  if (absl::Status nesting = CheckJsonNesting(bytes); !nesting.ok()) {
    return absl::DataLossError(
        fmt::format("{}: checkpoint is corrupted: {}, deeper than any kubelet checkpoint", source,
                    nesting.message()));
  }
  try {
    return json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    return absl::DataLossError(
        fmt::format("{}: not valid JSON ({}); kubelet itself would refuse this checkpoint", source,
                    ParseErrorForMessage(e.what())));
  }
}

absl::Status ChecksumMismatch(std::string_view source, uint64_t stored, uint64_t computed) {
  return absl::DataLossError(fmt::format(
      "{}: checkpoint is corrupted: the file's checksum is {} but its contents hash to {}; "
      "kubelet would refuse to start on it. Nothing was imported: fix the file (or drain the node "
      "and let kubelet recreate it) before migrating",
      source, stored, computed));
}

absl::Status OptionalStringList(const Reader& r, const json& j, const std::string& path,
                                std::optional<std::vector<std::string>>& out) {
  return r.List(j, path, out, [&r](const json& e, const std::string& at, std::string& s) {
    if (e.is_null()) return absl::OkStatus();  // Go leaves "" for null
    return r.String(e, at, s);
  });
}

absl::Status IntList(const Reader& r, const json& j, const std::string& path,
                     std::optional<std::vector<int64_t>>& out) {
  return r.List(j, path, out, [&r](const json& e, const std::string& at, int64_t& v) {
    return r.Int64(e, at, v);
  });
}

// ---- cpu_manager_state ----

absl::Status ReadCpuBody(const Reader& r, const json& j, const std::string& path, CpuCheckpoint& cp,
                         bool* has_pod_entries) {
  return r.Struct(j, path, [&](const std::string& name, const json& v, const std::string& at) {
    if (name == "policyname") return r.String(v, at, cp.policy_name);
    if (name == "defaultcpuset") return r.String(v, at, cp.default_cpu_set);
    if (name == "checksum") return r.Uint64(v, at, cp.checksum);
    if (name == "podentries") {
      if (!v.is_null() && !v.empty()) *has_pod_entries = true;
      return absl::OkStatus();
    }
    if (name == "entries") {
      // Kubelet before 1.18 keyed entries by container id with a CPU list as the value.
      if (v.is_object()) {
        for (const auto& [key, value] : v.items()) {
          if (value.is_string()) {
            return absl::FailedPreconditionError(fmt::format(
                "{}: {}[{}]: this is the pre-1.18 cpu_manager_state format (entries keyed "
                "by container id), which only kubelet can migrate with the container runtime's "
                "help; start kubelet 1.18 or newer once so it rewrites the file, then import",
                r.source(), at, QuoteForMessage(key)));
          }
        }
      }
      return r.Map(v, at, cp.entries,
                   [&r](const json& pod, const std::string& pod_at,
                        std::optional<std::map<std::string, std::string>>& containers) {
                     return r.Map(pod, pod_at, containers,
                                  [&r](const json& c, const std::string& c_at, std::string& s) {
                                    return r.String(c, c_at, s);
                                  });
                   });
    }
    return absl::OkStatus();  // unknown members are ignored, as by encoding/json
  });
}

// ---- memory_manager_state ----

absl::Status ReadBlocks(const Reader& r, const json& j, const std::string& path,
                        OptionalBlocks& out) {
  return r.List(j, path, out, [&r](const json& e, const std::string& at, MemoryBlock& b) {
    return r.Struct(e, at, [&](const std::string& name, const json& v, const std::string& f_at) {
      if (name == "numaaffinity") return IntList(r, v, f_at, b.numa_affinity);
      if (name == "type") return r.String(v, f_at, b.type);
      if (name == "size") return r.Uint64(v, f_at, b.size);
      return absl::OkStatus();
    });
  });
}

absl::Status ReadMemoryTable(const Reader& r, const json& j, const std::string& path,
                             std::optional<MemoryTable>& out) {
  if (j.is_null()) {
    out.reset();
    return absl::OkStatus();
  }
  out.emplace();
  MemoryTable& t = *out;
  return r.Struct(j, path, [&](const std::string& name, const json& v, const std::string& at) {
    if (name == "total") return r.Uint64(v, at, t.total);
    if (name == "systemreserved") return r.Uint64(v, at, t.system_reserved);
    if (name == "allocatable") return r.Uint64(v, at, t.allocatable);
    if (name == "reserved") return r.Uint64(v, at, t.reserved);
    if (name == "free") return r.Uint64(v, at, t.free);
    return absl::OkStatus();
  });
}

absl::Status ReadNumaNode(const Reader& r, const json& j, const std::string& path,
                          std::optional<NumaNodeState>& out) {
  if (j.is_null()) {
    out.reset();
    return absl::OkStatus();
  }
  out.emplace();
  NumaNodeState& n = *out;
  return r.Struct(j, path, [&](const std::string& name, const json& v, const std::string& at) {
    if (name == "numberofassignments") return r.Int64(v, at, n.number_of_assignments);
    if (name == "memorymap") {
      return r.Map(v, at, n.memory_map,
                   [&r](const json& t, const std::string& t_at, std::optional<MemoryTable>& o) {
                     return ReadMemoryTable(r, t, t_at, o);
                   });
    }
    if (name == "cells") return IntList(r, v, at, n.cells);
    return absl::OkStatus();
  });
}

absl::Status ReadMemoryBody(const Reader& r, const json& j, const std::string& path,
                            MemoryCheckpoint& cp) {
  return r.Struct(j, path, [&](const std::string& name, const json& v, const std::string& at) {
    if (name == "policyname") return r.String(v, at, cp.policy_name);
    if (name == "checksum") return r.Uint64(v, at, cp.checksum);
    if (name == "machinestate") {
      return r.Map(v, at, cp.machine_state,
                   [&r](const json& n, const std::string& n_at, std::optional<NumaNodeState>& o) {
                     return ReadNumaNode(r, n, n_at, o);
                   });
    }
    if (name == "entries") {
      return r.Map(v, at, cp.entries,
                   [&r](const json& pod, const std::string& pod_at,
                        std::optional<std::map<std::string, OptionalBlocks>>& containers) {
                     return r.Map(pod, pod_at, containers,
                                  [&r](const json& c, const std::string& c_at, OptionalBlocks& b) {
                                    return ReadBlocks(r, c, c_at, b);
                                  });
                   });
    }
    if (name == "podentries") {
      return r.Map(v, at, cp.pod_entries,
                   [&r](const json& pod, const std::string& pod_at, PodMemoryEntry& e) {
                     return r.Struct(
                         pod, pod_at,
                         [&](const std::string& f, const json& fv, const std::string& f_at) {
                           if (f == "memoryblocks") {
                             return ReadBlocks(r, fv, f_at, e.memory_blocks);
                           }
                           return absl::OkStatus();
                         });
                   });
    }
    return absl::OkStatus();
  });
}

// The newer formats carry the real data as a JSON string in `data`, checksummed by
// `dataChecksum`. Returns the verified data string, or std::nullopt for a legacy file.
absl::StatusOr<std::optional<std::string>> VerifiedDataString(const Reader& r, const json& doc) {
  const json* data = nullptr;
  const json* data_checksum = nullptr;
  if (!doc.is_object()) return std::nullopt;
  for (const auto& [key, value] : doc.items()) {
    std::string lower = key;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "data") data = &value;
    if (lower == "datachecksum") data_checksum = &value;
  }
  if (data == nullptr || data->is_null()) return std::nullopt;
  if (!data->is_string()) return r.Error("data", "expected a string holding JSON");
  uint64_t stored = 0;
  if (data_checksum != nullptr)
    TOPOLOGYD_RETURN_IF_ERROR(r.Uint64(*data_checksum, "dataChecksum", stored));
  const std::string text = data->get<std::string>();
  const uint32_t computed = DataStringChecksum(text);
  if (stored != computed) return ChecksumMismatch(r.source(), stored, computed);
  return text;
}

// ---- kubelet_internal_checkpoint ----

absl::Status DecodeBase64(std::string_view in, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string clean;
  for (char c : in) {
    if (c != '\r' && c != '\n') clean += c;  // Go's decoder skips line breaks
  }
  if (clean.size() % 4 != 0) return absl::InvalidArgumentError("length is not a multiple of 4");
  out.clear();
  for (size_t i = 0; i < clean.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = clean[i + k];
      if (c == '=' && i + 4 == clean.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = value(c)) < 0) {
        return absl::InvalidArgumentError(fmt::format("bad character at {}", i + k));
      }
    }
    const uint32_t bits = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(bits >> 16);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(bits & 0xFF);
  }
  return absl::OkStatus();
}

absl::Status ReadDeviceEntry(const Reader& r, const json& j, const std::string& path,
                             PodDevicesEntry& e) {
  return r.Struct(j, path, [&](const std::string& name, const json& v, const std::string& at) {
    if (name == "poduid") return r.String(v, at, e.pod_uid);
    if (name == "containername") return r.String(v, at, e.container_name);
    if (name == "resourcename") return r.String(v, at, e.resource_name);
    if (name == "deviceids") {
      if (v.is_array()) {
        return absl::FailedPreconditionError(fmt::format(
            "{}: {}: this is the kubelet 1.19-and-older device checkpoint (device ids without "
            "NUMA nodes), which is not imported; start a newer kubelet once so it rewrites the "
            "file, or import without --device-state",
            r.source(), at));
      }
      return r.Map(v, at, e.device_ids,
                   [&r](const json& ids, const std::string& ids_at,
                        std::optional<std::vector<std::string>>& out) {
                     return OptionalStringList(r, ids, ids_at, out);
                   });
    }
    if (name == "allocresp") {
      if (v.is_null()) {
        e.alloc_resp.reset();
        return absl::OkStatus();
      }
      if (!v.is_string()) return r.Error(at, "expected a base64 string");
      std::string decoded;
      if (absl::Status s = DecodeBase64(v.get<std::string>(), decoded); !s.ok()) {
        return r.Error(at, fmt::format("invalid base64: {}", s.message()));
      }
      e.alloc_resp = std::move(decoded);
      return absl::OkStatus();
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<CpuCheckpoint> ParseCpuCheckpoint(std::string_view bytes, std::string_view source) {
  const Reader r(source);
  TOPOLOGYD_ASSIGN_OR_RETURN(json doc, ParseJson(bytes, source));
  if (!doc.is_object()) return r.Error("", "expected an object");
  CpuCheckpoint cp;
  cp.entries.emplace();  // kubelet reads into a non-nil map
  bool has_pod_entries = false;
  TOPOLOGYD_ASSIGN_OR_RETURN(std::optional<std::string> data, VerifiedDataString(r, doc));
  if (data) {
    TOPOLOGYD_ASSIGN_OR_RETURN(json body, ParseJson(*data, fmt::format("{} (data)", source)));
    TOPOLOGYD_RETURN_IF_ERROR(ReadCpuBody(r, body, "data", cp, &has_pod_entries));
  } else {
    TOPOLOGYD_RETURN_IF_ERROR(ReadCpuBody(r, doc, "", cp, &has_pod_entries));
  }
  // Before the legacy checksum: SpewCpuCheckpoint renders the struct without PodEntries, so a
  // sound file that has them would otherwise be called corrupted.
  if (has_pod_entries) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: holds pod-level CPU sets (podEntries, kubelet's PodLevelResourceManagers feature), "
        "which topologyd does not import; drain the pods that use pod-level resources first",
        source));
  }
  if (!data && cp.checksum != 0) {
    const uint32_t computed = Fnv1a32(SpewCpuCheckpoint(cp));
    if (cp.checksum != computed) return ChecksumMismatch(source, cp.checksum, computed);
  }
  return cp;
}

absl::StatusOr<MemoryCheckpoint> ParseMemoryCheckpoint(std::string_view bytes,
                                                       std::string_view source) {
  const Reader r(source);
  TOPOLOGYD_ASSIGN_OR_RETURN(json doc, ParseJson(bytes, source));
  if (!doc.is_object()) return r.Error("", "expected an object");
  MemoryCheckpoint cp;
  cp.entries.emplace();  // kubelet reads into non-nil maps
  cp.machine_state.emplace();
  TOPOLOGYD_ASSIGN_OR_RETURN(std::optional<std::string> data, VerifiedDataString(r, doc));
  if (data) {
    TOPOLOGYD_ASSIGN_OR_RETURN(json body, ParseJson(*data, fmt::format("{} (data)", source)));
    TOPOLOGYD_RETURN_IF_ERROR(ReadMemoryBody(r, body, "data", cp));
    return cp;
  }
  // The V2 struct starts with a non-nil PodEntries map; the V1 struct has no such field, so
  // remember whether the file set it and render both layouts.
  MemoryCheckpoint v2 = cp;
  v2.pod_entries.emplace();
  TOPOLOGYD_RETURN_IF_ERROR(ReadMemoryBody(r, doc, "", cp));
  TOPOLOGYD_RETURN_IF_ERROR(ReadMemoryBody(r, doc, "", v2));
  if (cp.checksum != 0) {
    const uint32_t as_v1 = Fnv1a32(SpewMemoryCheckpoint(cp, /*with_pod_entries=*/false));
    const uint32_t as_v2 = Fnv1a32(SpewMemoryCheckpoint(v2, /*with_pod_entries=*/true));
    if (cp.checksum != as_v1 && cp.checksum != as_v2) {
      return ChecksumMismatch(source, cp.checksum, as_v1);
    }
  }
  return v2.pod_entries->empty() ? cp : v2;
}

absl::StatusOr<DeviceCheckpoint> ParseDeviceCheckpoint(std::string_view bytes,
                                                       std::string_view source) {
  const Reader r(source);
  TOPOLOGYD_ASSIGN_OR_RETURN(json doc, ParseJson(bytes, source));
  if (!doc.is_object()) return r.Error("", "expected an object");
  DeviceCheckpoint cp;
  // kubelet reads into checkpoint.New(empty slice, empty map).
  cp.pod_device_entries.emplace();
  cp.registered_devices.emplace();
  TOPOLOGYD_RETURN_IF_ERROR(
      r.Struct(doc, "", [&](const std::string& name, const json& v, const std::string& at) {
        if (name == "checksum") return r.Uint64(v, at, cp.checksum);
        if (name != "data") return absl::OkStatus();
        return r.Struct(v, at, [&](const std::string& f, const json& fv, const std::string& f_at) {
          if (f == "poddeviceentries") {
            return r.List(fv, f_at, cp.pod_device_entries,
                          [&r](const json& e, const std::string& e_at, PodDevicesEntry& out) {
                            return ReadDeviceEntry(r, e, e_at, out);
                          });
          }
          if (f == "registereddevices") {
            return r.Map(fv, f_at, cp.registered_devices,
                         [&r](const json& ids, const std::string& ids_at,
                              std::optional<std::vector<std::string>>& out) {
                           return OptionalStringList(r, ids, ids_at, out);
                         });
          }
          return absl::OkStatus();
        });
      }));
  const uint32_t computed = Fnv1a32(SpewDeviceData(cp));
  if (cp.checksum != computed) return ChecksumMismatch(source, cp.checksum, computed);
  return cp;
}

}  // namespace topologyd::state::kubelet
