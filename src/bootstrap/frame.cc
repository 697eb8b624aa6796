#include "bootstrap/frame.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include "bootstrap/hello.hpp"
#include "bootstrap/wire.hpp"

namespace peerlink::bootstrap {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kMaxReadPerCall = 4 * 1024 * 1024;

bool isKnownType(std::uint8_t type) {
  return type >= static_cast<std::uint8_t>(FrameType::Hello) && type <= static_cast<std::uint8_t>(FrameType::Forward);
}

}  // namespace

const char* frameTypeName(FrameType type) noexcept {
  switch (type) {
    case FrameType::Hello: return "hello";
    case FrameType::World: return "world table";
    case FrameType::Failure: return "failure";
    case FrameType::Ready: return "ready";
    case FrameType::Go: return "go";
    case FrameType::Data: return "data";
    case FrameType::Abort: return "abort";
    case FrameType::Bye: return "goodbye";
    case FrameType::Forward: return "forward";
  }
  return "unknown";
}

std::vector<std::uint8_t> encodeFrameHeader(const FrameHeader& header) {
  WireWriter out;
  out.put(kFrameMagic);
  out.put(static_cast<std::uint8_t>(header.type));
  out.put(std::uint8_t{0});
  out.put(std::uint16_t{0});
  out.put(header.tag);
  out.put(header.length);
  return std::move(out.bytes());
}

FrameHeader decodeFrameHeader(const std::uint8_t* data, std::size_t size, std::size_t maxLength) {
  WireReader in(data, size, "bootstrap frame header");
  const auto magic = in.get<std::uint32_t>("magic");
  if (magic != kFrameMagic) {
    in.fail(fmt::format("magic 0x{:08x}, expected 0x{:08x} (not a peerlink bootstrap peer)", magic, kFrameMagic));
  }
  const auto type = in.get<std::uint8_t>("type");
  if (!isKnownType(type)) in.fail(fmt::format("unknown frame type {}", type));
  if (in.get<std::uint8_t>("reserved") != 0 || in.get<std::uint16_t>("reserved") != 0) {
    in.fail("reserved bytes are not 0");
  }
  FrameHeader header;
  header.type = static_cast<FrameType>(type);
  header.tag = in.get<std::int32_t>("tag");
  header.length = in.get<std::uint32_t>("length");
  in.expectEnd();
  const char* name = frameTypeName(header.type);
  if (header.type == FrameType::Data ? header.tag < kLowestTag : header.tag != 0) {
    in.fail(fmt::format("{} frame with tag {}", name, header.tag));
  }
  if (header.length > maxLength) {
    in.fail(fmt::format("{} frame of {} bytes, more than the {} allowed here", name, header.length, maxLength));
  }
  const bool empty = header.type == FrameType::Ready || header.type == FrameType::Go || header.type == FrameType::Bye;
  if ((empty && header.length != 0) || (header.type == FrameType::Hello && header.length != kHelloBytes)) {
    in.fail(fmt::format("{} frame of {} bytes", name, header.length));
  }
  return header;
}

FrameReader::Status FrameReader::readFrom(int fd) {
  std::size_t total = 0;
  while (total < kMaxReadPerCall) {
    const std::size_t old = buffer_.size();
    buffer_.resize(old + kReadChunk);
    const ssize_t n = ::read(fd, buffer_.data() + old, kReadChunk);
    const int error = errno;
    buffer_.resize(old + static_cast<std::size_t>(n > 0 ? n : 0));
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      closeReason_.clear();
      return Status::Closed;
    }
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) break;
    // A reset, a timeout, or anything stranger: this connection is over either way.
    closeReason_ = std::strerror(error);
    return Status::Closed;
  }
  return Status::Open;
}

std::optional<Frame> FrameReader::next() {
  if (buffer_.size() < kFrameHeaderBytes) return std::nullopt;
  const FrameHeader header = decodeFrameHeader(buffer_.data(), kFrameHeaderBytes, maxPayload_);
  const std::size_t total = kFrameHeaderBytes + header.length;
  if (buffer_.size() < total) return std::nullopt;
  Frame frame;
  frame.type = header.type;
  frame.tag = header.tag;
  frame.payload.assign(buffer_.begin() + kFrameHeaderBytes, buffer_.begin() + static_cast<std::ptrdiff_t>(total));
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(total));
  return frame;
}

void writeFrame(int fd, FrameType type, std::int32_t tag, const void* payload, std::size_t size,
                DeadlineClock::time_point deadline, const std::string& peer) {
  if (size > kMaxBootstrapMessageBytes) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("bootstrap: a message of {} bytes to {} is more than the {} "
                                                     "bytes one message may carry",
                                                     size, peer, kMaxBootstrapMessageBytes));
  }
  if (size > 0 && payload == nullptr) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("bootstrap: null data for a message to {}", peer));
  }
  std::vector<std::uint8_t> header = encodeFrameHeader({type, tag, static_cast<std::uint32_t>(size)});
  const auto* body = static_cast<const std::uint8_t*>(payload);
  const std::size_t total = header.size() + size;
  std::size_t sent = 0;
  while (sent < total) {
    iovec parts[2];
    int count = 0;
    if (sent < header.size()) {
      parts[count++] = {header.data() + sent, header.size() - sent};
      if (size > 0) parts[count++] = {const_cast<std::uint8_t*>(body), size};
    } else {
      parts[count++] = {const_cast<std::uint8_t*>(body) + (sent - header.size()), total - sent};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<std::size_t>(count);
    const ssize_t written = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (written >= 0) {
      sent += static_cast<std::size_t>(written);
      continue;
    }
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      if (!waitForFd(fd, POLLOUT, deadline)) {
        throw Error(ErrorCode::Timeout, fmt::format("bootstrap: sending a {} message to {} timed out ({} of {} bytes "
                                                    "sent; it is not reading)",
                                                    frameTypeName(type), peer, sent, total));
      }
      continue;
    }
    if (error == EPIPE || error == ECONNRESET || error == ENOTCONN || error == ETIMEDOUT || error == EHOSTUNREACH) {
      throw Error(ErrorCode::RemoteError, fmt::format("bootstrap: {} closed the connection ({}) while this rank sent "
                                                      "it a {} message",
                                                      peer, std::strerror(error), frameTypeName(type)));
    }
    throwSystemError(fmt::format("sendmsg to {}", peer), error);
  }
}

std::string closeDetail(const std::string& reason) {
  return reason.empty() ? std::string() : fmt::format(" ({})", reason);
}

void drainAndClose(FileDescriptor& socket) noexcept {
  if (!socket) return;
  char sink[4096];
  for (int reads = 0; reads < 256; ++reads) {  // bounded: a peer still sending cannot keep this here
    const ssize_t n = ::recv(socket.get(), sink, sizeof(sink), MSG_DONTWAIT);
    if (n <= 0) break;
  }
  socket.reset();
}

std::optional<Frame> readFrameBefore(int fd, FrameReader& reader, DeadlineClock::time_point deadline,
                                     const std::string& peer) {
  for (;;) {
    if (std::optional<Frame> frame = reader.next()) return frame;
    if (reader.readFrom(fd) == FrameReader::Status::Closed) {
      if (std::optional<Frame> frame = reader.next()) return frame;
      throw Error(ErrorCode::RemoteError,
                  fmt::format("bootstrap: {} closed the connection{}", peer, closeDetail(reader.closeReason())));
    }
    if (std::optional<Frame> frame = reader.next()) return frame;
    if (!waitForFd(fd, POLLIN, deadline)) return std::nullopt;
  }
}

}  // namespace peerlink::bootstrap
