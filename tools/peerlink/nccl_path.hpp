// Where libpeerlink_nccl.so.2 (NCCL's C API over peerlink) lies relative to the peerlink binary: installed
// (bin/peerlink, lib/libpeerlink_nccl.so.2, lib/peerlink/nccl/libnccl.so.2) or in the build tree and ./dist
// (peerlink, nccl_api/libpeerlink_nccl.so.2 and the libnccl.so.2 link beside it).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace peerlink::cli {

struct NcclLibraryPlace {
  std::filesystem::path library;  ///< libpeerlink_nccl.so.2: what LD_PRELOAD takes
  std::filesystem::path folder;   ///< the folder holding a libnccl.so.2 that is it: what LD_LIBRARY_PATH takes
};

/// The places to look, in order, for a peerlink in `binaryFolder` whose install puts libraries in `libDir`.
std::vector<NcclLibraryPlace> ncclLibraryPlaces(const std::filesystem::path& binaryFolder, const std::string& libDir);

/// The first place whose library and libnccl.so.2 both exist (paths made canonical), or nullopt.
std::optional<NcclLibraryPlace> findNcclLibrary(const std::vector<NcclLibraryPlace>& places);

}  // namespace peerlink::cli
