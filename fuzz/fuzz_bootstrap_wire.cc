// The bootstrap's messages between processes (src/bootstrap/hello.cc, frame.cc, verdict.cc): a hello, the root's
// world table, a failure text, the root's forward verdict (the real NCCL's id and a reason), a frame header and a
// stream of frames cut by FrameReader. Any bytes decode to a message that encodes back to the same bytes (hello,
// world table, frame header: fixed layouts with nothing left to choice) or to what decodes the same (a failure or a
// forward verdict, whose control characters become spaces), or fail with Error(InvalidInput).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "bootstrap/frame.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/verdict.hpp"

namespace {

using namespace peerlink;
using namespace peerlink::bootstrap;

template <typename Body>
void expectValueOrInvalidInput(Body body) {
  try {
    body();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) __builtin_trap();
  }
}

bool sameBytes(const std::vector<std::uint8_t>& bytes, const std::uint8_t* data, std::size_t size) {
  return bytes.size() == size && (size == 0 || std::memcmp(bytes.data(), data, size) == 0);
}

// A non-blocking pipe that FrameReader reads as it reads a socket.
struct FramePipe {
  int read = -1;
  int write = -1;
  FramePipe() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) __builtin_trap();
    read = fds[0];
    write = fds[1];
  }
};

void cutFrames(const std::uint8_t* data, std::size_t size) {
  static const FramePipe pipe;
  // A pipe holds 64 KiB: inputs beyond that (libFuzzer's default limit is 4 KiB) are cut.
  const std::size_t length = std::min<std::size_t>(size, 60000);
  if (length > 0 && ::write(pipe.write, data, length) != static_cast<ssize_t>(length)) __builtin_trap();
  FrameReader reader(kHelloBytes + 1024);
  if (reader.readFrom(pipe.read) != FrameReader::Status::Open) __builtin_trap();
  std::size_t consumed = 0;
  try {
    while (std::optional<Frame> frame = reader.next()) {
      consumed += kFrameHeaderBytes + frame->payload.size();
      if (frame->type == FrameType::Hello && frame->payload.size() != kHelloBytes) __builtin_trap();
    }
    if (consumed > length || reader.hasPartialFrame() != (consumed < length)) __builtin_trap();
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  expectValueOrInvalidInput([&] {
    const Hello hello = decodeHello(data, size);
    if (!sameBytes(encodeHello(hello), data, size)) __builtin_trap();
  });
  expectValueOrInvalidInput([&] {
    // The world's size and token as a rank would expect them: from the table's own count and first hello.
    if (size < 4 + kHelloBytes) return;
    std::uint32_t count = 0;
    for (int i = 0; i < 4; ++i) count |= static_cast<std::uint32_t>(data[i]) << (8 * i);
    Token token{};
    std::memcpy(token.data(), data + 4 + 40, token.size());
    const std::vector<Hello> world = decodeWorld(data, size, static_cast<int>(count % 4096), token);
    if (!sameBytes(encodeWorld(world), data, size)) __builtin_trap();
  });
  expectValueOrInvalidInput([&] {
    const Failure failure = decodeFailure(data, size);
    const std::vector<std::uint8_t> again = encodeFailure(failure);
    const Failure decoded = decodeFailure(again.data(), again.size());
    if (decoded.code != failure.code || decoded.message != failure.message) __builtin_trap();
  });
  expectValueOrInvalidInput([&] {
    const Forward forward = decodeForward(data, size);
    if (forward.ncclId.empty() || forward.ncclId.size() > kMaxForwardIdBytes) __builtin_trap();
    const std::vector<std::uint8_t> again = encodeForward(forward.reason, forward.ncclId);
    const Forward decoded = decodeForward(again.data(), again.size());
    if (decoded.reason != forward.reason || decoded.ncclId != forward.ncclId) __builtin_trap();
  });
  expectValueOrInvalidInput([&] {
    const FrameHeader header = decodeFrameHeader(data, size, kMaxBootstrapMessageBytes);
    if (!sameBytes(encodeFrameHeader(header), data, size)) __builtin_trap();
  });
  cutFrames(data, size);
  return 0;
}
