#include "transport/share_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "core/text.hpp"

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::uint16_t kWireIpc = 1;
constexpr std::uint16_t kWireCumem = 2;
// A failure reply must still reach a peer after the caller's deadline has passed.
constexpr milliseconds kFailureReplyTimeout{1000};

template <typename T>
void put(std::vector<std::uint8_t>& out, std::size_t offset, const T& value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <typename T>
T get(const std::uint8_t* data, std::size_t offset) {
  T value{};
  std::memcpy(&value, data + offset, sizeof(T));
  return value;
}

[[noreturn]] void invalid(const char* what, const std::string& problem) {
  throw Error(ErrorCode::InvalidInput, fmt::format("malformed share {}: {}", what, problem));
}

void checkPrefix(const std::uint8_t* data, std::size_t size, std::size_t minimum, std::uint32_t magic,
                 const char* what) {
  if (data == nullptr && size > 0) invalid(what, "null data");
  // The magic first: a stranger's bytes are reported as such, whatever their length.
  if (size >= sizeof(std::uint32_t)) {
    const auto found = get<std::uint32_t>(data, 0);
    if (found != magic) invalid(what, fmt::format("magic 0x{:08x}, expected 0x{:08x}", found, magic));
  }
  if (size < minimum) invalid(what, fmt::format("{} bytes, fewer than the {} of its fixed part", size, minimum));
  const auto version = get<std::uint16_t>(data, 4);
  if (version != kShareProtocolVersion) {
    invalid(what, fmt::format("protocol version {}, this peerlink speaks {} (mixed peerlink builds?)", version,
                              kShareProtocolVersion));
  }
}

double finiteNonNegative(double value) {
  return std::isfinite(value) && value > 0 ? value : 0.0;
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Time left until `deadline`, never negative (0 still lets ready data through).
milliseconds remaining(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(left, milliseconds::zero());
}

// Runs `body`, prefixing any Error with what this side was doing and where.
template <typename Body>
auto during(const std::string& step, const std::string& path, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error& error) {
    throw Error(error.code(), fmt::format("sharing through {}: {}: {}", path, step, error.what()));
  }
}

void sendReply(UnixConnection& connection, const ShareReply& reply, milliseconds timeout) {
  const std::vector<std::uint8_t> bytes = encodeShareReply(reply);
  connection.sendMessage(bytes.data(), bytes.size(), timeout);
}

// Tells the peer why this side gives up; the peer may already be gone, which changes nothing here.
void sendFailureQuietly(UnixConnection& connection, ErrorCode code, const std::string& message) noexcept {
  try {
    ShareReply reply;
    reply.ok = false;
    reply.code = code;
    reply.message = message;
    sendReply(connection, reply, kFailureReplyTimeout);
  } catch (...) {
  }
}

}  // namespace

const char* shareKindName(ShareKind kind) noexcept {
  switch (kind) {
    case ShareKind::Ipc: return "IPC";
    case ShareKind::Cumem: return "CUMEM";
  }
  return "unknown";
}

std::vector<std::uint8_t> encodeShareOffer(const ShareOffer& offer) {
  if (offer.ownerBusId.empty() || offer.ownerBusId.size() >= kShareBusIdBytes) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("share offer: bus id '{}' must have 1 to {} characters",
                                                     offer.ownerBusId, kShareBusIdBytes - 1));
  }
  std::vector<std::uint8_t> out(kShareOfferBytes, 0);
  put(out, 0, kShareOfferMagic);
  put(out, 4, kShareProtocolVersion);
  put(out, 6, offer.kind == ShareKind::Ipc ? kWireIpc : kWireCumem);
  put(out, 8, offer.size);
  put(out, 16, offer.allocatedSize);
  put(out, 24, offer.exportMs);
  std::memcpy(out.data() + 32, offer.ownerBusId.data(), offer.ownerBusId.size());
  std::memcpy(out.data() + 32 + kShareBusIdBytes, offer.ipcHandle.data(), kShareIpcHandleBytes);
  return out;
}

