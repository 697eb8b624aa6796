#include "nccl_path.hpp"

namespace peerlink::cli {

std::vector<NcclLibraryPlace> ncclLibraryPlaces(const std::filesystem::path& binaryFolder, const std::string& libDir) {
  const std::filesystem::path installed = binaryFolder.parent_path() / libDir;
  const std::filesystem::path built = binaryFolder / "nccl_api";
  return {{installed / "libpeerlink_nccl.so.2", installed / "peerlink" / "nccl"},
          {built / "libpeerlink_nccl.so.2", built}};
}

std::optional<NcclLibraryPlace> findNcclLibrary(const std::vector<NcclLibraryPlace>& places) {
  for (const NcclLibraryPlace& place : places) {
    std::error_code error;
    const std::filesystem::path library = std::filesystem::canonical(place.library, error);
    if (error || !std::filesystem::is_regular_file(library, error)) continue;
    // The link must lead to this very library, or LD_LIBRARY_PATH would load another.
    const std::filesystem::path link = std::filesystem::canonical(place.folder / "libnccl.so.2", error);
    if (error || link != library) continue;
    return NcclLibraryPlace{library, std::filesystem::canonical(place.folder, error)};
  }
  return std::nullopt;
}

}  // namespace peerlink::cli
