// A staged call's chunks (src/coll/staging_plan.hpp), run on the host: each rank's copies into its window,
// the collective between the windows (the closed form), the copies out, in the order the pipelined schedule
// issues them (staging_schedule.hpp: chunk k+1's copy in before chunk k's copy out) -- and the callers' buffers,
// apart or in place, must hold what the collective on the whole buffers gives. Then the cut itself: every rank
// cuts alike, the halves alternate, each chunk's copies cover exactly its elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll/host_reduce.hpp"
#include "coll/kernel_args.hpp"
#include "coll/staging_plan.hpp"
#include "coll/staging_schedule.hpp"
#include "kernel_models.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

constexpr Collective kCollectives[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                                       Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};

// Every row of `copy`, in the order it copies them.
template <typename Fn>
void forEachRow(const StridedCopy& copy, Fn&& row) {
  for (std::size_t j = 0; j < copy.rows; ++j) {
    row(copy.srcOffset + j * copy.srcPitch, copy.dstOffset + j * copy.dstPitch, copy.rowBytes);
  }
}

// Copies within one rank's memory: `src` and `dst` are offsets of the buffers in it.
void applyCopy(const StridedCopy& copy, const Bytes& from, std::size_t src, std::size_t srcBytes, Bytes& to,
               std::size_t dst, std::size_t dstBytes) {
  forEachRow(copy, [&](std::size_t s, std::size_t d, std::size_t bytes) {
    ASSERT_LE(s + bytes, srcBytes) << "a copy reads past its source";
    ASSERT_LE(d + bytes, dstBytes) << "a copy writes past its destination";
    std::memmove(to.data() + dst + d, from.data() + src + s, bytes);
  });
}

Bytes randomBytes(std::size_t bytes, std::uint64_t seed) {
  Bytes data(bytes);
  std::mt19937_64 rng(seed);
  for (std::byte& b : data) b = static_cast<std::byte>(rng());
  return data;
}

// Whether rank r of a case runs the call in place (the API's in-place pairs: not all-to-all, and for the rooted
// collectives only at the root, whose the other buffer is).
bool inPlaceOn(Collective collective, bool inPlace, int rank, int root) {
  if (!inPlace || collective == Collective::AllToAll) return false;
  return (collective != Collective::Broadcast && collective != Collective::Reduce) || rank == root;
}

// One rank's buffers in one memory: send at `send`, recv at `recv` (in place: where the API pairs them).
struct RankMemory {
  Bytes bytes;
  std::size_t send = 0;
  std::size_t sendBytes = 0;
  std::size_t recv = 0;
  std::size_t recvBytes = 0;
};

RankMemory rankMemory(Collective collective, int n, std::size_t count, int rank, int root, std::size_t s, bool inPlace,
                      const Bytes& input) {
  RankMemory m;
  m.sendBytes = sendElementsOf(collective, n, count, rank, root) * s;
  m.recvBytes = recvElementsOf(collective, n, count, rank, root) * s;
  const std::size_t block = count * s * static_cast<std::size_t>(rank);
  if (inPlaceOn(collective, inPlace, rank, root)) {
    if (collective == Collective::AllGather) m.send = block;
    if (collective == Collective::ReduceScatter) m.recv = block;
    m.bytes.assign(std::max(m.send + m.sendBytes, m.recv + m.recvBytes), std::byte{0xa5});
  } else {
    m.recv = m.sendBytes;
    m.bytes.assign(m.sendBytes + m.recvBytes, std::byte{0xa5});
  }
  std::copy(input.begin(), input.end(), m.bytes.begin() + static_cast<std::ptrdiff_t>(m.send));
  return m;
}

// A copy operation of the schedule on one rank: its chunk's copies into or out of its window. Returns the bytes
// copied.
std::size_t runChunkCopies(const StagingOp& op, const StagedChunk& chunk, RankMemory& m, Bytes& window) {
  std::size_t copied = 0;
  if (op.kind == StagingOp::Kind::CopyIn) {
    for (const StridedCopy& copy : chunk.in) {
      applyCopy(copy, m.bytes, m.send, m.sendBytes, window, 0, window.size());
      copied += copy.rowBytes * copy.rows;
    }
  } else if (op.kind == StagingOp::Kind::CopyOut) {
    for (const StridedCopy& copy : chunk.out) {
      applyCopy(copy, window, 0, window.size(), m.bytes, m.recv, m.recvBytes);
      copied += copy.rowBytes * copy.rows;
    }
  }
  return copied;
}

