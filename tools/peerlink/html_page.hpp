// What the HTML reports of `peerlink bench --html` and `peerlink coll --html` share: the page's head with
// its one inline style sheet, the run's metadata as text, and the footer. No scripts, nothing fetched.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace peerlink::cli {

/// runMetadata()'s field `key` (tool, version, git_commit, date, host, command) as text; "?" when missing.
std::string metaText(const nlohmann::json& generatedBy, const char* key);

/// Rows of a metadata table: (name, value), shown as text.
using MetaRows = std::vector<std::pair<std::string, std::string>>;

/// The run's own rows: tool and version, git commit, date (UTC), host, command.
MetaRows runMetaRows(const nlohmann::json& generatedBy);

/// <table class="meta"> of `rows`, escaped.
std::string metaTable(const MetaRows& rows);

/// "<!DOCTYPE html>" through "<body>": charset, viewport, the escaped `title` and the style sheet.
std::string htmlPageStart(const std::string& title);

/// The footer naming the peerlink that wrote the page, then "</body></html>".
std::string htmlPageEnd(const nlohmann::json& generatedBy);

}  // namespace peerlink::cli
