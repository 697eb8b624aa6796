// How a two-hop transfer is laid out: a pipelined one (STAGED through host memory, RELAY by copy engines
// through a third GPU) cut into chunks with a staging slot each; a pass-through RELAY shared among relay
// GPUs, and on how many SMs each kernel runs. Pure; the executors (two_hop_pipeline.cc, transport.cc)
// follow it.
#pragma once

#include <cstddef>
#include <vector>

namespace peerlink {

struct PipelineChunk {
  std::size_t offset = 0;  ///< into the source and the destination
  std::size_t bytes = 0;
  int slot = 0;  ///< staging buffer slot, chunk index modulo the slot count
};

/// Cuts `bytes` into chunks of `chunkBytes` (the last may be shorter) assigned round-robin to `slots`
/// staging slots. Chunk i may reuse slot i % slots only after chunk i - slots has left it (hop 2 done).
/// Throws Error(InvalidUsage) for chunkBytes == 0 or slots < 1.
std::vector<PipelineChunk> planChunks(std::size_t bytes, std::size_t chunkBytes, int slots);

/// One relay GPU's part of a pass-through RELAY split across several: bytes [offset, offset + bytes).
struct RelayShare {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

/// How a pass-through RELAY of `bytes` divides among `relays` relay GPUs, the first being the caller's
/// stream's (which gates the others' kernels and waits for them): whole multiples of 4 KiB, the first
/// kRelayCallerLeadBytes more than an equal share, the rest equal; every byte in exactly one share, a share
/// may be empty. relays == 0 is taken as 1.
std::vector<RelayShare> planRelayShares(std::size_t bytes, std::size_t relays);

/// The SMs a pass-through RELAY kernel (a peer read and a peer write per byte) runs on, of its relay GPU's
/// `smCount`, when the transfer is split across `relays` relay GPUs (1: one relay). At least 1.
int relayKernelSms(int smCount, std::size_t relays);

}  // namespace peerlink
