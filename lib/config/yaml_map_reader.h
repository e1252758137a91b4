// Reading YAML mappings against a fixed schema, collecting every problem as
// "file:line: key: message": topologyd's configuration and the shim's share these rules
// (unknown and duplicate keys reported, types checked, durations in kubelet's syntax).
// Header-only; thread-compatible.
#pragma once

#include <charconv>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

#include "lib/common/nearest_name.h"
#include "lib/common/quote.h"
#include "lib/config/duration.h"

namespace topologyd::config {

// Collects problems as "file:line: key: message"; Joined() lists them in line order (those
// without a line first), so the file reads top to bottom whatever order they were found in.
class Problems {
 public:
  explicit Problems(std::string file) : file_(std::move(file)) {}
  void Add(const YAML::Node& at, const std::string& key, const std::string& message) {
    AddAtLine(at.IsDefined() ? at.Mark().line + 1 : 0, key, message);
  }
  void AddAtLine(int line, const std::string& key, const std::string& message) {
    lines_.emplace_back(line, line > 0 ? fmt::format("{}:{}: {}: {}", file_, line, key, message)
                                       : fmt::format("{}: {}: {}", file_, key, message));
  }
  bool empty() const { return lines_.empty(); }
  std::string Joined() const {
    std::vector<std::pair<int, std::string>> sorted = lines_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> texts;
    for (auto& [line, text] : sorted) texts.push_back(std::move(text));
    return fmt::format("{}", fmt::join(texts, "\n"));
  }

 private:
  std::string file_;
  std::vector<std::pair<int, std::string>> lines_;
};

inline std::string Join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

inline std::string KeyPathOf(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// yaml-cpp keeps every pair of a mapping and lookups see the first, so a repeated key would
// silently lose its later value. Reports each repeat at its own line.
inline void ReportDuplicateKeys(const YAML::Node& map, const std::string& prefix,
                                Problems* problems) {
  std::map<std::string, int> first_line;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    auto [first, inserted] = first_line.emplace(it->first.Scalar(), it->first.Mark().line + 1);
    if (!inserted) {
      problems->Add(it->first, KeyPathOf(prefix, it->first.Scalar()),
                    fmt::format("duplicate key (first set on line {})", first->second));
    }
  }
}

// Reads the keys of one YAML mapping against a fixed schema. Every Get* marks its key as
// known; Finish() reports the keys nobody asked for.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string prefix, Problems* problems)
      : node_(node), prefix_(std::move(prefix)), problems_(problems) {}

  std::string KeyPath(const std::string& key) const { return KeyPathOf(prefix_, key); }

  // The node of `key`, or an undefined node when absent. Marks the key as known.
  YAML::Node Get(const std::string& key) {
    known_.insert(key);
    if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // The key node of `key` (for its line: yaml-cpp marks an empty value at the next token).
  YAML::Node KeyNode(const std::string& key) const {
    if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->first;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  bool Scalar(const std::string& key, std::string* out) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return false;
    if (!n.IsScalar()) {
      problems_->Add(n, KeyPath(key), "expected a string");
      return false;
    }
    *out = n.Scalar();
    return true;
  }

  void String(const std::string& key, std::string* out,
              const std::vector<std::string>& allowed = {}) {
    std::string value;
    if (!Scalar(key, &value)) return;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      problems_->Add(
          Get(key), KeyPath(key),
          fmt::format("unknown value {} (allowed: {})", QuoteForMessage(value), Join(allowed)));
      return;
    }
    if (allowed.empty() && value.empty()) {
      problems_->Add(Get(key), KeyPath(key), "must not be empty");
      return;
    }
    *out = value;
  }

  // A path: like String, but a key given without a value (`stateDir:`, `~`) is an error too,
  // as `""` is, instead of quietly meaning the default.
  void Path(const std::string& key, std::string* out) {
    if (YAML::Node n = Get(key); n.IsDefined() && n.IsNull()) {
      problems_->Add(KeyNode(key), KeyPath(key), "must not be empty");
      return;
    }
    String(key, out);
  }

  void Bool(const std::string& key, bool* out) {
    std::string value;
    if (!Scalar(key, &value)) return;
    if (value == "true") {
      *out = true;
    } else if (value == "false") {
      *out = false;
    } else {
      problems_->Add(Get(key), KeyPath(key),
                     fmt::format("expected true or false, got {}", QuoteForMessage(value)));
    }
  }

