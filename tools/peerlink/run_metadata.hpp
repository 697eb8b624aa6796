// What every JSON file the CLI writes says about how it was made: tool, version, git commit, UTC date,
// host and command line, so a result under bench/results/ names the code that measured it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace peerlink::cli {

/// {"tool": "peerlink", "version", "git_commit", "date" (ISO 8601 UTC), "host", "command"}.
nlohmann::json runMetadata(const std::string& commandLine);

/// The command line as typed, arguments joined by spaces.
std::string joinCommandLine(int argc, const char* const* argv);

}  // namespace peerlink::cli
