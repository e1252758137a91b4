#include "lib/podspec/resources_annotation.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

#include "lib/common/absl_fmt.h"
#include "lib/common/quote.h"
#include "lib/common/status_macros.h"
#include "lib/pod/validate.h"

namespace topologyd::podspec {
namespace {

using Json = nlohmann::json;

// The format is four levels deep (object, list, container, requests); anything much deeper is
// refused while reading, before a tree is built.
constexpr size_t kMaxDepth = 8;

absl::Status Error(std::string_view path, std::string_view reason) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("annotation {}: {}", kResourcesAnnotation, reason));
  }
  return absl::InvalidArgumentError(
      fmt::format("annotation {}: {}: {}", kResourcesAnnotation, path, reason));
}

// `status` (a reason from lib/pod) at `path`; OK stays OK.
absl::Status AtPath(std::string_view path, const absl::Status& status) {
  return status.ok() ? status : Error(path, std::string(status.message()));
}

absl::Status AtField(std::string_view field, const absl::Status& status) {
  return status.ok() ? status
                     : absl::InvalidArgumentError(fmt::format("{}: {}", field, status.message()));
}

// A first pass over the text that nlohmann::json's tree would hide: a key repeated in an object
// (the tree keeps the last), nesting beyond kMaxDepth, and syntax errors, each with its path.
class StructureChecker {
 public:
  const absl::Status& status() const { return status_; }

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(Json::number_integer_t) { return Value(); }
  bool number_unsigned(Json::number_unsigned_t) { return Value(); }
  bool number_float(Json::number_float_t, const Json::string_t&) { return Value(); }
  bool string(Json::string_t&) { return Value(); }
  bool binary(Json::binary_t&) { return Value(); }
  bool start_object(size_t) { return Open(false); }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return Open(true); }
  bool end_array() { return Close(); }
  bool key(Json::string_t& key) {
    Frame& top = stack_.back();
    top.key = key;
    if (!top.keys.insert(key).second) {
      status_ = Error(Path(), "duplicate key");
      return false;
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    std::string_view what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." without the tag.
    if (auto end = what.find("] "); what.starts_with("[json.") && end != what.npos) {
      what.remove_prefix(end + 2);
    }
    status_ = Error("", fmt::format("malformed JSON: {}", what));
    return false;
  }

 private:
  struct Frame {
    bool is_array = false;
    size_t count = 0;            // arrays: elements begun so far
    std::string key;             // objects: the current key
    std::set<std::string> keys;  // objects: the keys seen
  };

  bool Value() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().count;
    return true;
  }
  bool Open(bool is_array) {
    Value();
    if (stack_.size() >= kMaxDepth) {
      status_ = Error(Path(), fmt::format("nested more than {} levels deep", kMaxDepth));
      return false;
    }
    stack_.push_back(Frame{.is_array = is_array});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  std::string Path() const {
    std::string path;
    for (const Frame& f : stack_) {
      if (f.is_array) {
        if (f.count > 0) path += fmt::format("[{}]", f.count - 1);
      } else if (!f.key.empty() || !f.keys.empty()) {
        if (!path.empty()) path += '.';
        path += f.key;
      }
    }
    return path;
  }

  std::vector<Frame> stack_;
  absl::Status status_;
};

std::string_view KindName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    default:
      return "something else";
  }
}

absl::Status Expected(std::string_view path, std::string_view what, const Json& got) {
  return Error(path, fmt::format("expected {}, got {}", what, KindName(got)));
}

