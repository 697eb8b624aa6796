// Cross-process benchmark cells need a second process that owns and exports a buffer. peerlink cannot
// fork once CUDA is initialized (a child of a CUDA process cannot use CUDA), so it starts a fresh process
// of a helper executable (the peerlink CLI, with its hidden `_share-export` command) and talks to it over
// pipes: the child prints its socket path, serves one importer, prints its timings, and exits when its
// standard input closes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "core/file_descriptor.hpp"
#include "peerlink/bench.hpp"
#include "peerlink/shared_memory.hpp"

namespace peerlink {

/// The parent's side: a running exporter child.
class ExporterProcess {
 public:
  /// Starts `executable _share-export ...` and waits (within the request's timeout) for its socket path.
  ExporterProcess(const std::string& executable, const ShareExporterRequest& request);
  /// Closes the child's input and reaps it; kills it when it does not exit within the timeout.
  ~ExporterProcess();
  ExporterProcess(const ExporterProcess&) = delete;
  ExporterProcess& operator=(const ExporterProcess&) = delete;

  const std::string& socketPath() const noexcept { return socketPath_; }
  /// The exporter's timings, once an importer has been served (waits for the line within the timeout).
  ShareTimings served();
  /// Lets the child free its buffer and exit (call after every importer unmapped).
  void finish();

 private:
  std::string readLine();
  pid_t pid_ = -1;
  FileDescriptor toChild_;
  FileDescriptor fromChild_;
  std::string buffered_;
  std::string socketPath_;
  std::chrono::milliseconds timeout_;
};

}  // namespace peerlink