// Each rank's recv buffer.
std::vector<Bytes> recvsOf(const std::vector<RankMemory>& memory) {
  std::vector<Bytes> recvs;
  for (const RankMemory& m : memory) {
    recvs.emplace_back(m.bytes.begin() + static_cast<std::ptrdiff_t>(m.recv),
                       m.bytes.begin() + static_cast<std::ptrdiff_t>(m.recv + m.recvBytes));
  }
  return recvs;
}

struct Case {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::I32;
  int n = 1;
  int root = 0;
  std::size_t count = 0;
  std::size_t window = 0;
  bool inPlace = false;

  std::string describe() const {
    return std::string(collectiveName(collective)) + " " + dataTypeName(type) + " n=" + std::to_string(n) +
           " window=" + std::to_string(window) + " count=" + std::to_string(count) + " root=" + std::to_string(root) +
           (inPlace ? " in place" : "");
  }
};

// Runs the staged call on the host in the pipelined schedule's issue order; returns each rank's recv buffer.
std::vector<Bytes> runStaged(const Case& c, const std::vector<Bytes>& sends) {
  const std::size_t s = dataTypeSize(c.type);
  const auto n = static_cast<std::size_t>(c.n);
  std::vector<RankMemory> memory;
  std::vector<Bytes> windows(n, Bytes(c.window));
  std::vector<std::vector<StagedChunk>> plans;
  for (int r = 0; r < c.n; ++r) {
    memory.push_back(rankMemory(c.collective, c.n, c.count, r, c.root, s, c.inPlace, sends[r]));
    plans.push_back(stagedChunks(c.collective, c.n, r, c.root, c.count, s, c.window));
  }
  for (const StagingOp& op : stagingSchedule(plans.front().size(), true)) {
    const std::size_t k = op.chunk;
    if (op.kind == StagingOp::Kind::Kernel) {
      const StagedChunk& cut = plans[0][k];
      std::vector<Bytes> windowSends;
      for (int r = 0; r < c.n; ++r) {
        const Bytes& window = windows[r];
        const std::size_t sendBytes = sendElementsOf(c.collective, c.n, cut.count, r, c.root) * s;
        windowSends.emplace_back(window.begin() + static_cast<std::ptrdiff_t>(cut.sendOffset),
                                 window.begin() + static_cast<std::ptrdiff_t>(cut.sendOffset + sendBytes));
      }
      const std::vector<Bytes> results =
          hostReduceReference(c.collective, c.type, ReduceOp::Sum, c.n, cut.count, c.root, windowSends);
      for (int r = 0; r < c.n; ++r) {
        EXPECT_LE(cut.recvOffset + results[r].size(), c.window) << "the recv region leaves the window";
        if (cut.recvOffset + results[r].size() > c.window || results[r].empty()) continue;
        std::memcpy(windows[r].data() + cut.recvOffset, results[r].data(), results[r].size());
      }
      continue;
    }
    for (int r = 0; r < c.n; ++r) runChunkCopies(op, plans[r][k], memory[r], windows[r]);
  }
  return recvsOf(memory);
}

// The counts a window's halves make interesting: one element, one not divisible by the ranks, a half's worth and
// either side of it, and several halves.
std::vector<std::size_t> countsFor(Collective collective, int n, std::size_t s, std::size_t window) {
  const std::size_t most = stagedChunkCount(collective, n, s, stagingHalfBytes(window));
  const auto ranks = static_cast<std::size_t>(n);
  return {0, 1, 2 * ranks + 1, most - 1, most, most + 1, 2 * most + 1, 5 * most + 3};
}

