#include "lib/pod/pod_manifest.h"

#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/config/yaml_documents.h"
#include "lib/pod/validate.h"

namespace topologyd::pod {
namespace {

absl::Status FieldError(std::string_view path, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", path, message));
}

// `status` (a reason from validate.h) prefixed with the field path; OK stays OK.
absl::Status AtField(std::string_view path, const absl::Status& status) {
  return status.ok() ? status : FieldError(path, std::string(status.message()));
}

std::string_view KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "nothing";
}

// A present, non-null child of a map, or an undefined node.
YAML::Node Child(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) {
      if (kv.second.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
      return kv.second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

absl::StatusOr<std::string> ScalarString(const YAML::Node& node, std::string_view path) {
  if (!node.IsScalar())
    return FieldError(path, fmt::format("expected a string, got {}", KindName(node)));
  return node.Scalar();
}

absl::StatusOr<ResourceList> ParseResourceList(const YAML::Node& node, std::string_view container,
                                               const std::string& path) {
  ResourceList list;
  if (!node.IsDefined()) return list;
  if (!node.IsMap()) return FieldError(path, fmt::format("expected a map, got {}", KindName(node)));
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return FieldError(path, "resource names must be strings");
    const std::string name = kv.first.Scalar();
    TOPOLOGYD_RETURN_IF_ERROR(AtField(fmt::format("{}[{}]", path, QuoteForMessage(name)),
                                      ValidateContainerResourceName(container, name)));
    const std::string field = fmt::format("{}.{}", path, name);
    if (!kv.second.IsScalar()) {
      return FieldError(field, fmt::format("expected a quantity, got {}", KindName(kv.second)));
    }
    auto q = Quantity::Parse(kv.second.Scalar());
    if (!q.ok()) return FieldError(field, std::string(q.status().message()));
    if (absl::Status s = ValidateResourceQuantity(name, *q); !s.ok()) {
      return FieldError(field, std::string(s.message()));
    }
    if (!list.emplace(name, *q).second) return FieldError(field, "duplicate resource");
  }
  return list;
}

absl::StatusOr<Container> ParseContainer(const YAML::Node& node, const std::string& path,
                                         bool init) {
  if (!node.IsMap()) return FieldError(path, fmt::format("expected a map, got {}", KindName(node)));
  Container c;
  YAML::Node name = Child(node, "name");
  if (!name.IsDefined()) return FieldError(path + ".name", "required");
  TOPOLOGYD_ASSIGN_OR_RETURN(c.name, ScalarString(name, path + ".name"));
  TOPOLOGYD_RETURN_IF_ERROR(AtField(path + ".name", ValidateContainerName(c.name)));

  YAML::Node restart = Child(node, "restartPolicy");
  if (restart.IsDefined()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string policy, ScalarString(restart, path + ".restartPolicy"));
    if (policy != "Always" && policy != "Never" && policy != "OnFailure") {
      return FieldError(path + ".restartPolicy",
                        fmt::format("unsupported value {}: expected Always, Never or OnFailure",
                                    QuoteForMessage(policy)));
    }
    c.restart_always = init && policy == "Always";
  }

  YAML::Node resources = Child(node, "resources");
  if (resources.IsDefined()) {
    if (!resources.IsMap()) {
      return FieldError(path + ".resources",
                        fmt::format("expected a map, got {}", KindName(resources)));
    }
    TOPOLOGYD_ASSIGN_OR_RETURN(c.requests, ParseResourceList(Child(resources, "requests"), c.name,
                                                             path + ".resources.requests"));
    TOPOLOGYD_ASSIGN_OR_RETURN(c.limits, ParseResourceList(Child(resources, "limits"), c.name,
                                                           path + ".resources.limits"));
  }
  for (const auto& [resource, limit] : c.limits) c.requests.try_emplace(resource, limit);
  TOPOLOGYD_RETURN_IF_ERROR(
      ValidateRequestsAgainstLimits(c.requests, c.limits, path + ".resources.requests"));
  return c;
}

// `prefix` is where the spec is in the document ("spec" in a manifest, "" when the document is
// the spec), for the paths in messages.
std::string SpecPath(std::string_view prefix, std::string_view field) {
  return prefix.empty() ? std::string(field) : fmt::format("{}.{}", prefix, field);
}

absl::StatusOr<std::vector<Container>> ParseContainers(const YAML::Node& spec,
                                                       std::string_view prefix,
                                                       std::string_view key, bool init) {
  std::vector<Container> out;
  const std::string path = SpecPath(prefix, key);
  YAML::Node list = Child(spec, key);
  if (!list.IsDefined()) return out;
  if (!list.IsSequence())
    return FieldError(path, fmt::format("expected a list, got {}", KindName(list)));
  for (size_t i = 0; i < list.size(); ++i) {
    TOPOLOGYD_ASSIGN_OR_RETURN(Container c,
                               ParseContainer(list[i], fmt::format("{}[{}]", path, i), init));
    out.push_back(std::move(c));
  }
  return out;
}

absl::Status ParseAnnotations(const YAML::Node& annotations, Pod* pod) {
  if (!annotations.IsDefined()) return absl::OkStatus();
  if (!annotations.IsMap()) {
    return FieldError("metadata.annotations",
                      fmt::format("expected a map, got {}", KindName(annotations)));
  }
  for (const auto& kv : annotations) {
    if (!kv.first.IsScalar()) return FieldError("metadata.annotations", "keys must be strings");
    const std::string key = kv.first.Scalar();
    TOPOLOGYD_RETURN_IF_ERROR(AtField(fmt::format("metadata.annotations[{}]", QuoteForMessage(key)),
                                      ValidateAnnotationKey(key)));
    TOPOLOGYD_ASSIGN_OR_RETURN(
        std::string value, ScalarString(kv.second, fmt::format("metadata.annotations.{}", key)));
    pod->annotations[key] = std::move(value);
  }
  return AtField("metadata.annotations", ValidateAnnotationsSize(pod->annotations));
}

// metadata.name (required), .namespace ("default" when absent or empty), .uid (may be absent)
// and .annotations, under the API server's name rules.
absl::Status ParseMetadata(const YAML::Node& metadata, Pod* pod) {
  YAML::Node name = Child(metadata, "name");
  if (!name.IsDefined()) return FieldError("metadata.name", "required");
  TOPOLOGYD_ASSIGN_OR_RETURN(pod->name, ScalarString(name, "metadata.name"));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.name", ValidatePodName(pod->name)));
  if (YAML::Node ns = Child(metadata, "namespace"); ns.IsDefined()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(pod->namespace_name, ScalarString(ns, "metadata.namespace"));
  }
  if (pod->namespace_name.empty()) pod->namespace_name = "default";
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.namespace", ValidateNamespace(pod->namespace_name)));
  if (YAML::Node uid = Child(metadata, "uid"); uid.IsDefined()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(pod->uid, ScalarString(uid, "metadata.uid"));
  }
  if (!pod->uid.empty()) {
    TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.uid", ValidatePodUid(pod->uid)));
  }
  return ParseAnnotations(Child(metadata, "annotations"), pod);
}

// The entries of spec.<key> when it is a list; 0 otherwise (ParseContainers reports that).
size_t ListSize(const YAML::Node& spec, std::string_view key) {
  YAML::Node list = Child(spec, key);
  return list.IsSequence() ? list.size() : 0;
}

// The containers of a PodSpec into `pod`, with every check across them.
absl::Status ParseSpec(const YAML::Node& spec, std::string_view prefix, size_t max_containers,
                       Pod* pod) {
  const std::string where = prefix.empty() ? "the pod spec" : std::string(prefix);
  if (!spec.IsMap()) {
    return FieldError(where, fmt::format("expected a map, got {}", KindName(spec)));
  }
  if (Child(spec, "resources").IsDefined()) {
    return FieldError(SpecPath(prefix, "resources"), "pod-level resources are not supported");
  }
  TOPOLOGYD_RETURN_IF_ERROR(AtField(
      SpecPath(prefix, "containers"),
      ValidateContainerCount(ListSize(spec, "initContainers") + ListSize(spec, "containers"),
                             max_containers)));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod->init_containers,
                             ParseContainers(spec, prefix, "initContainers", true));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod->containers, ParseContainers(spec, prefix, "containers", false));
  if (pod->containers.empty()) {
    return FieldError(SpecPath(prefix, "containers"), "at least one container is required");
  }
  std::set<std::string> names;
  auto check_unique = [&](const std::vector<Container>& list,
                          std::string_view key) -> absl::Status {
    for (size_t i = 0; i < list.size(); ++i) {
      if (!names.insert(list[i].name).second) {
        return FieldError(
            fmt::format("{}[{}].name", SpecPath(prefix, key), i),
            fmt::format("duplicate container name {}", QuoteForMessage(list[i].name)));
      }
    }
    return absl::OkStatus();
  };
  TOPOLOGYD_RETURN_IF_ERROR(check_unique(pod->init_containers, "initContainers"));
  return check_unique(pod->containers, "containers");
}

