#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/json_io.hpp"
#include "matrix_format.hpp"

namespace peerlink::cli {

CLI::App* addEnvCommand(CLI::App& app, EnvOptions& options) {
  CLI::App* command =
      app.add_subcommand("env", "List every PEERLINK_* parameter: its value, where it came from, what it allows");
  command->add_flag("--json", options.json, "Print the list as JSON");
  return command;
}

int runEnv(const EnvOptions& options, Context& context) {
  const auto& values = context.params.values();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParamValue& value : values) {
      list.push_back({{"name", value.spec->name},
                      {"value", value.value},
                      {"source", paramSourceName(value.source)},
                      {"default", value.spec->defaultValue},
                      {"allowed", describeAllowed(*value.spec)},
                      {"description", value.spec->description}});
    }
    nlohmann::json document = {{"parameters", list}, {"unknown", context.params.unknownVariables()}};
    context.out << jsonText(document) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const ParamValue& value : values) {
    rows.push_back({value.spec->name, value.value.empty() ? "(empty)" : value.value, paramSourceName(value.source),
                    describeAllowed(*value.spec)});
  }
  context.out << formatTable({"Parameter", "Value", "Source", "Allowed"}, rows) << "\n";
  for (const ParamValue& value : values) context.out << value.spec->name << "\n    " << value.spec->description << "\n";
  for (const std::string& unknown : context.params.unknownVariables()) context.out << "\nwarning: " << unknown << "\n";
  return 0;
}

}  // namespace peerlink::cli
