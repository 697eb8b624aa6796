#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/json_io.hpp"
#include "matrix_format.hpp"

namespace peerlink::cli {

CLI::App* addEnvCommand(CLI::App& app, EnvOptions& options) {
  CLI::App* command = app.add_subcommand(
      "env",
      "List the PEERLINK_* parameters for users, and any other that is set: value, where it came from, what it "
      "allows");
  command->add_flag("--json", options.json, "Print the list as JSON");
  command->add_flag("--all", options.all, "List every parameter, the ones for tuning and testing peerlink too");
  return command;
}

int runEnv(const EnvOptions& options, Context& context) {
  std::vector<const ParamValue*> shown;
  for (const ParamValue& value : context.params.values()) {
    const bool forUsers = value.spec->audience == ParamAudience::User;
    if (options.all || forUsers || value.source != ParamSource::Default) shown.push_back(&value);
  }
  const std::size_t hidden = context.params.values().size() - shown.size();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParamValue* value : shown) {
      list.push_back({{"name", value->spec->name},
                      {"value", value->value},
                      {"source", paramSourceName(value->source)},
                      {"default", value->spec->defaultValue},
                      {"allowed", describeAllowed(*value->spec)},
                      {"audience", paramAudienceName(value->spec->audience)},
                      {"description", value->spec->description}});
    }
    nlohmann::json document = {{"parameters", list}, {"unknown", context.params.unknownVariables()}};
    context.out << jsonText(document) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const ParamValue* value : shown) {
    rows.push_back({value->spec->name, value->value.empty() ? "(empty)" : value->value, paramSourceName(value->source),
                    describeAllowed(*value->spec)});
  }
  context.out << formatTable({"Parameter", "Value", "Source", "Allowed"}, rows) << "\n";
  for (const ParamValue* value : shown) {
    context.out << value->spec->name << "\n    " << value->spec->description << "\n";
  }
  if (hidden > 0) {
    context.out << "\n" << hidden << " more for tuning and testing peerlink, at their defaults: `peerlink env --all`\n";
  }
  for (const std::string& unknown : context.params.unknownVariables()) context.out << "\nwarning: " << unknown << "\n";
  return 0;
}

}  // namespace peerlink::cli
