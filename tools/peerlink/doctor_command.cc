// `peerlink doctor` (placeholder until the command is built).
#include "commands.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {

CLI::App* addDoctorCommand(CLI::App& app, DoctorOptions& /*options*/) {
  return app.add_subcommand("doctor", "A functional verdict for every directed GPU pair, with the cause and the fix");
}

int runDoctorCommand(const DoctorOptions& /*options*/, Context& /*context*/) {
  throw Error(ErrorCode::Unsupported, "peerlink doctor is not built yet");
}

}  // namespace peerlink::cli