TEST(StagingPlan, EveryCollectiveThroughSmallWindowsGivesTheWholeResult) {
  int cases = 0;
  for (const Collective collective : kCollectives) {
    for (const DataType type : {DataType::I8, DataType::F16, DataType::I32, DataType::U64}) {
      const std::size_t s = dataTypeSize(type);
      for (int n = 1; n <= 8; n += (n < 3 ? 1 : 3)) {  // 1, 2, 3, 6
        for (const std::size_t window : {std::size_t{2048}, std::size_t{8192} + 100}) {
          for (const std::size_t count : countsFor(collective, n, s, window)) {
            for (const bool inPlace : {false, true}) {
              const Case c{collective, type,   n,      static_cast<int>(count % static_cast<std::size_t>(n)),
                           count,      window, inPlace};
              std::vector<Bytes> sends;
              for (int r = 0; r < n; ++r) {
                sends.push_back(randomBytes(sendElementsOf(collective, n, count, r, c.root) * s, 7 * count + r));
              }
              const std::vector<Bytes> expected =
                  hostReduceReference(collective, type, ReduceOp::Sum, n, count, c.root, sends);
              const std::vector<Bytes> staged = runStaged(c, sends);
              for (int r = 0; r < n; ++r) EXPECT_EQ(staged[r], expected[r]) << c.describe() << " rank " << r;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

// Bytes [begin, end) of a buffer, how many times the chunks' copies touched each.
void cover(std::vector<int>& touched, std::size_t begin, std::size_t bytes) {
  ASSERT_LE(begin + bytes, touched.size()) << "a copy leaves the caller's buffer";
  for (std::size_t i = begin; i < begin + bytes; ++i) ++touched[i];
}

TEST(StagingPlan, RanksCutAlikeTheHalvesAlternateAndTheCopiesCoverEachElementOnce) {
  const std::size_t window = 8192 + 100;
  const std::size_t half = stagingHalfBytes(window);
  ASSERT_EQ(half % 256, 0u);
  ASSERT_LE(2 * half, window);
  for (const Collective collective : kCollectives) {
    for (const std::size_t s : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
      for (int n = 1; n <= 8; ++n) {
        const std::size_t most = stagedChunkCount(collective, n, s, half);
        const std::size_t unit = s < 16 ? 16 / s : 1;
        for (const std::size_t count : countsFor(collective, n, s, window)) {
          const int root = n - 1;
          const std::string what = std::string(collectiveName(collective)) + " s=" + std::to_string(s) +
                                   " n=" + std::to_string(n) + " count=" + std::to_string(count);
          const std::vector<StagedChunk> cut = stagedChunks(collective, n, 0, root, count, s, window);
          const std::size_t pieces = (count + most - 1) / most;
          EXPECT_EQ(cut.size(), pieces) << what << ": as few chunks as fit a half each";
          std::size_t total = 0;
          for (std::size_t k = 0; k < cut.size(); ++k) {
            const StagedChunk& chunk = cut[k];
            total += chunk.count;
            EXPECT_EQ(chunk.half, static_cast<int>(k % 2)) << what << " chunk " << k;
            EXPECT_EQ(chunk.sendOffset, static_cast<std::size_t>(chunk.half) * half) << what;
            EXPECT_EQ(chunk.recvOffset % 256, 0u) << what;
            EXPECT_GE(chunk.recvOffset, chunk.sendOffset + chunk.count * s * sendElementsOf(collective, n, 1, 0, 0))
                << what << ": the recv region starts past the send region";
            EXPECT_LE(chunk.recvOffset + chunk.count * s * recvElementsOf(collective, n, 1, 0, 0),
                      chunk.sendOffset + half)
                << what << ": chunk " << k << " leaves its half";
            EXPECT_LE(chunk.count, most);
            if (k + 1 < cut.size()) {
              EXPECT_EQ(chunk.count % unit, 0u) << what << ": chunks but the last in whole 16-byte units";
              EXPECT_EQ(chunk.count, cut.front().count) << what << ": chunks but the last alike";
            }
          }
          EXPECT_EQ(total, count) << what;
          for (int r = 0; r < n; ++r) {
            const std::vector<StagedChunk> mine = stagedChunks(collective, n, r, root, count, s, window);
            ASSERT_EQ(mine.size(), cut.size()) << what << " rank " << r;
            std::vector<int> read(sendElementsOf(collective, n, count, r, root) * s, 0);
            std::vector<int> written(recvElementsOf(collective, n, count, r, root) * s, 0);
            for (std::size_t k = 0; k < mine.size(); ++k) {
              EXPECT_EQ(mine[k].count, cut[k].count) << what << " rank " << r;
              EXPECT_EQ(mine[k].half, cut[k].half);
              EXPECT_EQ(mine[k].sendOffset, cut[k].sendOffset);
              EXPECT_EQ(mine[k].recvOffset, cut[k].recvOffset);
              for (const StridedCopy& copy : mine[k].in) {
                forEachRow(copy, [&](std::size_t from, std::size_t to, std::size_t bytes) {
                  cover(read, from, bytes);
                  EXPECT_GE(to, mine[k].sendOffset);
                  EXPECT_LE(to + bytes, mine[k].recvOffset) << what << ": a copy in past the send region";
                });
              }
              for (const StridedCopy& copy : mine[k].out) {
                forEachRow(copy, [&](std::size_t from, std::size_t to, std::size_t bytes) {
                  cover(written, to, bytes);
                  EXPECT_GE(from, mine[k].recvOffset);
                  EXPECT_LE(from + bytes, mine[k].sendOffset + half) << what << ": a copy out past the half";
                });
              }
            }
            EXPECT_TRUE(std::all_of(read.begin(), read.end(), [](int t) { return t == 1; }))
                << what << " rank " << r << ": every input byte copied in exactly once";
            EXPECT_TRUE(std::all_of(written.begin(), written.end(), [](int t) { return t == 1; }))
                << what << " rank " << r << ": every output byte copied out exactly once";
          }
        }
      }
    }
  }
}

TEST(StagingPlan, ACallThatFitsHalfAWindowIsOneChunkAndALargerOneIsCutEvenly) {
  constexpr std::size_t kWindow = std::size_t{64} << 20;
  const std::size_t most = stagedChunkCount(Collective::AllReduce, 2, 4, stagingHalfBytes(kWindow));
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, most, 4, kWindow).size(), 1u);
  // Just past a half: two chunks of half the count each, not a full one and a tail of one element.
  const std::vector<StagedChunk> two = stagedChunks(Collective::AllReduce, 2, 0, 0, most + 4, 4, kWindow);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].count, most / 2 + 4);
  EXPECT_EQ(two[1].count, most / 2);
}

TEST(StagingPlan, ALargeCallThroughALargeWindowStillTakesFourChunks) {
  constexpr std::size_t kWindow = std::size_t{256} << 20;  // an all-reduce chunk of up to 64 MiB
  constexpr std::size_t kMiBOfF32 = std::size_t{1} << 18;
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, 16 * kMiBOfF32, 4, kWindow).size(), 1u);
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, 32 * kMiBOfF32, 4, kWindow).size(), 2u);
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, 64 * kMiBOfF32, 4, kWindow).size(), 4u);
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, 256 * kMiBOfF32, 4, kWindow).size(), 4u);
  EXPECT_EQ(stagedChunks(Collective::AllReduce, 2, 0, 0, 512 * kMiBOfF32, 4, kWindow).size(), 8u);
}

