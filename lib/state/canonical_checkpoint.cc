#include "lib/state/canonical_checkpoint.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/state/checkpoint_checksum.h"
#include "lib/state/checkpoint_codec.h"

namespace topologyd::state {
namespace {

using nlohmann::json;

// Where the reader is. Objects of fixed members list them in canonical order; the top-level
// object is outside the checksummed data and may list its four in any order.
enum class Place {
  kTop,
  kData,
  kPods,
  kPod,
  kContainers,
  kContainer,
  kAffinity,
  kMemory,
  kMemoryItem,
  kDevices,
  kDeviceIds,
};

// Member names per object, sorted as the canonical form sorts them.
constexpr std::array<std::string_view, 4> kTopMembers = {"checksum", "data", "generation",
                                                         "version"};
constexpr std::array<std::string_view, 1> kDataMembers = {"pods"};
constexpr std::array<std::string_view, 5> kPodMembers = {"containers", "name", "namespace", "qos",
                                                         "uid"};
// "restartable" is in version 2 files only (checked once the version is known, in Finish()).
constexpr std::array<std::string_view, 10> kContainerMembers = {
    "cgroup", "container_id", "cpus", "devices",       "exclusive",
    "init",   "memory",       "name", "numa_affinity", "restartable"};
constexpr std::array<std::string_view, 3> kMemoryMembers = {"bytes", "numa_node", "resource"};

enum TopMember { kChecksum, kDataMember, kGeneration, kVersion };
enum PodMember { kPodContainers, kPodName, kPodNamespace, kPodQos, kPodUid };
enum ContainerMember {
  kCgroup,
  kContainerId,
  kCpus,
  kDevicesMember,
  kExclusive,
  kInit,
  kMemoryMember,
  kContainerName,
  kNumaAffinity,
  kRestartable,
};
enum MemoryMember { kBytes, kNumaNode, kResource };

template <size_t N>
int IndexOf(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// Whether the canonical form writes `text` escaped (a quote, a backslash or a control
// character); such strings take the careful path.
bool NeedsEscape(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
}

struct Frame {
  Place place;
  int member = -1;    // objects of fixed members: the member being read
  uint32_t seen = 0;  // ... and those read so far
  bool first = true;  // nothing written into this object or array yet
  std::string key;    // kDevices: the resource being read
};

// A json SAX handler. Every callback returns false (stopping the parse) as soon as the input
// is not a canonical checkpoint; the caller then leaves the file to the careful reader.
class Reader {
 public:
  std::optional<State> Finish() {
    if (!done_ || version_ == 0 || version_ > kCheckpointVersion || generation_ > kMaxGeneration) {
      return std::nullopt;
    }
    // The top-level members come in any order, so the version may follow the data.
    if (version_ == 1 ? with_restartable_ : without_restartable_) return std::nullopt;
    Flush();
    if (checksum_.Finish(generation_, version_) != stored_checksum_) return std::nullopt;
    state_.generation = generation_;
    if (!Validate(state_).ok()) return std::nullopt;
    return std::move(state_);
  }

  // The SAX interface.
  bool null() { return false; }
  bool number_integer(json::number_integer_t /*value*/) { return false; }
  bool number_float(json::number_float_t /*value*/, const std::string& /*text*/) { return false; }
  bool binary(json::binary_t& /*value*/) { return false; }
  bool parse_error(size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  bool boolean(bool value) {
    if (stack_.empty() || stack_.back().place != Place::kContainer) return false;
    switch (stack_.back().member) {
      case kExclusive:
        container_.exclusive = value;
        break;
      case kInit:
        container_.init = value;
        break;
      case kRestartable:
        container_.restartable = value;
        break;
      default:
        return false;
    }
    BeginValue();
    Write(value ? "true" : "false");
    return true;
  }

  bool number_unsigned(json::number_unsigned_t value) {
    if (stack_.empty()) return false;
    Frame& frame = stack_.back();
    switch (frame.place) {
      case Place::kTop:
        if (frame.member == kGeneration) {
          generation_ = value;
        } else if (frame.member == kVersion) {
          version_ = value;
        } else {
          return false;
        }
        return true;
      case Place::kAffinity:
        if (value > static_cast<uint64_t>(kMaxCheckpointNumaId)) return false;
        container_.numa_affinity.push_back(static_cast<int>(value));
        break;
      case Place::kMemoryItem:
        if (frame.member == kBytes) {
          memory_bytes_ = value;
        } else if (frame.member == kNumaNode && value <= kMaxCheckpointNumaId) {
          memory_node_ = static_cast<int>(value);
        } else {
          return false;
        }
        break;
      default:
        return false;
    }
    BeginValue();
    Write(fmt::format("{}", value));
    return true;
  }

  bool string(std::string& value) {
    if (stack_.empty()) return false;
    Frame& frame = stack_.back();
    if (frame.place == Place::kTop) {
      if (frame.member != kChecksum) return false;
      stored_checksum_ = std::move(value);
      return true;
    }
    if (NeedsEscape(value)) return false;
    BeginValue();
    Write("\"");
    Write(value);
    Write("\"");
    switch (frame.place) {
      case Place::kPod:
        switch (frame.member) {
          case kPodName:
            pod_.name = std::move(value);
            return true;
          case kPodNamespace:
            pod_.namespace_name = std::move(value);
            return true;
          case kPodQos:
            pod_.qos = std::move(value);
            return true;
          case kPodUid:
            pod_.uid = std::move(value);
            return true;
          default:
            return false;
        }
      case Place::kContainer:
        switch (frame.member) {
          case kCgroup:
            container_.cgroup = std::move(value);
            return true;
          case kContainerId:
            container_.container_id = std::move(value);
            return true;
          case kContainerName:
            container_.name = std::move(value);
            return true;
          case kCpus: {
            absl::StatusOr<CpuSet> cpus = CpuSet::Parse(value);
            if (!cpus.ok()) return false;
            container_.cpus = *std::move(cpus);
            return true;
          }
          default:
            return false;
        }
      case Place::kMemoryItem:
        if (frame.member != kResource) return false;
        memory_resource_ = std::move(value);
        return true;
      case Place::kDeviceIds:
        container_.devices[stack_[stack_.size() - 2].key].push_back(std::move(value));
        return true;
      default:
        return false;
    }
  }

  bool start_object(size_t /*elements*/) {
    Place place;
    if (stack_.empty()) {
      place = Place::kTop;
    } else {
      const Frame& frame = stack_.back();
      if (frame.place == Place::kTop && frame.member == kDataMember) {
        place = Place::kData;
      } else if (frame.place == Place::kPods) {
        place = Place::kPod;
        pod_ = PodRecord{};
        container_names_.clear();
      } else if (frame.place == Place::kContainers) {
        place = Place::kContainer;
        container_ = ContainerRecord{};
      } else if (frame.place == Place::kMemory) {
        place = Place::kMemoryItem;
        memory_resource_.clear();
      } else if (frame.place == Place::kContainer && frame.member == kDevicesMember) {
        place = Place::kDevices;
      } else {
        return false;
      }
      BeginValue();
      Write("{");
    }
    stack_.push_back(Frame{.place = place});
    return true;
  }

  bool key(std::string& name) {
    if (stack_.empty()) return false;
    Frame& frame = stack_.back();
    int index = -1;
    switch (frame.place) {
      case Place::kTop:
        index = IndexOf(kTopMembers, name);
        // Any order, each once.
        if (index < 0 || (frame.seen & (1u << index)) != 0) return false;
        frame.member = index;
        frame.seen |= 1u << index;
        return true;
      case Place::kData:
        index = IndexOf(kDataMembers, name);
        break;
      case Place::kPod:
        index = IndexOf(kPodMembers, name);
        break;
      case Place::kContainer:
        index = IndexOf(kContainerMembers, name);
        break;
      case Place::kMemoryItem:
        index = IndexOf(kMemoryMembers, name);
        break;
      case Place::kDevices:
        // Resource names, sorted and unique like every canonical object's members.
        if (!frame.first && !(frame.key < name)) return false;
        if (NeedsEscape(name)) return false;
        WriteKey(frame, name);
        frame.key = std::move(name);
        return true;
      default:
        return false;
    }
    // Fixed members: known, in canonical order, hence each once.
    if (index <= frame.member) return false;
    frame.member = index;
    frame.seen |= 1u << index;
    WriteKey(frame, name);
    return true;
  }

  bool end_object() {
    if (stack_.empty()) return false;
    const Frame frame = std::move(stack_.back());
    stack_.pop_back();
    switch (frame.place) {
      case Place::kTop:
        if (frame.seen != (1u << kTopMembers.size()) - 1) return false;
        done_ = true;
        return true;
      case Place::kData:
        if (frame.seen != (1u << kDataMembers.size()) - 1) return false;
        break;
      case Place::kPod: {
        if (frame.seen != (1u << kPodMembers.size()) - 1 || pod_.uid.empty()) return false;
        std::string uid = pod_.uid;
        if (!state_.pods.emplace(std::move(uid), std::move(pod_)).second) return false;
        break;
      }
      case Place::kContainer: {
        const uint32_t all = (1u << kContainerMembers.size()) - 1;
        const bool has_restartable = (frame.seen & (1u << kRestartable)) != 0;
        if ((frame.seen | (1u << kRestartable)) != all ||
            (container_.restartable && !container_.init) ||
            !container_names_.insert(container_.name).second) {
          return false;
        }
        (has_restartable ? with_restartable_ : without_restartable_) = true;
        pod_.containers.push_back(std::move(container_));
        break;
      }
      case Place::kMemoryItem:
        if (frame.seen != (1u << kMemoryMembers.size()) - 1 ||
            !container_.memory[memory_node_].emplace(memory_resource_, memory_bytes_).second) {
          return false;
        }
        break;
      case Place::kDevices:
        break;
      default:
        return false;
    }
    Write("}");
    return true;
  }

  bool start_array(size_t /*elements*/) {
    if (stack_.empty()) return false;
    Frame& frame = stack_.back();
    Place place;
    if (frame.place == Place::kData && frame.member == 0) {
      place = Place::kPods;
    } else if (frame.place == Place::kPod && frame.member == kPodContainers) {
      place = Place::kContainers;
    } else if (frame.place == Place::kContainer && frame.member == kNumaAffinity) {
      place = Place::kAffinity;
    } else if (frame.place == Place::kContainer && frame.member == kMemoryMember) {
      place = Place::kMemory;
    } else if (frame.place == Place::kDevices) {
      place = Place::kDeviceIds;
      // An empty list still names the resource, as the careful reader records it.
      container_.devices[frame.key];
    } else {
      return false;
    }
    BeginValue();
    Write("[");
    stack_.push_back(Frame{.place = place});
    return true;
  }

  bool end_array() {
    if (stack_.empty()) return false;
    stack_.pop_back();
    Write("]");
    return true;
  }

 private:
  // Before a value in an array: the comma that separates it from the previous one.
  void BeginValue() {
    if (stack_.empty()) return;
    Frame& frame = stack_.back();
    switch (frame.place) {
      case Place::kPods:
      case Place::kContainers:
      case Place::kAffinity:
      case Place::kMemory:
      case Place::kDeviceIds:
        if (!frame.first) Write(",");
        frame.first = false;
        break;
      default:
        break;
    }
  }

  void WriteKey(Frame& frame, std::string_view name) {
    if (!frame.first) Write(",");
    frame.first = false;
    Write("\"");
    Write(name);
    Write("\":");
  }

  // Canonical text of the data, summed a buffer at a time.
  void Write(std::string_view text) {
    canonical_.append(text);
    if (canonical_.size() >= kFlushAt) Flush();
  }
  void Flush() {
    checksum_.AddData(canonical_);
    canonical_.clear();
  }

  static constexpr size_t kFlushAt = 16 * 1024;

  std::vector<Frame> stack_;
  State state_;
  PodRecord pod_;
  std::set<std::string> container_names_;
  ContainerRecord container_;
  std::string memory_resource_;
  int memory_node_ = 0;
  uint64_t memory_bytes_ = 0;
  uint64_t version_ = 0;
  uint64_t generation_ = 0;
  // Whether some container listed "restartable", and whether some did not.
  bool with_restartable_ = false;
  bool without_restartable_ = false;
  std::string stored_checksum_;
  bool done_ = false;
  std::string canonical_;
  CheckpointChecksum checksum_;
};

}  // namespace

std::optional<State> DecodeCanonicalCheckpoint(std::string_view bytes) {
  Reader reader;
  if (!json::sax_parse(bytes.begin(), bytes.end(), &reader)) return std::nullopt;
  return reader.Finish();
}

}  // namespace topologyd::state