ShareOffer decodeShareOffer(const std::uint8_t* data, std::size_t size) {
  checkPrefix(data, size, kShareOfferBytes, kShareOfferMagic, "offer");
  if (size != kShareOfferBytes) invalid("offer", fmt::format("{} bytes, expected {}", size, kShareOfferBytes));
  ShareOffer offer;
  const auto kind = get<std::uint16_t>(data, 6);
  if (kind == kWireIpc) {
    offer.kind = ShareKind::Ipc;
  } else if (kind == kWireCumem) {
    offer.kind = ShareKind::Cumem;
  } else {
    invalid("offer", fmt::format("unknown kind {} (1 = IPC, 2 = CUMEM)", kind));
  }
  offer.size = get<std::uint64_t>(data, 8);
  offer.allocatedSize = get<std::uint64_t>(data, 16);
  offer.exportMs = finiteNonNegative(get<double>(data, 24));
  if (offer.size == 0) invalid("offer", "size 0");
  if (offer.allocatedSize < offer.size) {
    invalid("offer", fmt::format("allocated size {} is smaller than the size {}", offer.allocatedSize, offer.size));
  }
  const char* busId = reinterpret_cast<const char*>(data + 32);
  const std::size_t length = strnlen(busId, kShareBusIdBytes);
  if (length == 0 || length == kShareBusIdBytes) invalid("offer", "bus id empty or not NUL-terminated");
  offer.ownerBusId.assign(busId, length);
  if (!std::all_of(offer.ownerBusId.begin(), offer.ownerBusId.end(), [](char c) { return c > ' ' && c < 127; })) {
    invalid("offer", "bus id has unprintable characters");
  }
  std::memcpy(offer.ipcHandle.data(), data + 32 + kShareBusIdBytes, kShareIpcHandleBytes);
  return offer;
}

std::vector<std::uint8_t> encodeShareReply(const ShareReply& reply) {
  const std::string text = reply.ok ? std::string() : reply.message.substr(0, kMaxShareReplyText);
  std::vector<std::uint8_t> out(kShareReplyFixedBytes + text.size(), 0);
  put(out, 0, kShareReplyMagic);
  put(out, 4, kShareProtocolVersion);
  put(out, 8, static_cast<std::int32_t>(reply.ok ? PEERLINK_STATUS_OK : toStatus(reply.code)));
  put(out, 12, static_cast<std::uint32_t>(text.size()));
  put(out, 16, reply.importMs);
  put(out, 24, reply.mapMs);
  std::memcpy(out.data() + kShareReplyFixedBytes, text.data(), text.size());
  return out;
}

ShareReply decodeShareReply(const std::uint8_t* data, std::size_t size) {
  checkPrefix(data, size, kShareReplyFixedBytes, kShareReplyMagic, "reply");
  const auto status = get<std::int32_t>(data, 8);
  const auto length = get<std::uint32_t>(data, 12);
  if (length > kMaxShareReplyText) {
    invalid("reply", fmt::format("text of {} bytes, more than {}", length, kMaxShareReplyText));
  }
  if (size != kShareReplyFixedBytes + length) {
    invalid("reply",
            fmt::format("{} bytes, but its text length {} says {}", size, length, kShareReplyFixedBytes + length));
  }
  ShareReply reply;
  reply.ok = status == PEERLINK_STATUS_OK;
  if (!reply.ok) {
    // The raw number is checked before it becomes an enum: a value outside the enum's range is undefined.
    const std::optional<ErrorCode> code = errorCodeFromValue(status);
    if (!code) {
      invalid("reply", fmt::format("status {} is not a peerlink status ({}..{})", status, PEERLINK_STATUS_OK,
                                   PEERLINK_STATUS_INTERNAL));
    }
    reply.code = *code;
  }
  // The peer's text is printed in messages: its control characters are shown, not obeyed.
  reply.message =
      printable(std::string(reinterpret_cast<const char*>(data + kShareReplyFixedBytes), length), kMaxShareReplyText);
  if (!reply.ok && reply.message.empty()) reply.message = "(no message)";
  reply.importMs = finiteNonNegative(get<double>(data, 16));
  reply.mapMs = finiteNonNegative(get<double>(data, 24));
  return reply;
}

