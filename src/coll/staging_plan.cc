// The chunks of a staged call (staging_plan.hpp).
#include "coll/staging_plan.hpp"

#include <algorithm>

#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kRecvAlignment = 256;

std::size_t alignUp(std::size_t bytes, std::size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Elements of the send and recv regions per element of a chunk's count.
std::size_t sendUnits(Collective collective, std::size_t n) {
  return collective == Collective::ReduceScatter || collective == Collective::AllToAll ? n : 1;
}
std::size_t recvUnits(Collective collective, std::size_t n) {
  return collective == Collective::AllGather || collective == Collective::AllToAll ? n : 1;
}

StridedCopy contiguous(std::size_t srcOffset, std::size_t dstOffset, std::size_t bytes) {
  return {srcOffset, dstOffset, bytes, 1, bytes, bytes};
}

}  // namespace

std::size_t stagedChunkCount(Collective collective, int nranks, std::size_t elementSize, std::size_t regionBytes) {
  if (nranks < 1 || elementSize == 0) throw Error(ErrorCode::Internal, "stagedChunkCount: no ranks or elements");
  const auto n = static_cast<std::size_t>(nranks);
  const std::size_t unit = elementSize < 16 ? 16 / elementSize : 1;
  std::size_t count = regionBytes / ((sendUnits(collective, n) + recvUnits(collective, n)) * elementSize);
  count -= count % unit;
  // The recv region starts on a boundary: fewer elements until the padding fits too (none where the send region
  // ends on one, as a power-of-two half does for one block).
  while (count > 0 && alignUp(count * sendUnits(collective, n) * elementSize, kRecvAlignment) +
                              count * recvUnits(collective, n) * elementSize >
                          regionBytes) {
    count -= unit;
  }
  return count;
}

std::size_t stagingHalfBytes(std::size_t windowBytes) {
  return windowBytes / 2 / kRecvAlignment * kRecvAlignment;
}

std::vector<StagedChunk> stagedChunks(Collective collective, int nranks, int rank, int root, std::size_t count,
                                      std::size_t elementSize, std::size_t windowBytes) {
  if (collective == Collective::SendRecv) throw Error(ErrorCode::Internal, "stagedChunks: send/recv");
  std::vector<StagedChunk> chunks;
  if (count == 0) return chunks;
  const std::size_t halfBytes = stagingHalfBytes(windowBytes);
  const std::size_t most = halfBytes > 0 ? stagedChunkCount(collective, nranks, elementSize, halfBytes) : 0;
  if (most == 0) throw Error(ErrorCode::Internal, "stagedChunks: half the window holds no element");
  const auto n = static_cast<std::size_t>(nranks);
  const std::size_t s = elementSize;
  // Nearly equal chunks rather than full ones and a tail: every chunk then runs the same kernel, and the
  // pipeline's first copy in and last copy out, which nothing overlaps, are no longer than they must be.
  const std::size_t unit = s < 16 ? 16 / s : 1;
  const std::size_t pieces = (count + most - 1) / most;
  const std::size_t each = std::min(most, ((count + pieces - 1) / pieces + unit - 1) / unit * unit);
  const std::size_t recvAt = alignUp(most * sendUnits(collective, n) * s, kRecvAlignment);
  for (std::size_t first = 0; first < count; first += each) {
    StagedChunk chunk;
    chunk.count = std::min(each, count - first);
    chunk.half = static_cast<int>(chunks.size() % 2);
    chunk.sendOffset = static_cast<std::size_t>(chunk.half) * halfBytes;
    chunk.recvOffset = chunk.sendOffset + recvAt;
    const std::size_t base = chunk.sendOffset;
    const std::size_t recvOffset = chunk.recvOffset;
    const std::size_t bytes = chunk.count * s;  // of one block
    const std::size_t at = first * s;           // where the chunk starts in a block of the caller's buffers
    const std::size_t block = count * s;        // a block of the caller's buffers
    switch (collective) {
      case Collective::AllReduce:
        chunk.in = contiguous(at, base, bytes);
        chunk.out = contiguous(recvOffset, at, bytes);
        break;
      case Collective::Broadcast:
        if (rank == root) chunk.in = contiguous(at, base, bytes);
        chunk.out = contiguous(recvOffset, at, bytes);
        break;
      case Collective::Reduce:
        chunk.in = contiguous(at, base, bytes);
        if (rank == root) chunk.out = contiguous(recvOffset, at, bytes);
        break;
      case Collective::AllGather:
        chunk.in = contiguous(at, base, bytes);
        chunk.out = StridedCopy{recvOffset, at, bytes, n, bytes, block};
        break;
      case Collective::ReduceScatter:
        chunk.in = StridedCopy{at, base, bytes, n, block, bytes};
        chunk.out = contiguous(recvOffset, at, bytes);
        break;
      case Collective::AllToAll:
        chunk.in = StridedCopy{at, base, bytes, n, block, bytes};
        chunk.out = StridedCopy{recvOffset, at, bytes, n, bytes, block};
        break;
      case Collective::SendRecv: break;
    }
    chunks.push_back(chunk);
  }
  return chunks;
}

}  // namespace peerlink::coll