TEST(StagingPlan, ChunksFillTheRegionInWholeSixteenByteUnits) {
  constexpr std::size_t kWindow = std::size_t{64} << 20;
  const std::size_t half = stagingHalfBytes(kWindow);
  EXPECT_EQ(half, kWindow / 2);
  for (const std::size_t s : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    // All-reduce: half a half each way.
    const std::size_t most = stagedChunkCount(Collective::AllReduce, 4, s, half);
    EXPECT_EQ(most * s % 16, 0u);
    EXPECT_GT(most * s, half / 2 - 4096);
    EXPECT_LE(most * s, half / 2);
    // All-gather on 4 ranks: one part in, four out.
    const std::size_t gather = stagedChunkCount(Collective::AllGather, 4, s, half);
    EXPECT_EQ(gather * s % 16, 0u);
    EXPECT_GT(gather * s, half / 5 - 4096);
  }
}

// A kernel whose own parts may stay in the caller's buffers, and how it is chosen.
struct OwnPartsKernel {
  Collective collective;
  Kernel kernel;
  Algorithm algorithm;
};

constexpr OwnPartsKernel kOwnPartsKernels[] = {
    {Collective::AllReduce, Kernel::TwoShot, Algorithm::TwoShot},
    {Collective::AllReduce, Kernel::OneShotReduce, Algorithm::OneShot},
    {Collective::Reduce, Kernel::OneShotReduce, Algorithm::OneShot},
    {Collective::ReduceScatter, Kernel::ShardReduce, Algorithm::OneShot},
    {Collective::AllGather, Kernel::Copy, Algorithm::OneShot},
    {Collective::AllToAll, Kernel::Copy, Algorithm::OneShot},
    {Collective::Broadcast, Kernel::Copy, Algorithm::OneShot},
};