absl::StatusOr<Pod> ParseDocument(const YAML::Node& root, size_t max_containers) {
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        fmt::format("a Pod manifest must be a map, got {}", KindName(root)));
  }
  YAML::Node kind = Child(root, "kind");
  if (kind.IsDefined()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(std::string k, ScalarString(kind, "kind"));
    if (k != "Pod")
      return FieldError("kind", fmt::format("expected Pod, got {}", QuoteForMessage(k)));
  }
  Pod pod;
  YAML::Node metadata = Child(root, "metadata");
  if (!metadata.IsDefined()) return FieldError("metadata", "required");
  if (!metadata.IsMap()) {
    return FieldError("metadata", fmt::format("expected a map, got {}", KindName(metadata)));
  }
  TOPOLOGYD_RETURN_IF_ERROR(ParseMetadata(metadata, &pod));

  YAML::Node spec = Child(root, "spec");
  if (!spec.IsDefined()) return FieldError("spec", "required");
  TOPOLOGYD_RETURN_IF_ERROR(ParseSpec(spec, "spec", max_containers, &pod));
  return pod;
}

absl::Status LineError(const YAML::Mark& mark, std::string_view message) {
  if (mark.is_null()) return absl::InvalidArgumentError(std::string(message));
  return absl::InvalidArgumentError(
      fmt::format("line {}, column {}: {}", mark.line + 1, mark.column + 1, message));
}

