// Sharing GPU memory with another process on this machine: the IPC route (legacy cudaIpcMemHandle) and
// the CUMEM route (cuMemCreate with a POSIX file descriptor, passed over a Unix socket with SCM_RIGHTS).
//
// The exporter owns the memory and a private Unix socket (mode 0600, peer uid checked); each importer
// connects, receives the handle (and the fd), maps the memory into its own address space and answers OK
// or its error text, which the exporter rethrows. Every wait is bounded by the caller's timeout.
// docs/cross-process.md describes the handshake, the socket's location and what fails in containers.
//
// Fork before CUDA is initialized: a child of a process that has used CUDA cannot use CUDA.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "peerlink/params.hpp"

namespace peerlink {

enum class ShareKind {
  Ipc,    ///< cudaMalloc + cudaIpcGetMemHandle / cudaIpcOpenMemHandle
  Cumem,  ///< cuMemCreate + POSIX fd export / cuMemImportFromShareableHandle
};

/// "IPC" or "CUMEM" (the route mode names).
const char* shareKindName(ShareKind kind) noexcept;

/// What setting up one share cost, in milliseconds (for `peerlink bench`). Both sides report all four:
/// the exporter learns the importer's costs from its reply, the importer the export cost from the offer.
struct ShareTimings {
  double exportMs = 0;     ///< exporter: cudaIpcGetMemHandle or cuMemExportToShareableHandle
  double handshakeMs = 0;  ///< socket work: importer connect -> offer (and fd) received -> reply sent; the
                           ///< exporter's figure is its accept-to-reply time minus the three others
  double importMs = 0;     ///< importer: cudaIpcOpenMemHandle (which also maps) or cuMemImportFromShareableHandle
  double mapMs = 0;        ///< importer: cuMemAddressReserve + cuMemMap + cuMemSetAccess (0 for IPC)
};

struct ShareOptions {
  /// Where the exporter's socket file goes; empty means $XDG_RUNTIME_DIR, else /tmp.
  std::string socketDirectory;
};

/// Device memory that other processes can map. Move-only.
class ExportableBuffer {
 public:
  /// `bytes` (> 0) on `device` (a CUDA ordinal of this process). Ipc: cudaMalloc. Cumem: cuMemCreate with
  /// the POSIX-fd handle type, the size rounded up to the allocation granularity, mapped read/write for
  /// `device`. Also creates the listening socket (socketPath()). Throws Error: InvalidUsage (bytes 0, no
  /// such device), Unsupported (the GPU lacks VMM or POSIX-fd handles), CudaError, SystemError (socket).
  ExportableBuffer(int device, std::size_t bytes, ShareKind kind, const ShareOptions& options = {});
  /// Unmaps and frees the memory and removes the socket file. Importers must have unmapped first: freeing
  /// legacy IPC memory that another process still maps is undefined behaviour (CUMEM memory lives on
  /// until the last importer releases it).
  ~ExportableBuffer();
  ExportableBuffer(ExportableBuffer&& other) noexcept;
  ExportableBuffer& operator=(ExportableBuffer&& other) noexcept;
  ExportableBuffer(const ExportableBuffer&) = delete;
  ExportableBuffer& operator=(const ExportableBuffer&) = delete;

  void* data() const noexcept;
  /// The requested size.
  std::size_t size() const noexcept;
  /// What was allocated: size() for Ipc, rounded up to the granularity for Cumem.
  std::size_t allocatedSize() const noexcept;
  int device() const noexcept;
  ShareKind kind() const noexcept;
  /// PCI bus id of the owning GPU ("0000:00:06.0"), the name importers find it by.
  const std::string& busId() const noexcept;
  /// The socket importers connect to (peerlink-share-<pid>-<n>-<random>.sock, mode 0600).
  const std::string& socketPath() const noexcept;

  /// Lets `device`, another GPU of this process, read and write the memory as well (cuMemSetAccess; for Ipc
  /// memory peer access does that, which the caller enables). Throws Error when the driver refuses.
  void allowAccess(int device);

