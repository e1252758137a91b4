// Reading a YAML stream document by document without trusting yaml-cpp to finish, for the
// loaders that accept exactly one document (the configuration, Pod manifests).
//
// yaml-cpp 0.7's parser can stop consuming input: on text such as "," or ",a" (alone or after
// a document) Parser::HandleNextDocument() reports an empty document at the same place again
// and again, so YAML::LoadAll() never returns and fills memory. ReadYamlDocuments() drives the
// parser itself and takes a document that starts where the previous one started (or more
// documents than the text has bytes) as text that is not YAML. YAML::Load() reads the first
// document only, so LoadFirstYamlDocument() always ends.
//
// Neither function throws: yaml-cpp's exceptions, std::bad_alloc included, become a YamlError.
// Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "yaml-cpp/yaml.h"

namespace topologyd::yaml {

// One document of a stream, as seen once it has been read.
struct YamlDocument {
  size_t index = 0;   // 0 for the first
  YAML::Mark root;    // where its root node starts
  bool empty = true;  // no content: a bare "---", or a null root such as "~"
};

// Why a text could not be read. `message` is whole ("invalid YAML: ...", "not a YAML document:
// ..."); callers prefix the place, from `mark` (0-based line and column; null when unknown).
struct YamlError {
  YAML::Mark mark;
  std::string message;
};

// Reads `text` one document at a time: each document's events go to `handler` (when not null),
// then the document to `visit`, which returns false to stop reading. The error that ended the
// reading, or nullopt when the text was read to its end or `visit` stopped.
std::optional<YamlError> ReadYamlDocuments(const std::string& text, YAML::EventHandler* handler,
                                           const std::function<bool(const YamlDocument&)>& visit);

// The first document of `text` as a node into `root` (a Null node when there is none). Meant
// for text that ReadYamlDocuments() has read without error.
std::optional<YamlError> LoadFirstYamlDocument(const std::string& text, YAML::Node* root);

}  // namespace topologyd::yaml
