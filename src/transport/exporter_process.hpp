// A second process that owns and exports a GPU buffer, for the cross-process benchmark cases and doctor
// probes. peerlink cannot fork once CUDA is initialized (a child of a CUDA process cannot use CUDA), so it
// starts a fresh process of a helper executable (the peerlink CLI, with its hidden `_share-export` command,
// whose body is runShareExporter) and talks to it over pipes, one command per line: the child prints its
// socket path, then serves importers and checks its buffer on its own GPU when asked, and exits when its
// standard input closes. sharedRoute names the route of copies through such a buffer once mapped here.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/file_descriptor.hpp"
#include "peerlink/route.hpp"
#include "peerlink/shared_memory.hpp"

namespace peerlink {

/// The copy-engine route between this process's memory and another process's buffer shared as `kind` and
/// mapped here (mode IPC or CUMEM).
Route sharedRoute(ShareKind kind, Direction direction);

/// The parent's side: a running exporter child.
class ExporterProcess {
 public:
  /// Starts `executable _share-export ...` and waits (within the request's timeout) for its socket path.
  /// `visibleDevices`, when given, becomes the child's CUDA_VISIBLE_DEVICES (the rest of the environment is
  /// inherited). Throws Error(RemoteError) with the child's own message when it could not export.
  ExporterProcess(const std::string& executable, const ShareExporterRequest& request,
                  const std::optional<std::string>& visibleDevices = std::nullopt);
  /// Closes the child's input and reaps it; kills it when it does not exit within the timeout.
  ~ExporterProcess();
  ExporterProcess(const ExporterProcess&) = delete;
  ExporterProcess& operator=(const ExporterProcess&) = delete;

  const std::string& socketPath() const noexcept { return socketPath_; }
  /// Asks the child to serve one importer; connect (ImportedBuffer) after this, then read served().
  void requestServe();
  /// The exporter's timings once the importer has been served (waits for the line within the timeout).
  ShareTimings served();

  struct OwnerCheck {
    std::uint64_t wrongBytes = 0;
    std::uint64_t lostBytes = 0;  ///< of the wrong bytes, still the poison or 0x00 / 0xFF
  };
  /// Has the child check its whole buffer against pattern `seed` on the owning GPU.
  OwnerCheck check(std::uint64_t seed);

  /// Lets the child free its buffer and exit (call after every importer unmapped).
  void finish();

 private:
  void send(const std::string& line);
  std::string readLine();
  pid_t pid_ = -1;
  FileDescriptor toChild_;
  FileDescriptor fromChild_;
  std::string buffered_;
  std::string socketPath_;
  std::chrono::milliseconds timeout_;
};

}  // namespace peerlink
