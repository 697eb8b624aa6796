// `peerlink nccl-path`: where libpeerlink_nccl.so.2 is, for LD_PRELOAD (a pip-installed PyTorch loads its own
// libnccl.so.2 by absolute path, which only a preloaded library with that SONAME replaces) or, with --dir, the
// folder for LD_LIBRARY_PATH (applications linked against libnccl.so.2, such as nccl-tests).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "nccl_path.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {

CLI::App* addNcclPathCommand(CLI::App& app, NcclPathOptions& options) {
  CLI::App* command = app.add_subcommand("nccl-path",
                                         "Print the path of libpeerlink_nccl.so.2, NCCL's API over peerlink: "
                                         "LD_PRELOAD=$(peerlink nccl-path) torchrun ...");
  command->add_flag("--dir", options.directory,
                    "Print the folder holding its libnccl.so.2 instead, for LD_LIBRARY_PATH (nccl-tests)");
  return command;
}

int runNcclPathCommand(const NcclPathOptions& options, Context& context) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    throw Error(ErrorCode::SystemError, fmt::format("nccl-path: cannot read /proc/self/exe: {}", error.message()));
  }
  const std::vector<NcclLibraryPlace> places = ncclLibraryPlaces(self.parent_path(), PEERLINK_INSTALL_LIBDIR);
  const std::optional<NcclLibraryPlace> found = findNcclLibrary(places);
  if (!found) {
    std::string looked;
    for (const NcclLibraryPlace& place : places) looked += (looked.empty() ? "" : ", ") + place.library.string();
    throw Error(ErrorCode::Unsupported,
                fmt::format("nccl-path: no libpeerlink_nccl.so.2 with its libnccl.so.2 link beside this peerlink "
                            "(looked at {}): build the target peerlink_nccl, or install peerlink",
                            looked));
  }
  context.out << (options.directory ? found->folder : found->library).string() << "\n";
  return 0;
}

}  // namespace peerlink::cli
