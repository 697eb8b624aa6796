// Frames on the bootstrap's TCP connections: a 16-byte header {magic u32, type u8, zero [3], tag i32,
// length u32}, little-endian, then `length` payload bytes. The reader is incremental (non-blocking sockets
// polled by one thread) and bounds what a peer can make it allocate: before a connection is authenticated it
// accepts only a hello.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "core/file_descriptor.hpp"

namespace peerlink::bootstrap {

inline constexpr std::uint32_t kFrameMagic = 0x46424c50;  // "PLBF" on the wire
inline constexpr std::size_t kFrameHeaderBytes = 16;

/// What a frame carries. Rank -> root: Hello, Ready, Failure. Root -> rank: World, Failure, Go, and for a unique
/// id whose root may forward, Forward instead of World (verdict.hpp). Between ranks: Hello (the connecting side,
/// once), then Data, Abort, Bye.
enum class FrameType : std::uint8_t {
  Hello = 1,    ///< encodeHello
  World = 2,    ///< encodeWorld
  Failure = 3,  ///< encodeFailure: the sender gives up the rendezvous
  Ready = 4,    ///< empty: this rank is connected to all its peers
  Go = 5,       ///< empty: every rank is; the bootstrap is built
  Data = 6,     ///< a message under `tag` (internal tags are negative)
  Abort = 7,    ///< encodeFailure: the sending rank aborted
  Bye = 8,      ///< empty: the sending rank closes its bootstrap cleanly
  Forward = 9,  ///< encodeForward: the root sends every rank to the real NCCL with its id; the rendezvous ends
};
const char* frameTypeName(FrameType type) noexcept;

/// Tags the bootstrap uses itself (user tags are >= 0).
inline constexpr std::int32_t kAllGatherTag = -1;
inline constexpr std::int32_t kBarrierTag = -2;
inline constexpr std::int32_t kLowestTag = kBarrierTag;

struct FrameHeader {
  FrameType type = FrameType::Data;
  std::int32_t tag = 0;
  std::uint32_t length = 0;
};

std::vector<std::uint8_t> encodeFrameHeader(const FrameHeader& header);
/// Strict: exactly kFrameHeaderBytes; magic; a known type; zero reserved bytes; tag 0 except on Data frames
/// (>= kLowestTag); length <= `maxLength`, exactly kHelloBytes for a Hello, 0 for Ready, Go and Bye.
FrameHeader decodeFrameHeader(const std::uint8_t* data, std::size_t size, std::size_t maxLength);

struct Frame {
  FrameType type = FrameType::Data;
  std::int32_t tag = 0;
  std::vector<std::uint8_t> payload;
};

/// Accumulates what a non-blocking socket delivers and cuts it into frames.
class FrameReader {
 public:
  explicit FrameReader(std::size_t maxPayload) : maxPayload_(maxPayload) {}

  enum class Status {
    Open,    ///< read what there was (possibly nothing)
    Closed,  ///< the peer closed (end of stream), or the connection failed (`closeReason` says how)
  };
  /// Reads until the socket has nothing more (at most a few MiB per call, so one peer cannot starve others).
  /// Never throws: a read error closes the connection like an end of file, with the error as the reason.
  Status readFrom(int fd);
  /// The next complete frame, if any; Error(InvalidInput) for a malformed header.
  std::optional<Frame> next();

  void setMaxPayload(std::size_t maxPayload) { maxPayload_ = maxPayload; }
  /// Whether bytes of an incomplete frame are buffered.
  bool hasPartialFrame() const { return !buffer_.empty(); }
  /// Empty after an orderly end of stream, else the error ("Connection reset by peer").
  const std::string& closeReason() const { return closeReason_; }

 private:
  std::vector<std::uint8_t> buffer_;
  std::size_t maxPayload_;
  std::string closeReason_;
};

/// Writes one frame with `payload` to a non-blocking stream socket before `deadline`. Error(Timeout) naming
/// `peer` when the socket stays full, Error(RemoteError) when the peer closed or reset the connection.
void writeFrame(int fd, FrameType type, std::int32_t tag, const void* payload, std::size_t size,
                DeadlineClock::time_point deadline, const std::string& peer);

/// " (Connection reset by peer)" for a failed connection, "" for an orderly close: to append to a message.
std::string closeDetail(const std::string& reason);

/// Closes a socket after reading and dropping what it still holds: TCP answers a close with unread data by a
/// reset, which can make the peer lose the last message this side sent it (a failure, a goodbye).
void drainAndClose(FileDescriptor& socket) noexcept;

/// Blocks (with the deadline) until one whole frame arrived on a non-blocking socket; std::nullopt when the
/// deadline passed first. Error(RemoteError) naming `peer` when the connection closed first.
std::optional<Frame> readFrameBefore(int fd, FrameReader& reader, DeadlineClock::time_point deadline,
                                     const std::string& peer);

}  // namespace peerlink::bootstrap
