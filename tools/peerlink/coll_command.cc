// `peerlink coll` (placeholder until the command is built).
#include "commands.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {

CLI::App* addCollCommand(CLI::App& app, CollCommandOptions& /*options*/) {
  return app.add_subcommand("coll", "Collective benchmark in nccl-tests' shape, with NCCL's figures in the same run");
}

int runCollCommand(const CollCommandOptions& /*options*/, Context& /*context*/) {
  throw Error(ErrorCode::Unsupported, "peerlink coll is not built yet");
}

}  // namespace peerlink::cli