  /// Serves one importer: waits for it to connect, exports a fresh handle (a new fd for Cumem, closed
  /// again here), sends the offer, and waits for the importer's answer — all within `timeout`. Call it
  /// once per importer. Throws Error(Timeout) when no importer comes or answers in time, and
  /// Error(RemoteError) with the importer's own message when it could not map the memory or vanished.
  ShareTimings serveOne(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Another process's ExportableBuffer mapped into this one. Move-only.
class ImportedBuffer {
 public:
  /// Makes `localDevice` current (initializing its context, outside the timeout), then connects to
  /// `socketPath`, receives the offer and maps it for `localDevice` — and, for Cumem, for the owning GPU
  /// too when this process sees it — and answers the exporter; `timeout` bounds the socket waits. Any
  /// failure after the offer arrived is sent to the exporter before it is thrown, and whatever was mapped
  /// is released. Throws Error: InvalidUsage (no such local device), Unsupported (no P2P between the
  /// GPUs, or the driver refused to map memory of a GPU this process does not see — the message names
  /// the GPU's bus id and CUDA_VISIBLE_DEVICES), CudaError, Timeout, RemoteError (exporter failed or
  /// vanished), InvalidInput (not a peerlink exporter).
  ImportedBuffer(const std::string& socketPath, int localDevice, std::chrono::milliseconds timeout);
  /// cudaIpcCloseMemHandle, or cuMemUnmap + cuMemAddressFree + cuMemRelease. Never throws.
  ~ImportedBuffer();
  ImportedBuffer(ImportedBuffer&& other) noexcept;
  ImportedBuffer& operator=(ImportedBuffer&& other) noexcept;
  ImportedBuffer(const ImportedBuffer&) = delete;
  ImportedBuffer& operator=(const ImportedBuffer&) = delete;

  /// The device pointer in this process; kernels of localDevice() (and of ownerDevice()) may use it.
  void* data() const noexcept;
  /// Lets `device`, another GPU of this process, read and write the mapping as well (Cumem: cuMemSetAccess).
  /// Throws Error(Unsupported) for Ipc memory, which is mapped for the GPU that opened it.
  void allowAccess(int device);
  std::size_t size() const noexcept;
  std::size_t allocatedSize() const noexcept;
  ShareKind kind() const noexcept;
  int localDevice() const noexcept;
  /// This process's ordinal of the GPU that owns the memory, -1 when CUDA_VISIBLE_DEVICES hides it.
  int ownerDevice() const noexcept;
  const std::string& ownerBusId() const noexcept;
  const ShareTimings& timings() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What the exporting helper process (`peerlink _share-export`, started by src/transport/exporter_process.hpp
/// for the cross-process benchmark cases and doctor probes) is asked to do.
struct ShareExporterRequest {
  int device = 0;     ///< CUDA ordinal of the owning GPU in the helper process...
  std::string busId;  ///< ...or, when set, its PCI bus id (what survives a different CUDA_VISIBLE_DEVICES)
  std::size_t bytes = 0;
  ShareKind kind = ShareKind::Ipc;
  std::uint64_t seed = 0;  ///< the buffer is filled with this pattern before it is offered
  std::chrono::milliseconds timeout{10000};
};

/// The helper process's body: export a buffer filled with the pattern and print "socket <path>", then obey
/// one command per line of standard input -- "serve": serve one importer and print "served <export>
/// <handshake> <import> <map>" (ms); "check <seed>": check the buffer against that pattern on the owning GPU
/// and print "checked <wrong bytes> <lost bytes>" -- until standard input closes, then free the buffer.
/// Its main thread first moves to the owning GPU's NUMA node's CPUs (PEERLINK_CPU_AFFINITY, as for every
/// thread peerlink runs for a GPU). Returns the process exit code; never throws (errors print "error ...").
int runShareExporter(const ShareExporterRequest& request, std::ostream& out,
                     const Params& params = Params::fromEnvironment());

}  // namespace peerlink
