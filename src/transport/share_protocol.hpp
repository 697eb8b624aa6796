// The wire protocol of memory sharing (shared_memory.hpp) and its two handshake halves, free of CUDA so
// that CPU tests can run them between real processes with a stand-in descriptor.
//
// Exporter (listens)                         Importer (connects)
//   accept, uid checked          <-------      connectUnix, uid checked
//   export a handle (timed)
//   offer message                ------->      decode (or an exporter's failure reply -> RemoteError)
//   [Cumem] fd frame, SCM_RIGHTS ------->      receive the fd
//                                              import + map (timed)
//   decode reply                 <-------      reply: OK with its costs, or the error code and text
//
// Messages use the frames of core/unix_socket.hpp; fields are in host byte order (one machine).
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/file_descriptor.hpp"
#include "core/unix_socket.hpp"
#include "peerlink/error.hpp"
#include "peerlink/shared_memory.hpp"

namespace peerlink {

inline constexpr std::uint32_t kShareOfferMagic = 0x4f534c50;  // "PLSO" in memory
inline constexpr std::uint32_t kShareReplyMagic = 0x52534c50;  // "PLSR" in memory
inline constexpr std::uint16_t kShareProtocolVersion = 1;
inline constexpr std::size_t kShareIpcHandleBytes = 64;  // CUDA_IPC_HANDLE_SIZE
inline constexpr std::size_t kShareBusIdBytes = 32;      // NUL-padded; "0000:00:06.0" needs 13
/// Offer: magic u32, version u16, kind u16, size u64, allocated u64, exportMs f64, bus id, IPC handle.
inline constexpr std::size_t kShareOfferBytes = 32 + kShareBusIdBytes + kShareIpcHandleBytes;
/// Reply: magic u32, version u16, zero u16, status i32, text length u32, importMs f64, mapMs f64, text.
inline constexpr std::size_t kShareReplyFixedBytes = 32;
inline constexpr std::size_t kMaxShareReplyText = 4096;

/// What the exporter tells an importer.
struct ShareOffer {
  ShareKind kind = ShareKind::Ipc;
  std::uint64_t size = 0;           ///< requested bytes
  std::uint64_t allocatedSize = 0;  ///< bytes to map (Cumem maps the whole allocation)
  double exportMs = 0;
  std::string ownerBusId;
  std::array<std::uint8_t, kShareIpcHandleBytes> ipcHandle{};  ///< Ipc only; zero for Cumem
};

/// The importer's answer, or an exporter's failure sent instead of an offer.
struct ShareReply {
  bool ok = true;
  ErrorCode code = ErrorCode::Internal;  ///< when !ok
  std::string message;                   ///< when !ok; cut to kMaxShareReplyText bytes
  double importMs = 0;
  double mapMs = 0;
};

std::vector<std::uint8_t> encodeShareOffer(const ShareOffer& offer);
/// Error(InvalidInput) naming the problem: wrong length, bad magic, other version, unknown kind, size 0,
/// allocated < size, bus id empty, unterminated or not printable.
ShareOffer decodeShareOffer(const std::uint8_t* data, std::size_t size);

std::vector<std::uint8_t> encodeShareReply(const ShareReply& reply);
/// Error(InvalidInput): wrong length, bad magic, other version, text length not matching.
ShareReply decodeShareReply(const std::uint8_t* data, std::size_t size);

/// What an exporter offers one importer: the offer and, for Cumem, the exported descriptor.
struct ExportedHandle {
  ShareOffer offer;
  FileDescriptor fd;
};

/// Exporter half: accepts one importer on `listener`, calls `exportHandle` (timed into exportMs; its
/// Error is sent to the importer, then rethrown), sends the offer (and fd), and waits for the reply, all
/// before `timeout`. Error(RemoteError) carries the importer's message when it failed or vanished.
ShareTimings serveShareOnce(UnixListener& listener, const std::function<ExportedHandle()>& exportHandle,
                            std::chrono::milliseconds timeout);

/// What the importer received.
struct ReceivedOffer {
  ShareOffer offer;
  FileDescriptor fd;  ///< Cumem: the exported descriptor (close it once imported)
  pid_t exporterPid = 0;
};
struct ImportCosts {
  double importMs = 0;
  double mapMs = 0;
};

/// Importer half: connects to `socketPath`, receives the offer (and fd), calls `import`, and replies OK
/// with its costs — or with the Error `import` threw, which is then rethrown. `timeout` bounds the
/// socket waits, not `import` itself.
ShareTimings importShareOnce(const std::string& socketPath, const std::function<ImportCosts(ReceivedOffer&)>& import,
                             std::chrono::milliseconds timeout);

}  // namespace peerlink