// Every key of `object` is one of `allowed`.
absl::Status CheckKeys(const Json& object, std::string_view path,
                       std::initializer_list<std::string_view> allowed,
                       std::string_view hint = "") {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) {
      const std::string field = path.empty() ? key : fmt::format("{}.{}", path, key);
      return Error(field, hint.empty() ? "unknown field" : fmt::format("unknown field ({})", hint));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<pod::ResourceList> ParseResources(const Json& value, std::string_view container,
                                                 const std::string& path) {
  pod::ResourceList list;
  if (!value.is_object()) return Expected(path, "an object", value);
  for (const auto& [name, quantity] : value.items()) {
    TOPOLOGYD_RETURN_IF_ERROR(AtPath(fmt::format("{}[{}]", path, QuoteForMessage(name)),
                                     pod::ValidateContainerResourceName(container, name)));
    const std::string field = fmt::format("{}.{}", path, name);
    if (!quantity.is_string()) return Expected(field, "a quantity as a string", quantity);
    auto q = pod::Quantity::Parse(quantity.get_ref<const std::string&>());
    if (!q.ok()) return AtPath(field, q.status());
    TOPOLOGYD_RETURN_IF_ERROR(AtPath(field, pod::ValidateResourceQuantity(name, *q)));
    list.emplace(name, *q);
  }
  return list;
}

absl::StatusOr<pod::Container> ParseContainer(const Json& value, const std::string& path,
                                              bool init) {
  if (!value.is_object()) return Expected(path, "an object", value);
  if (init) {
    TOPOLOGYD_RETURN_IF_ERROR(
        CheckKeys(value, path, {"name", "restartPolicy", "requests", "limits"}));
  } else {
    TOPOLOGYD_RETURN_IF_ERROR(CheckKeys(value, path, {"name", "requests", "limits"},
                                        "restartPolicy is for init containers only"));
  }
  pod::Container c;
  auto name = value.find("name");
  if (name == value.end()) return Error(path + ".name", "required");
  if (!name->is_string()) return Expected(path + ".name", "a string", *name);
  c.name = name->get<std::string>();
  TOPOLOGYD_RETURN_IF_ERROR(AtPath(path + ".name", pod::ValidateContainerName(c.name)));
  if (auto policy = value.find("restartPolicy"); policy != value.end()) {
    if (!policy->is_string()) return Expected(path + ".restartPolicy", "a string", *policy);
    if (policy->get_ref<const std::string&>() != "Always") {
      return Error(path + ".restartPolicy",
                   fmt::format("unsupported value {}: only \"Always\" (a sidecar) may be set",
                               QuoteForMessage(policy->get_ref<const std::string&>())));
    }
    c.restart_always = true;
  }
  if (auto requests = value.find("requests"); requests != value.end()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(c.requests, ParseResources(*requests, c.name, path + ".requests"));
  }
  if (auto limits = value.find("limits"); limits != value.end()) {
    TOPOLOGYD_ASSIGN_OR_RETURN(c.limits, ParseResources(*limits, c.name, path + ".limits"));
  }
  return c;
}

absl::StatusOr<std::vector<pod::Container>> ParseContainers(const Json& root, std::string_view key,
                                                            bool init) {
  std::vector<pod::Container> out;
  auto list = root.find(key);
  if (list == root.end()) return out;
  for (size_t i = 0; i < list->size(); ++i) {
    TOPOLOGYD_ASSIGN_OR_RETURN(pod::Container c,
                               ParseContainer((*list)[i], fmt::format("{}[{}]", key, i), init));
    out.push_back(std::move(c));
  }
  return out;
}

// The parsed annotation's containers into `pod`, then defaulting and the checks across
// containers.
absl::Status ParseContainersInto(const Json& root, size_t max_containers, pod::Pod& pod) {
  if (!root.is_object()) return Expected("", "a JSON object", root);
  TOPOLOGYD_RETURN_IF_ERROR(CheckKeys(root, "", {"initContainers", "containers"}));
  size_t count = 0;
  for (std::string_view key : {"initContainers", "containers"}) {
    auto list = root.find(key);
    if (list == root.end()) continue;
    if (!list->is_array()) return Expected(key, "a list", *list);
    count += list->size();
  }
  TOPOLOGYD_RETURN_IF_ERROR(
      AtPath("containers", pod::ValidateContainerCount(count, max_containers)));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.init_containers, ParseContainers(root, "initContainers", true));
  TOPOLOGYD_ASSIGN_OR_RETURN(pod.containers, ParseContainers(root, "containers", false));
  if (pod.containers.empty()) return Error("containers", "at least one container is required");

  pod::ApplyRequestDefaults(pod);
  std::set<std::string_view> names;
  for (auto [list, key] : {std::pair{&pod.init_containers, "initContainers"},
                           std::pair{&pod.containers, "containers"}}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const pod::Container& c = (*list)[i];
      const std::string path = fmt::format("{}[{}]", key, i);
      TOPOLOGYD_RETURN_IF_ERROR(
          AtPath("", pod::ValidateRequestsAgainstLimits(c.requests, c.limits, path + ".requests")));
      if (!names.insert(c.name).second) {
        return Error(path + ".name",
                     fmt::format("duplicate container name {}", QuoteForMessage(c.name)));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<pod::Pod>> PodFromResourcesAnnotation(
    std::string_view uid, std::string_view namespace_name, std::string_view name,
    const std::map<std::string, std::string>& annotations, size_t max_containers) {
  auto annotation = annotations.find(std::string(kResourcesAnnotation));
  if (annotation == annotations.end()) return std::nullopt;

  pod::Pod pod;
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.uid", pod::ValidatePodUid(uid)));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.namespace", pod::ValidateNamespace(namespace_name)));
  TOPOLOGYD_RETURN_IF_ERROR(AtField("metadata.name", pod::ValidatePodName(name)));
  for (const auto& [key, value] : annotations) {
    TOPOLOGYD_RETURN_IF_ERROR(AtField(fmt::format("metadata.annotations[{}]", QuoteForMessage(key)),
                                      pod::ValidateAnnotationKey(key)));
  }
  TOPOLOGYD_RETURN_IF_ERROR(
      AtField("metadata.annotations", pod::ValidateAnnotationsSize(annotations)));
  pod.uid = uid;
  pod.namespace_name = namespace_name;
  pod.name = name;
  pod.annotations = annotations;

  const std::string& text = annotation->second;
  StructureChecker checker;
  Json::sax_parse(text, &checker);
  TOPOLOGYD_RETURN_IF_ERROR(checker.status());
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Error("", "malformed JSON");
  TOPOLOGYD_RETURN_IF_ERROR(ParseContainersInto(root, max_containers, pod));
  return pod;
}

}  // namespace topologyd::podspec
