// The chunks of a staged call (staging_plan.hpp).
#include "coll/staging_plan.hpp"

#include <algorithm>
#include <utility>

#include "coll/partition.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr std::size_t kRecvAlignment = 256;
// A call of a few times this many bytes a block is cut into that many chunks, up to kPipelinedChunks, even where
// fewer would fit the halves: a chunk's copies run beside its neighbours' kernels, and one chunk has none (2x H200,
// a 64 MiB all-reduce through 256 MiB windows: 285 us in one chunk against 260 in four).
constexpr std::size_t kPipelinedChunkBytes = std::size_t{16} << 20;
constexpr std::size_t kPipelinedChunks = 4;

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
  const std::size_t pipelined =
      std::min(kPipelinedChunks, (count * s + kPipelinedChunkBytes - 1) / kPipelinedChunkBytes);
  const std::size_t pieces = std::max((count + most - 1) / most, pipelined);
  const std::size_t each = std::min(most, ((count + pieces - 1) / pieces + unit - 1) / unit * unit);
  const std::size_t recvAt = alignUp(most * sendUnits(collective, n) * s, kRecvAlignment);
  for (std::size_t first = 0; first < count; first += each) {
    StagedChunk chunk;
    chunk.first = first;
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
        chunk.in = {contiguous(at, base, bytes)};
        chunk.out = {contiguous(recvOffset, at, bytes)};
        break;
      case Collective::Broadcast:
        if (rank == root) chunk.in = {contiguous(at, base, bytes)};
        chunk.out = {contiguous(recvOffset, at, bytes)};
        break;
      case Collective::Reduce:
        chunk.in = {contiguous(at, base, bytes)};
        if (rank == root) chunk.out = {contiguous(recvOffset, at, bytes)};
        break;
      case Collective::AllGather:
        chunk.in = {contiguous(at, base, bytes)};
        chunk.out = {StridedCopy{recvOffset, at, bytes, n, bytes, block}};
        break;
      case Collective::ReduceScatter:
        chunk.in = {StridedCopy{at, base, bytes, n, block, bytes}};
        chunk.out = {contiguous(recvOffset, at, bytes)};
        break;
      case Collective::AllToAll:
        chunk.in = {StridedCopy{at, base, bytes, n, block, bytes}};
        chunk.out = {StridedCopy{recvOffset, at, bytes, n, bytes, block}};
        break;
      case Collective::SendRecv: break;
    }
    chunks.push_back(chunk);
  }
  return chunks;
}

bool copiesAnything(const std::vector<StagedChunk>& chunks) {
  return std::any_of(chunks.begin(), chunks.end(),
                     [](const StagedChunk& chunk) { return !chunk.in.empty() || !chunk.out.empty(); });
}

bool ownPartsStayLocal(Collective collective, Kernel kernel, Algorithm algorithm) {
  switch (collective) {
    case Collective::AllReduce: return kernel == Kernel::TwoShot || kernel == Kernel::OneShotReduce;
    case Collective::Reduce: return kernel == Kernel::OneShotReduce;
    case Collective::ReduceScatter: return kernel == Kernel::ShardReduce;
    // Pushes: the rank's own input into every output (all-gather: at block r; all-to-all: block p at block r of p).
    case Collective::AllGather:
    case Collective::AllToAll: return kernel == Kernel::Copy;
    case Collective::Broadcast: return kernel == Kernel::Copy && algorithm != Algorithm::TwoShot;
    case Collective::SendRecv: return false;
  }
  return false;
}

void keepOwnPartsLocal(StagedChunk& chunk, Collective collective, Kernel kernel, Algorithm algorithm, int nranks,
                       int rank, int root, std::size_t count, std::size_t elementSize) {
  if (chunk.own == OwnBuffers::Caller || !ownPartsStayLocal(collective, kernel, algorithm)) return;
  const std::size_t s = elementSize;
  const auto n = static_cast<std::size_t>(nranks);
  const auto r = static_cast<std::size_t>(rank);
  const std::size_t at = chunk.first * s;  // the chunk's start in a block of the caller's buffers
  const std::size_t bytes = chunk.count * s;
  const std::size_t block = count * s;
  // Rows [0, r) and (r, n) of a copy of one row per rank: every rank's block but this rank's.
  const auto otherRows = [&](const StridedCopy& whole) {
    std::vector<StridedCopy> rows;
    if (r > 0)
      rows.push_back(StridedCopy{whole.srcOffset, whole.dstOffset, whole.rowBytes, r, whole.srcPitch, whole.dstPitch});
    if (r + 1 < n) {
      rows.push_back(StridedCopy{whole.srcOffset + (r + 1) * whole.srcPitch, whole.dstOffset + (r + 1) * whole.dstPitch,
                                 whole.rowBytes, n - r - 1, whole.srcPitch, whole.dstPitch});
    }
    return rows;
  };
  chunk.ownSendOffset = at;
  chunk.ownRecvOffset = at;
  switch (collective) {
    case Collective::AllReduce:
      chunk.out.clear();  // one-shot: every rank stores only into its own output
      if (kernel == Kernel::TwoShot) {
        // Peers read every shard of this rank's input but shard r and store their shards of the result into its
        // output: the elements before shard r and after it, each way (shards as the kernel's arguments cut them).
        const ElementRange shard = partitionRange(chunk.count, nranks, rank, std::max<std::size_t>(1, 16 / s));
        chunk.in.clear();
        const std::size_t end = shard.begin + shard.count;
        for (const auto& [from, length] : {std::pair{std::size_t{0}, shard.begin}, std::pair{end, chunk.count - end}}) {
          if (length == 0) continue;
          chunk.in.push_back(contiguous(at + from * s, chunk.sendOffset + from * s, length * s));
          chunk.out.push_back(contiguous(chunk.recvOffset + from * s, at + from * s, length * s));
        }
      }
      break;
    case Collective::Reduce:  // the root reads every input: the others' inputs only cross
      if (rank == root) chunk.in.clear();
      chunk.out.clear();
      break;
    case Collective::Broadcast:  // every rank reads the root's input into its own output
      chunk.out.clear();
      break;
    case Collective::ReduceScatter:
      // Peers read block p of this rank's input; its own kernel reads block r (which lands at the caller's block
      // r through the offset) and stores the whole output.
      chunk.in = otherRows(chunk.in.front());
      chunk.out.clear();
      chunk.ownSendOffset = at + r * (block - bytes);
      break;
    case Collective::AllGather:
      // Peers store their block into this rank's output; its own kernel stores block r (at the caller's block r
      // through the offset) and reads its input.
      chunk.in.clear();
      chunk.out = otherRows(chunk.out.front());
      chunk.ownRecvOffset = at + r * (block - bytes);
      break;
    case Collective::AllToAll:
      // Peers store their blocks into this rank's output; its own kernel reads every block of its input (the
      // chunk's part of each, a caller's block apart) and stores block r.
      chunk.in.clear();
      chunk.out = otherRows(chunk.out.front());
      chunk.ownSendPitch = block;
      chunk.ownRecvOffset = at + r * (block - bytes);
      break;
    case Collective::SendRecv: return;
  }
  chunk.own = OwnBuffers::Caller;
}

}  // namespace peerlink::coll