ShareTimings serveShareOnce(UnixListener& listener, const std::function<ExportedHandle()>& exportHandle,
                            milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string& path = listener.path();
  UnixConnection connection =
      during("waiting for an importer", path, [&] { return listener.accept(remaining(deadline)); });
  const auto start = Clock::now();
  const pid_t importer = connection.peerPid();

  ExportedHandle handle;
  try {
    handle = exportHandle();
  } catch (const Error& error) {
    sendFailureQuietly(connection, error.code(), fmt::format("exporter failed: {}", error.what()));
    throw;
  }
  ShareTimings timings;
  timings.exportMs = msSince(start);
  handle.offer.exportMs = timings.exportMs;
  if (handle.offer.kind == ShareKind::Cumem && !handle.fd) {
    throw Error(ErrorCode::Internal, "a CUMEM share offer without its file descriptor");
  }

  const std::vector<std::uint8_t> offer = encodeShareOffer(handle.offer);
  const std::string to = fmt::format("importer pid {}", importer);
  during("sending the offer to " + to, path,
         [&] { connection.sendMessage(offer.data(), offer.size(), remaining(deadline)); });
  if (handle.offer.kind == ShareKind::Cumem) {
    during("sending the file descriptor to " + to, path,
           [&] { connection.sendFd(handle.fd.get(), nullptr, 0, remaining(deadline)); });
  }
  handle.fd.reset();  // the importer holds its own duplicate now

  const ShareReply reply = during("waiting for the answer of " + to, path, [&] {
    const std::vector<std::uint8_t> bytes = connection.receiveMessage(remaining(deadline));
    return decodeShareReply(bytes.data(), bytes.size());
  });
  if (!reply.ok) {
    throw Error(ErrorCode::RemoteError,
                fmt::format("sharing through {}: {} could not map the {} buffer ({}): {}", path, to,
                            shareKindName(handle.offer.kind), errorCodeName(reply.code), reply.message));
  }
  timings.importMs = reply.importMs;
  timings.mapMs = reply.mapMs;
  timings.handshakeMs = std::max(0.0, msSince(start) - timings.exportMs - timings.importMs - timings.mapMs);
  return timings;
}

ShareTimings importShareOnce(const std::string& socketPath, const std::function<ImportCosts(ReceivedOffer&)>& import,
                             milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const auto start = Clock::now();
  UnixConnection connection =
      during("connecting to the exporter", socketPath, [&] { return connectUnix(socketPath, remaining(deadline)); });
  ReceivedOffer received;
  received.exporterPid = connection.peerPid();
  const std::string from = fmt::format("exporter pid {}", received.exporterPid);

  received.offer = during("receiving the offer of " + from, socketPath, [&] {
    const std::vector<std::uint8_t> bytes = connection.receiveMessage(remaining(deadline));
    if (bytes.size() >= sizeof(std::uint32_t) && get<std::uint32_t>(bytes.data(), 0) == kShareReplyMagic) {
      const ShareReply failure = decodeShareReply(bytes.data(), bytes.size());
      throw Error(ErrorCode::RemoteError, fmt::format("the exporter could not offer its buffer ({}): {}",
                                                      errorCodeName(failure.code), failure.message));
    }
    return decodeShareOffer(bytes.data(), bytes.size());
  });
  if (received.offer.kind == ShareKind::Cumem) {
    received.fd = during("receiving the file descriptor of " + from, socketPath, [&] {
      ReceivedFd frame = connection.receiveFd(remaining(deadline));
      if (!frame.payload.empty()) {
        throw Error(ErrorCode::InvalidInput, "the descriptor frame carries an unexpected payload");
      }
      return std::move(frame.fd);
    });
  }
  ShareTimings timings;
  timings.exportMs = received.offer.exportMs;
  const double receivedMs = msSince(start);

  ImportCosts costs;
  try {
    costs = import(received);
  } catch (const Error& error) {
    sendFailureQuietly(connection, error.code(), error.what());
    throw;
  } catch (const std::exception& error) {
    sendFailureQuietly(connection, ErrorCode::Internal, error.what());
    throw;
  }
  received.fd.reset();

  ShareReply reply;
  reply.importMs = costs.importMs;
  reply.mapMs = costs.mapMs;
  const auto replyStart = Clock::now();
  during("answering " + from, socketPath, [&] { sendReply(connection, reply, remaining(deadline)); });
  timings.importMs = costs.importMs;
  timings.mapMs = costs.mapMs;
  timings.handshakeMs = receivedMs + msSince(replyStart);
  return timings;
}

}  // namespace peerlink