// The first key that repeats in a mapping, in any document read so far. Runs on the event
// stream: nothing is built and aliases are not expanded, so it is linear in the text.
class DuplicateKeyChecker : public YAML::EventHandler {
 public:
  const absl::Status& status() const { return status_; }

  void OnDocumentStart(const YAML::Mark&) override { stack_.clear(); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    BeginNode(mark, nullptr);
    EndNode();
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    BeginNode(mark, nullptr);
    EndNode();
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    BeginNode(mark, &value);
    EndNode();
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    BeginNode(mark, nullptr);
    stack_.push_back(Frame{.is_map = false});
  }
  void OnSequenceEnd() override {
    stack_.pop_back();
    EndNode();
  }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    BeginNode(mark, nullptr);
    stack_.push_back(Frame{.is_map = true});
  }
  void OnMapEnd() override {
    stack_.pop_back();
    EndNode();
  }

 private:
  struct Frame {
    bool is_map = false;
    bool at_key = true;               // maps alternate key, value
    std::map<std::string, int> keys;  // scalar key -> 1-based line of its first occurrence
  };

  void BeginNode(const YAML::Mark& mark, const std::string* scalar) {
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    if (!top.is_map || !top.at_key || scalar == nullptr || !status_.ok()) return;
    auto [it, inserted] = top.keys.emplace(*scalar, mark.line + 1);
    if (!inserted) {
      status_ = LineError(mark, fmt::format("duplicate key {} (first at line {})",
                                            QuoteForMessage(*scalar), it->second));
    }
  }
  void EndNode() {
    if (!stack_.empty() && stack_.back().is_map) stack_.back().at_key = !stack_.back().at_key;
  }

  std::vector<Frame> stack_;
  absl::Status status_;
};

// What YAML::Load hides: it keeps every entry of a mapping whose key repeats (Child() then reads
// the first, annotations keep the last) and returns the first document only. Kubernetes' strict
// decoding refuses duplicate fields, and a second Pod would be silently dropped, so both are
// errors, as is text on which yaml-cpp cannot read on. Reading stops at the first problem. JSON
// goes through here too (yaml-cpp reads it as YAML).
absl::Status CheckStructure(const std::string& text, std::string_view what) {
  DuplicateKeyChecker checker;
  absl::Status status;
  const std::optional<yaml::YamlError> error =
      yaml::ReadYamlDocuments(text, &checker, [&](const yaml::YamlDocument& document) {
        status = checker.status();
        if (status.ok() && document.index > 0 && !document.empty) {
          status = LineError(document.root, fmt::format("a second YAML document; {}", what));
        }
        return status.ok();
      });
  if (error) return LineError(error->mark, error->message);
  return status;
}

// One document of `text`, checked for structure (`what` says what it must hold), to `read`.
absl::StatusOr<Pod> ReadSingleDocument(
    std::string_view text, std::string_view what,
    const std::function<absl::StatusOr<Pod>(const YAML::Node&)>& read) {
  const std::string buffer(text);
  TOPOLOGYD_RETURN_IF_ERROR(CheckStructure(buffer, what));
  YAML::Node root;
  if (std::optional<yaml::YamlError> error = yaml::LoadFirstYamlDocument(buffer, &root)) {
    return LineError(error->mark, error->message);
  }
  // Reading a loaded node should not throw; none may escape lib/ if it does.
  try {
    return read(root);
  } catch (const YAML::Exception& e) {
    return LineError(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(fmt::format("cannot read the document: {}", e.what()));
  }
}

}  // namespace

absl::StatusOr<Pod> ParsePodManifest(std::string_view text, size_t max_containers) {
  return ReadSingleDocument(
      text, "a Pod manifest must hold exactly one Pod",
      [&](const YAML::Node& root) { return ParseDocument(root, max_containers); });
}

absl::StatusOr<Pod> ParsePodSpec(std::string_view text, Pod identity, size_t max_containers) {
  return ReadSingleDocument(text, "the pod spec must be one document",
                            [&](const YAML::Node& root) -> absl::StatusOr<Pod> {
                              Pod pod = identity;
                              TOPOLOGYD_RETURN_IF_ERROR(ParseSpec(root, "", max_containers, &pod));
                              return pod;
                            });
}

}  // namespace topologyd::pod
