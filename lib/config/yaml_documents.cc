#include "lib/config/yaml_documents.h"

#include <exception>
#include <sstream>
#include <string_view>

#include "fmt/format.h"
#include "yaml-cpp/eventhandler.h"

#include "lib/common/quote.h"

namespace topologyd::yaml {
namespace {

// Forwards every event to `inner` (when set) and notes where the current document starts,
// where its root node is and whether that root has content.
class DocumentTracker : public YAML::EventHandler {
 public:
  explicit DocumentTracker(YAML::EventHandler* inner) : inner_(inner) {}

  const YAML::Mark& start() const { return start_; }
  const YAML::Mark& root() const { return root_; }
  bool empty() const { return empty_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    root_ = mark;
    empty_ = true;
    seen_root_ = false;
    if (inner_) inner_->OnDocumentStart(mark);
  }
  void OnDocumentEnd() override {
    if (inner_) inner_->OnDocumentEnd();
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    SeeNode(mark, /*content=*/false);
    if (inner_) inner_->OnNull(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    SeeNode(mark, /*content=*/true);
    if (inner_) inner_->OnAlias(mark, anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    SeeNode(mark, /*content=*/true);
    if (inner_) inner_->OnScalar(mark, tag, anchor, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    SeeNode(mark, /*content=*/true);
    if (inner_) inner_->OnSequenceStart(mark, tag, anchor, style);
  }
  void OnSequenceEnd() override {
    if (inner_) inner_->OnSequenceEnd();
  }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    SeeNode(mark, /*content=*/true);
    if (inner_) inner_->OnMapStart(mark, tag, anchor, style);
  }
  void OnMapEnd() override {
    if (inner_) inner_->OnMapEnd();
  }

 private:
  // The first node of a document is its root.
  void SeeNode(const YAML::Mark& mark, bool content) {
    if (seen_root_) return;
    seen_root_ = true;
    root_ = mark;
    empty_ = !content;
  }

  YAML::EventHandler* inner_;
  YAML::Mark start_;
  YAML::Mark root_;
  bool empty_ = true;
  bool seen_root_ = false;
};

// The rest of the line at `mark`, for a message.
std::string_view LineAt(const std::string& text, const YAML::Mark& mark) {
  if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text.size()) return {};
  const std::string_view rest = std::string_view(text).substr(static_cast<size_t>(mark.pos));
  return rest.substr(0, rest.find('\n'));
}

YamlError NotADocument(const std::string& text, const YAML::Mark& mark) {
  return YamlError{.mark = mark,
                   .message = fmt::format("not a YAML document: cannot parse the text from {}",
                                          QuoteForMessage(LineAt(text, mark)))};
}

// Runs `read`, which returns std::optional<YamlError>, turning what it throws into a YamlError.
template <typename Read>
std::optional<YamlError> Guarded(Read read) {
  try {
    return read();
  } catch (const YAML::Exception& e) {
    return YamlError{.mark = e.mark, .message = "invalid YAML: " + e.msg};
  } catch (const std::exception& e) {
    return YamlError{.mark = YAML::Mark::null_mark(),
                     .message = fmt::format("cannot read the YAML: {}", e.what())};
  }
}

}  // namespace

std::optional<YamlError> ReadYamlDocuments(const std::string& text, YAML::EventHandler* handler,
                                           const std::function<bool(const YamlDocument&)>& visit) {
  return Guarded([&]() -> std::optional<YamlError> {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentTracker tracker(handler);
    int previous_start = -1;
    for (size_t index = 0; parser.HandleNextDocument(tracker); ++index) {
      // Each document starts past the previous one while the parser consumes input; one that
      // starts at the same place means it never will. The count is a backstop for that rule.
      if (tracker.start().pos == previous_start || index > text.size()) {
        return NotADocument(text, tracker.start());
      }
      previous_start = tracker.start().pos;
      if (!visit(YamlDocument{.index = index, .root = tracker.root(), .empty = tracker.empty()})) {
        break;
      }
    }
    return std::nullopt;
  });
}

std::optional<YamlError> LoadFirstYamlDocument(const std::string& text, YAML::Node* root) {
  return Guarded([&]() -> std::optional<YamlError> {
    *root = YAML::Load(text);
    return std::nullopt;
  });
}

}  // namespace topologyd::yaml