// The staged call with each chunk's kernel run by its host model over the kernel arguments every rank builds from
// its table: the peers' buffers their windows, its own the caller's where `ownParts[r]` (keepOwnPartsLocal) --
// so a part a peer reads that was not copied in, or one a peer stores that is not copied out, shows in the result
// (the windows start poisoned). Returns each rank's recv buffer and counts the bytes copied.
std::vector<Bytes> runStagedKernels(const Case& c, const OwnPartsKernel& k, const std::vector<bool>& ownParts,
                                    const std::vector<Bytes>& sends, std::size_t* copied) {
  const std::size_t s = dataTypeSize(c.type);
  std::vector<RankMemory> memory;
  std::vector<Bytes> windows(static_cast<std::size_t>(c.n), Bytes(c.window, std::byte{0x5a}));
  std::vector<std::vector<StagedChunk>> plans;
  for (int r = 0; r < c.n; ++r) {
    memory.push_back(rankMemory(c.collective, c.n, c.count, r, c.root, s, c.inPlace, sends[r]));
    plans.push_back(stagedChunks(c.collective, c.n, r, c.root, c.count, s, c.window));
    if (!ownParts[static_cast<std::size_t>(r)]) continue;
    for (StagedChunk& chunk : plans.back()) {
      keepOwnPartsLocal(chunk, c.collective, k.kernel, k.algorithm, c.n, r, c.root, c.count, s);
      EXPECT_EQ(chunk.own, OwnBuffers::Caller) << c.describe();
    }
  }
  CollectiveChoice choice;
  choice.kernel = k.kernel;
  choice.wanted = k.kernel;
  choice.algorithm = k.algorithm;
  SymmetricTable symmetric;  // the kernels' scratch: the models never touch it
  for (const StagingOp& op : stagingSchedule(plans.front().size(), true)) {
    const std::size_t chunkIndex = op.chunk;
    if (op.kind == StagingOp::Kind::Kernel) {
      const StagedChunk& cut = plans[0][chunkIndex];
      std::vector<kernels::CollReduceArgs> reductions;
      std::vector<kernels::CollCopyArgs> copies;
      for (int r = 0; r < c.n; ++r) {
        PeerPointerTable table;
        for (int p = 0; p < c.n; ++p) {
          table.send[p] = windows[p].data() + cut.sendOffset;
          table.recv[p] = windows[p].data() + cut.recvOffset;
        }
        const StagedChunk& mine = plans[r][chunkIndex];
        RankMemory& m = memory[r];
        if (mine.own == OwnBuffers::Caller) {
          table.send[r] = m.bytes.data() + m.send + mine.ownSendOffset;
          table.recv[r] = m.bytes.data() + m.recv + mine.ownRecvOffset;
          table.sendPitch[r] = mine.ownSendPitch;
        }
        RankView view;
        view.rank = r;
        view.nranks = c.n;
        view.maxBlocks = 132;
        view.table = &symmetric;
        CallArgs call;
        call.collective = c.collective;
        call.rank = r;
        call.root = c.root;
        call.count = cut.count;
        call.type = c.type;
        call.send = table.send[r];
        call.recv = table.recv[r];
        const std::size_t bytes = cut.count * s;
        if (k.kernel == Kernel::Copy) {
          copies.push_back(copyArgs(view, table, call, choice, bytes));
        } else {
          reductions.push_back(reductionArgs(view, table, call, choice, bytes).args);
        }
      }
      runReductionModel(c.type, reductions);
      runCopyModel(copies);
      continue;
    }
    for (int r = 0; r < c.n; ++r) *copied += runChunkCopies(op, plans[r][chunkIndex], memory[r], windows[r]);
  }
  return recvsOf(memory);
}