  template <typename Int>
  bool ParseInt(const YAML::Node& n, const std::string& path, Int* out, int base = 10) {
    if (!n.IsScalar()) {
      problems_->Add(n, path, "expected an integer");
      return false;
    }
    const std::string& s = n.Scalar();
    Int value{};
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
    if (ec == std::errc::result_out_of_range && ptr == s.data() + s.size()) {
      problems_->Add(n, path,
                     fmt::format("{} is out of range ({} to {})", QuoteForMessage(s),
                                 std::numeric_limits<Int>::min(), std::numeric_limits<Int>::max()));
      return false;
    }
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      problems_->Add(n, path, fmt::format("expected an integer, got {}", QuoteForMessage(s)));
      return false;
    }
    *out = value;
    return true;
  }

  // True when the key is set to a valid integer (stored in `out`).
  template <typename Int>
  bool Integer(const std::string& key, Int* out) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return false;
    return ParseInt(n, KeyPath(key), out);
  }

  void Duration(const std::string& key, std::chrono::milliseconds* out) {
    std::string value;
    if (!Scalar(key, &value)) return;
    auto d = ParseDuration(value);
    if (!d.ok()) {
      problems_->Add(Get(key), KeyPath(key), std::string(d.status().message()));
      return;
    }
    *out = *d;
  }

  void StringMap(const std::string& key, std::map<std::string, std::string>* out) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return;
    if (!n.IsMap()) {
      problems_->Add(n, KeyPath(key), "expected a mapping of names to values");
      return;
    }
    ReportDuplicateKeys(n, KeyPath(key), problems_);
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->second.IsScalar()) {
        problems_->Add(it->second, KeyPath(key) + "." + it->first.Scalar(), "expected a string");
        continue;
      }
      (*out)[it->first.Scalar()] = it->second.Scalar();
    }
  }

  // Reads a nested mapping with `fn(MapReader&)`; reports a non-mapping value.
  void Nested(const std::string& key, const std::function<void(MapReader&)>& fn) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return;
    if (!n.IsMap()) {
      problems_->Add(n, KeyPath(key), "expected a mapping");
      return;
    }
    MapReader nested(n, KeyPath(key), problems_);
    fn(nested);
    nested.Finish();
  }

  // Reads a sequence of mappings, each with `fn(MapReader&, index)`.
  void SequenceOfMaps(const std::string& key, const std::function<void(MapReader&, size_t)>& fn) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return;
    if (!n.IsSequence()) {
      problems_->Add(n, KeyPath(key), "expected a list");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      std::string path = fmt::format("{}[{}]", KeyPath(key), i);
      if (!n[i].IsMap()) {
        problems_->Add(n[i], path, "expected a mapping");
        continue;
      }
      MapReader item(n[i], path, problems_);
      fn(item, i);
      item.Finish();
    }
  }

  template <typename Int>
  void IntegerList(const std::string& key, std::vector<Int>* out) {
    YAML::Node n = Get(key);
    if (!n.IsDefined() || n.IsNull()) return;
    if (!n.IsSequence()) {
      problems_->Add(n, KeyPath(key), "expected a list of integers");
      return;
    }
    out->clear();
    for (size_t i = 0; i < n.size(); ++i) {
      Int value{};
      if (ParseInt(n[i], fmt::format("{}[{}]", KeyPath(key), i), &value)) out->push_back(value);
    }
  }

  void Finish() {
    if (!node_.IsMap()) return;
    std::vector<std::string> known(known_.begin(), known_.end());
    ReportDuplicateKeys(node_, prefix_, problems_);
    std::set<std::string> seen;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "<non-scalar key>";
      // A repeated unknown key is reported as unknown once; its repeats as duplicates.
      if (it->first.IsScalar() && !seen.insert(key).second) continue;
      if (!known_.count(key)) {
        // One likely key reads better than the whole list (28 at the top level).
        std::optional<std::string> near = NearestName(key, known);
        problems_->Add(it->first, KeyPath(key),
                       near ? fmt::format("unknown key; did you mean {}?", *near)
                            : fmt::format("unknown key (known keys here: {})", Join(known)));
      }
    }
  }

  Problems* problems() { return problems_; }

 private:
  YAML::Node node_;
  std::string prefix_;
  Problems* problems_;
  std::set<std::string> known_;
};

}  // namespace topologyd::config
