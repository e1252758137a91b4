// Rendering command results: JSON (the scripting contract), YAML (the same document) and
// aligned text tables for people.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"

namespace topoctl {

// `j` as JSON text (`indent` as for nlohmann's dump: -1 compact). Strings that are not valid
// UTF-8 (a name taken from a manifest may hold any bytes) get U+FFFD for each bad byte instead
// of making dump() throw. Every JSON topoctl prints goes through here.
std::string JsonText(const nlohmann::json& j, int indent = -1);

// `doc` as pretty JSON or as YAML text, per `format` (kTable is not handled here).
std::string RenderDocument(const nlohmann::json& doc, OutputFormat format);

// Prints RenderDocument(doc, format) and a newline.
void PrintDocument(const nlohmann::json& doc, OutputFormat format);

// Prints `doc` with `print_table` for kTable, else as PrintDocument does.
void PrintResult(const nlohmann::json& doc, OutputFormat format,
                 const std::function<void(const nlohmann::json&)>& print_table);

// "0,2,3": ids as a table cell shows them.
std::string IdList(const std::vector<int>& ids);

// A minimal text table: a header row, then rows; columns padded to their widest cell.
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace topoctl
