// The low-latency (LL) put-with-signal protocol: data and flag travel together, so neither side fences.
// Host code includes this; kernel bodies live in ll_protocol.cu.
//
// Lines. A message of n bytes travels as max(1, ceil(n / 8)) lines of 16 bytes; a line is two 8-byte
// halves, each {4 bytes of data, 4 bytes of flag}, and the flag is the message's sequence number. The sender
// stores a line with one 16-byte st.relaxed.sys.v2.u64. The PTX memory model treats a vector access as one
// access per element, and an aligned 8-byte relaxed access is single-copy atomic: a receiver that reads the
// expected flag in a half has read that half's data too, whatever order the halves and lines land in. So
// the sender needs no release and the receiver no acquire; it polls its lines with 16-byte relaxed loads
// until both flags of each line equal the sequence number, then unpacks the data. The cost: twice the bytes
// on the wire, so LL is for small messages; put-with-signal (put_signal.cuh) moves large ones.
//
// Buffers. The receiver owns a line buffer of llLineBytes(largest message) bytes, 16-byte aligned, zeroed
// (cudaMemset) once before its first message: 32 bytes of the receiver's own bookkeeping, then the lines;
// the sender stores into it as peer memory. Messages on one buffer must not overlap: put message s+1 only
// after the receive of message s finished (a put that overtakes a receive makes that receive time out, it
// never hands it wrong data). Sequence numbers: any 32-bit value but 0 (0 is what a zeroed line holds),
// each message's different from the one before on that buffer (llNextSeq counts up and skips 0). A line
// left from an older message of a larger size is ignored unless its flag equals the current sequence
// number, i.e. unless it sat unwritten through a multiple of 2^32 - 1 messages.
//
// Several blocks. A message of more than 256 lines (2 KiB) is cut in slices of 256 lines, one block each,
// on both sides. One SM would take over a microsecond to issue 128 KiB of 16-byte stores (and the receiving
// SM as long to poll them), most of the ~2 us a 64 KiB message may take; 32 SMs split that 32 ways.
//
// Deadlines. A receiver reads the global timer only every 256 polls (a timer read in every poll would sit
// on the poll loop's path), so it reports a timeout up to 256 polls (tens of microseconds) after
// timeoutNs, as TIMEOUT in a DeviceStatus; it never traps.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/device_status.cuh"

namespace peerlink::kernels {

constexpr std::size_t kLlBytesPerLine = 8;                           ///< payload bytes a 16-byte line carries
constexpr std::size_t kLlHeaderBytes = 32;                           ///< the receiver's bookkeeping, before the lines
constexpr std::size_t kLlMaxMessageBytes = std::size_t{1} << 30;     ///< launchLlPut / launchLlReceive
constexpr std::size_t kLlMaxPingPongBytes = std::size_t{256} << 10;  ///< both sides' blocks must be resident at once

/// Lines of a message of `payloadBytes` (at least one: a message of 0 bytes is a signal alone).
// clang-format off
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr std::size_t llLines(std::size_t payloadBytes) {
  return payloadBytes == 0 ? 1 : (payloadBytes + kLlBytesPerLine - 1) / kLlBytesPerLine;
}
// clang-format on

/// Bytes of a receiver's line buffer for messages of up to `payloadBytes`: 16 per 8 payload bytes + 32.
constexpr std::size_t llLineBytes(std::size_t payloadBytes) {
  return kLlHeaderBytes + 2 * kLlBytesPerLine * llLines(payloadBytes);
}

/// The sequence number after `seq`; never 0.
constexpr uint32_t llNextSeq(uint32_t seq) {
  return seq == UINT32_MAX ? 1u : seq + 1u;
}

/// Packs `bytes` (<= kLlMaxMessageBytes, any alignment) from `src` into lines flagged `seq` and stores them
/// into `peerLines`, the receiver's line buffer (peer memory, or this GPU's own), from the current device.
/// `dropFlag` (PEERLINK_FAULT_DROP_FLAG, tests only) stores the lines with the previous sequence number
/// instead, so the receiver's deadline path runs. One block per 256 lines. Throws Error(InvalidUsage) for
/// a null or misaligned buffer, seq 0 or a size over the limit.
void launchLlPut(void* peerLines, const void* src, std::size_t bytes, uint32_t seq, bool dropFlag, cudaStream_t stream);

/// On the current device (the receiver): waits until every line of message `seq` (`bytes` long) has
/// arrived in `localLines` (not const: the kernel keeps its bookkeeping in the buffer's header), unpacks it
/// into `dst` (this GPU's memory, any alignment), and writes `status`
/// (device memory or mapped pinned host memory): OK with observed = seq, or TIMEOUT when a line still
/// lacked its flag `timeoutNs` after its block started polling, with step = that line's index and observed
/// = the flag it held instead. On a timeout `dst` is partly written. Kernels after it in `stream` see `dst`.
void launchLlReceive(void* dst, void* localLines, std::size_t bytes, uint32_t seq, uint64_t timeoutNs,
                     DeviceStatus* status, cudaStream_t stream);

/// One side of an LL ping-pong between two GPUs (see PingPongSide for the shape): round r = 0, 1, ... uses
/// sequence number r + 1; the initiator puts its message into the responder's lines and waits for the
/// reply in its own; the responder waits, then replies. Each block bounces its own slice of lines with the
/// peer's block of the same index, so a slice's reply leaves as soon as that slice has arrived. Launch
/// both sides without waiting for the first to finish; both must agree on payloadBytes, warmup and
/// iterations, and both line buffers must be zeroed before the launch.
struct LlPingPongSide {
  void* localLines = nullptr;       ///< this GPU's line buffer of llLineBytes(payloadBytes); the peer stores to it
  void* peerLines = nullptr;        ///< the peer's line buffer; this side stores to it
  const void* send = nullptr;       ///< the payloadBytes this side sends every round (unchanged while it runs)
  void* receive = nullptr;          ///< this GPU's buffer of payloadBytes where each message is unpacked
  std::size_t payloadBytes = 8;     ///< 0..kLlMaxPingPongBytes; 0: one line carrying the flag alone
  int warmup = 100;                 ///< untimed rounds first (they absorb the launch skew of the two sides)
  int iterations = 1000;            ///< timed round trips
  bool initiator = false;           ///< exactly one of the two sides
  uint64_t timeoutNs = 1000000000;  ///< per wait
  DeviceStatus* status = nullptr;   ///< OK, or TIMEOUT with step = the round that stalled (0-based)
  uint64_t* elapsedNs = nullptr;    ///< initiator only: global-timer ns from the earliest block's first timed
                                    ///< round to the end of the last block's last round
};

/// Launches one side on the current device. One-way latency = *elapsedNs / (2 * iterations).
void launchLlPingPong(const LlPingPongSide& side, cudaStream_t stream);

}  // namespace peerlink::kernels