TEST(StagingPlan, OwnPartsInTheCallersBuffersGiveTheWholeResultWhateverEachRankChooses) {
  int cases = 0;
  for (const OwnPartsKernel& k : kOwnPartsKernels) {
    for (const DataType type : {DataType::I8, DataType::I32, DataType::U64}) {
      const std::size_t s = dataTypeSize(type);
      for (const int n : {1, 2, 3, 6}) {
        const std::size_t window = 8192 + 100;
        for (const std::size_t count : countsFor(k.collective, n, s, window)) {
          for (const bool inPlace : {false, true}) {
            const Case c{k.collective, type,   n,      static_cast<int>(count % static_cast<std::size_t>(n)),
                         count,        window, inPlace};
            std::vector<Bytes> sends;
            for (int r = 0; r < n; ++r) {
              sends.push_back(randomBytes(sendElementsOf(k.collective, n, count, r, c.root) * s, 11 * count + r));
            }
            const std::vector<Bytes> expected =
                hostReduceReference(k.collective, type, ReduceOp::Sum, n, count, c.root, sends);
            // Every rank, none, and only rank 0: what a rank copies is its own affair.
            std::size_t copiedWhole = 0;
            std::size_t copiedOwn = 0;
            const std::vector<bool> none(static_cast<std::size_t>(n), false);
            const std::vector<bool> every(static_cast<std::size_t>(n), true);
            std::vector<bool> first = none;
            first[0] = true;
            const std::string what = c.describe() + " " + kernelName(k.kernel);
            const std::vector<Bytes> whole = runStagedKernels(c, k, none, sends, &copiedWhole);
            const std::vector<Bytes> own = runStagedKernels(c, k, every, sends, &copiedOwn);
            std::size_t ignored = 0;
            const std::vector<Bytes> mixed = runStagedKernels(c, k, first, sends, &ignored);
            for (int r = 0; r < n; ++r) {
              EXPECT_EQ(whole[r], expected[r]) << what << " rank " << r << ": every byte staged";
              EXPECT_EQ(own[r], expected[r]) << what << " rank " << r << ": own parts in the caller's buffers";
              EXPECT_EQ(mixed[r], expected[r]) << what << " rank " << r << ": rank 0's own parts alone";
            }
            if (count > 0) {
              EXPECT_LT(copiedOwn, copiedWhole) << what << ": keeping the own parts copies less";
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 500);
}

TEST(StagingPlan, TwoRanksOfATwoShotAllReduceCopyHalfTheirDataEachWay) {
  constexpr std::size_t kWindow = std::size_t{64} << 20;
  const std::size_t count = std::size_t{64} << 20;  // 256 MiB of f32: several chunks
  std::size_t whole = 0;
  std::size_t own = 0;
  for (StagedChunk chunk : stagedChunks(Collective::AllReduce, 2, 1, 0, count, 4, kWindow)) {
    for (const StridedCopy& copy : chunk.in) whole += copy.rowBytes * copy.rows;
    keepOwnPartsLocal(chunk, Collective::AllReduce, Kernel::TwoShot, Algorithm::TwoShot, 2, 1, 0, count, 4);
    ASSERT_EQ(chunk.in.size(), 1u);
    ASSERT_EQ(chunk.out.size(), 1u);
    EXPECT_EQ(chunk.in[0].srcOffset, chunk.first * 4) << "rank 1 copies shard 0, the chunk's first half";
    own += chunk.in[0].rowBytes;
  }
  EXPECT_EQ(whole, count * 4);
  EXPECT_EQ(own, count * 2);
}

TEST(StagingPlan, KernelsThatReachTheirOwnPartsElsewhereKeepTheWholeForm) {
  for (const auto& [collective, kernel, algorithm] :
       {OwnPartsKernel{Collective::AllToAll, Kernel::CeCopy, Algorithm::OneShot},
        OwnPartsKernel{Collective::Broadcast, Kernel::Copy, Algorithm::TwoShot},
        OwnPartsKernel{Collective::Reduce, Kernel::TwoShot, Algorithm::TwoShot},
        OwnPartsKernel{Collective::AllReduce, Kernel::RingAllReduce, Algorithm::Ring},
        OwnPartsKernel{Collective::AllReduce, Kernel::SplitTwoShot, Algorithm::TwoShot},
        OwnPartsKernel{Collective::AllGather, Kernel::CeCopy, Algorithm::OneShot}}) {
    EXPECT_FALSE(ownPartsStayLocal(collective, kernel, algorithm)) << kernelName(kernel);
    StagedChunk chunk = stagedChunks(collective, 4, 1, 0, 1000, 4, 1 << 20).front();
    const std::size_t in = chunk.in.size();
    keepOwnPartsLocal(chunk, collective, kernel, algorithm, 4, 1, 0, 1000, 4);
    EXPECT_EQ(chunk.own, OwnBuffers::Window) << kernelName(kernel);
    EXPECT_EQ(chunk.in.size(), in);
  }
}

TEST(StagingPlan, SendRecvIsNotACollectiveHere) {
  EXPECT_THROW(stagedChunks(Collective::SendRecv, 2, 0, 0, 10, 4, 4096), Error);
}

}  // namespace
}  // namespace peerlink::coll
