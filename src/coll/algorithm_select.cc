// Algorithm choice (algorithm_select.hpp): pure rules over the message size and whether the GPUs form an
// NVLink mesh; docs/collectives.md explains each. The thresholds are first estimates, to be tuned from
// `peerlink coll` runs on the device machines.
#include "coll/algorithm_select.hpp"

#include <algorithm>
#include <cstdio>

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll {

std::string formatBytes(std::size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof kUnits / sizeof kUnits[0]) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<std::size_t>(value))) {
    std::snprintf(text, sizeof text, "%zu %s", static_cast<std::size_t>(value), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

namespace {

constexpr std::size_t kKiB = 1024;
// Up to here a one-shot all-reduce (and a direct broadcast/reduce) is latency-bound on NVLink: one step
// and one flag wait beat the extra step of two-shot although each rank reads (n-1) times the data.
constexpr std::size_t kOneShotMaxNvlink = 256 * kKiB;
// Over PCIe the (n-1)-fold reads of one-shot share the switches' and root complex's links, so bandwidth
// costs sooner.
constexpr std::size_t kOneShotMaxPcie = 64 * kKiB;
// Direct broadcast/reduce put (n-1) times the data on the root's link; two-shot, where each of the n-1
// others owns a shard, once.
constexpr std::size_t kDirectRootMax = 256 * kKiB;
// LL carries a message, when it is not forced, while each rank puts at most a budget of lines on its links,
// (n-1) messages of twice their size: LL saves the two barriers of the direct kernels at twice the bytes on
// the wire, which pays while the extra bytes take less time than the barriers. Measured on H200 NVLink with
// the barriers of round 25 (a direct kernel's fixed cost ~6-7 us in a graph against ~4-5 us for LL),
// bench/results/2026-11-22-h200x4-round25-barriers, on 2 and 4 GPUs from 16 KiB to 4 MiB:
// - all-gather, all-to-all, reduce-scatter (every rank sends and receives) and the reductions: LL won at
//   768 KiB of lines per rank (4 GPUs) and lost at 1.5 MiB; on 2 GPUs it won at 512 KiB and was within
//   +-10% either way at 1 MiB (all-reduce 512 KiB: 7.9 us LL, 8.4 two-shot; all-gather 1 MiB: 7.6 LL, 7.4
//   direct). One budget for all: 1 MiB.
constexpr std::size_t kLlWireBytes = 1024 * kKiB;
// - broadcast loads only the root's outgoing links: LL won at 1.5 MiB of lines on 4 GPUs (256 KiB: 7.4 us
//   LL, 8.5 direct) and 1 MiB on 2, lost at 3 MiB on 4 (512 KiB: 11.7 against 9.2) and 2 MiB on 2 (1 MiB:
//   8.7-9.1 against 8.4).
constexpr std::size_t kLlRootWireBytes = 1536 * kKiB;
// The budgets above were measured with LL lines. In LL128 lines (round 41's kernels, 4xH200, graph, call B2:
// LL128 one-shot forced against AUTO's choice), 512 KiB messages -- 1.6 MiB of lines per rank -- ran faster
// in LL128 for every collective: all-reduce 8.24-8.28 us against two-shot's 8.85, broadcast 7.13-7.37
// against 7.78-7.82, all-gather, reduce-scatter and all-to-all of 512 KiB per peer 8.67-9.21 against
// 10.12-10.81 direct; at 768 KiB (2.4 MiB) all-reduce (10.7 against 9.65) and broadcast (9.6 against 8.55)
// were behind, and at 1 MiB per peer (3.2 MiB) the copies even or behind (all-to-all 16.9 against 15.2).
// One budget for all, between the two: 1.75 MiB (560 KiB messages on 4 ranks, the whole LL scratch on 2).
constexpr std::size_t kLl128WireBytes = 1792 * kKiB;
// Reduce is the exception: its non-root ranks send to the root alone, and in LL128 lines one-shot led up to
// the LL scratch's 1 MiB on 4 ranks (768 KiB: 6.98-7.28 us against two-shot's 9.0; 1 MiB: 9.30 against
// 10.1), 3.2 MiB of lines into the root and still 0.8 us ahead. Its budget, counted as the others' (n - 1
// messages' lines on a rank's links, here the root's), is a little past that: 3.5 MiB, the whole scratch
// on 2 and 4 ranks, 480 KiB messages on 8.
constexpr std::size_t kLl128ReduceWireBytes = 3584 * kKiB;
// LL128 in place of LL once a rank's LL lines, 2 (n - 1) x the message, reach this (withLineFormat): LL128
// costs about 0.05-0.25 us more at one line and half of LL's wire bytes per payload byte. 2xH200, graph,
// all-reduce (round 40 call C): 8 KiB per message (32 KiB of lines) 2.63 us LL, 2.68 LL128; 32 KiB 2.95 and
// 2.84; 512 KiB 6.83 and 4.73; every other collective tied at 8 KiB per peer and LL128 ahead from 32 KiB. On
// more ranks the lines grow with n - 1 and the line moves down with them: on 4xH200 (call F) the two tied at
// 8 KiB messages (48 KiB of lines, 3.4 us) and LL128 led from 16 KiB (3.5 against 3.6; 64 KiB 4.0 / 4.8).
// With round 41's kernels (polls of several peers at once; 4xH200, graph, call B) the copies still ran
// faster in LL lines below it -- all-gather of 64 B - 4 KiB per rank 2.96-3.05 us against 3.29-3.40,
// all-to-all 3.34-3.51 against 3.81-3.99, reduce-scatter and broadcast even -- but the reductions of whole
// messages did not: all-reduce 2.90-3.01 against LL's 2.93-3.05 (2 GPUs: 2.50-2.65 against 2.60-2.70),
// reduce 2.87-2.93 against 2.98-3.18. So all-reduce and reduce take LL128 lines at every size.
constexpr std::size_t kLl128FromWireBytes = 32 * kKiB;
// From here a two-shot all-reduce runs as two kernels, a direct-read reduce-scatter of each rank's shard and
// then an all-gather that pushes it, instead of one kernel whose threads load their shard from the peers
// and store the result to them pack by pack: on 4xH200 the reduce-scatter and all-gather collectives took
// 312 + 296 us at 128 MiB and 1237 + 1149 at 512 MiB against the fused kernel's 635 and 2513, and 84 + 79
// against 163 at 32 MiB (round 26). Split, all-reduce took 311 us at 64 MiB against the fused 323, 609
// against 635 at 128 MiB, 2395 against 2515 at 512 MiB (session 6, round 28); below 64 MiB the second
// kernel's barriers cost more than the split gains.
constexpr std::size_t kSplitTwoShotFrom = 64 * kKiB * kKiB;

// What Kernel::SplitTwoShot adds to the two-shot's reason; a push that replaces the split kernels drops it.
std::string splitTwoShotClause() {
  return "; >= " + formatBytes(kSplitTwoShotFrom) +
         ": as two kernels, a direct-read reduce-scatter into each rank's shard, then an all-gather that stores it "
         "into the peers";
}

// From here a broadcast on 3 or more ranks of an NVLink mesh runs as a ring (each rank stores each chunk into
// the next one's output as it arrives) instead of two-shot (the non-root ranks load the root's shards and
// store them to each other): on 4xH200 the ring took 787 us at 256 MiB against 833, 1522 against 1651 at
// 512 MiB and 2980 against 3298 at 1 GiB; at 128 MiB both took 422-425 us and below the chain's fill of
// n - 1 rounds loses (64 MiB: 250 against 215; session 6, round 28). In chunks of 8-16 KiB at 128 MiB (the
// ring's since round 43) the ring took 404.8-408.5 us against two-shot's 421.6 on 4x H100, at 64 MiB 221.2
// against 215.7 (round 43 call A). Since the rings start by meeting the next rank only (neighborStart, round
// 44 call A, 4x H100) the ring took 206.8 us at 64 MiB against two-shot's 211.0, at 32 MiB 115.3 against
// 112.7.
constexpr std::size_t kRingBroadcastFrom = 64 * kKiB * kKiB;
// The same for reduce from 16 MiB: a chain of stores towards the root through each rank's stage, instead
// of two-shot (the non-root ranks load their shard from n - 1 peers). On 4xH200 the ring took 450 us at
// 128 MiB against 464, 845 against 918 at 256 MiB, 1640 against 1837 at 512 MiB (round 29); on 128 blocks
// with a 32 MiB stage (session 8, round 36) 234 against 241 at 64 MiB and even at 128 MiB, while below its
// n - 1 rounds of fill lose (32 MiB: 136 against 132, 8 MiB: 55 against 43). With the neighbour start (round 44
// call A, 4x H100) the ring took 118.7 us at 32 MiB against two-shot's 123.4, at 16 MiB 71.2 against 65.3. With
// credits across calls (round 46 call C, 4x H100, in a graph, two runs) 63.4-64.3 us at 16 MiB against
// two-shot's 67.4, at 32 MiB 109.1-109.8 against 124.0-125.8; at 8 MiB 49.2-49.6 against 38.7-39.0.
constexpr std::size_t kRingReduceFrom = 16 * kKiB * kKiB;
// The same for all-reduce from 128 MiB: n ring reduces then n ring broadcasts side by side (every link
// carries 2(n-1)/n of the data as stores) instead of the split two-shot. On 4xH200 in one run (round 32)
// the ring took 1147 us at 256 MiB against 1209, 2300 against 2394 at 512 MiB, 4654 against 4777 at 1 GiB;
// with the ring reduce on 128 blocks (round 36) 594 against 609 at 128 MiB, at 64 MiB 315 against 311.
constexpr std::size_t kRingAllReduceFrom = 128 * kKiB * kKiB;
// The same for a reduce-scatter whose blocks (the per-rank output) reach this: n ring reduces side by side
// instead of each rank reading its block from every peer. On 4xH200 (round 35, medians of 8 samples against
// 4) the ring took 607 us with 64 MiB blocks against 631, 1182 against 1253 with 128 MiB, but spread wider
// (128 MiB blocks: 1150-1284 against 1244-1259). With the ring reduce on 128 blocks (round 36): 297 against
// 317 with 32 MiB blocks; 159 against 162 with 16 MiB, within the spread; 8 MiB: 89 against 85.
constexpr std::size_t kRingReduceScatterFrom = 32 * kKiB * kKiB;
// Below this a two-shot reduce cuts the count among all n ranks, the root reducing a shard too: more ranks
// share the reads while the root's links, which then bring 2(n-1)/n of the data in, are not yet the bound.
// On 4xH200 in one run (round 32, both on one block per SM) with the root against without: 512 KiB 9.46 us
// against 10.50, 4 MiB 24.7 against 29.3, 8 MiB 43.4 against 49.0; 16 MiB 79.3 against 77.1. With the
// non-root ranks on 32 blocks (kRootedTwoShotBlocks; round 38) the root's share only pays below 4 MiB:
// 2 MiB 15.7 against 16.8, 4 MiB 24.7-25.0 against 23.6-23.7, 8 MiB 43.4 against 38.5, 16 MiB 77.2 against
// 65.9.
constexpr std::size_t kReduceRootShardBelow = 4 * kKiB * kKiB;
// Two-shot broadcasts and reduces from this size run on at most kRootedTwoShotBlocks blocks per rank: all
// n-1 non-root ranks read the root at once (broadcast) or read it and store into it (reduce), and fewer
// blocks moved more on 4xH200. Broadcast (round 26): 32 MiB 113 us against 133 on a block per SM, 128 MiB
// 422 against 448; 4 MiB 20.8-20.9 against 22.5-22.8 (round 38). Reduce without the root's shard (round
// 38): 16 blocks 37.9 us at 8 MiB, 24 38.6, 32 38.5, 132 (a block per SM) 43.4 with the root; 32 MiB 123.4
// on 32 blocks, 124.9 on 24, 127.2 on 48, 132.1 on 132. At 2 MiB neither moved.
constexpr std::size_t kRootedFewBlocksFrom = 4 * kKiB * kKiB;
constexpr int kRootedTwoShotBlocks = 32;
// Off an NVLink mesh the doubled bytes share PCIe links: the copy collectives use LL only for small
// messages (the reductions' one-shot limit is lower there already).
constexpr std::size_t kLlCopyMaxPcie = 64 * kKiB;
// A send/recv group runs in LL lines (coll_p2p_ll.cu) while the most one rank sends fits a pair's slot of
// them (kernels::kCollP2pLlMaxBytes, 256 KiB): the receivers' copy kernel meets each sender at a start and an
// end barrier, LL lines need one flag wait. On 4x H100 (round 51 call D, nccl-tests' ring shift, 100-call
// graphs) LL took 3.27-3.42 us from 8 B to 8 KiB, 3.76 at 64 KiB and 4.82 at 256 KiB, the copy kernel 5.07-5.24,
// 6.90-6.95 and 7.04-7.05.

// Whether every ordered pair of `devices` talks over NVLink (directly or through NVSwitch), and if not the
// first pair that does not, for the reason.
struct Fabric {
  bool nvlinkMesh = true;
  std::string detail;
};

int gpuIndexOf(const Topology& topology, int device) {
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    if (topology.gpus[i].cudaOrdinal == device) return static_cast<int>(i);
  }
  return -1;
}

const GpuPair* findPair(const Topology& topology, int src, int dst) {
  for (const GpuPair& pair : topology.pairs) {
    if (pair.src == src && pair.dst == dst) return &pair;
  }
  return nullptr;
}

Fabric fabricOf(const Topology& topology, const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      const int src = gpuIndexOf(topology, a);
      const int dst = gpuIndexOf(topology, b);
      const GpuPair* pair = src >= 0 && dst >= 0 ? findPair(topology, src, dst) : nullptr;
      const std::string pairName = "GPU " + std::to_string(a) + " -> " + std::to_string(b);
      if (pair == nullptr) return {false, pairName + " unknown to the topology"};
      if (pair->path != PathClass::NVL || pair->nvlinks == 0) return {false, pairName + " " + linkLabel(*pair)};
    }
  }
  return {true, "NVLink between every pair"};
}

std::string perRank(std::size_t bytes) {
  return formatBytes(bytes) + " per rank";
}

// "1.75x": how many times its data a rank moves, for reasons.
std::string times(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3gx", factor);
  return text;
}

AlgorithmChoice allReduceRule(std::size_t bytes, int n, const Fabric& fabric) {
  const std::size_t limit = fabric.nvlinkMesh ? kOneShotMaxNvlink : kOneShotMaxPcie;
  if (bytes <= limit) {
    return {Algorithm::OneShot,
            perRank(bytes) + " <= " + formatBytes(limit) + " (" + fabric.detail + "): one-shot (latency-bound)"};
  }
  const std::string share = times(2.0 * (n - 1) / n) + " the data per rank";
  if (fabric.nvlinkMesh && n > 2 && bytes >= kRingAllReduceFrom) {
    return {Algorithm::Ring, perRank(bytes) + " >= " + formatBytes(kRingAllReduceFrom) +
                                 " on an NVLink mesh: ring (stores " + share + " along the ranks)"};
  }
  if (fabric.nvlinkMesh) {
    return {Algorithm::TwoShot, perRank(bytes) + " > " + formatBytes(limit) + " on an NVLink mesh: two-shot (reads " +
                                    share + ", 2 steps)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatBytes(limit) + ", no NVLink mesh (" + fabric.detail +
                               "): ring (stores " + share + ", neighbours only)"};
}

AlgorithmChoice scatterGatherRule(std::size_t bytes, const Fabric& fabric) {
  if (fabric.nvlinkMesh) {
    return {Algorithm::OneShot, perRank(bytes) + " on an NVLink mesh: direct (every peer one hop, one step)"};
  }
  if (bytes <= kOneShotMaxPcie) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatBytes(kOneShotMaxPcie) + " (" + fabric.detail +
                                    "): direct (latency-bound)"};
  }
  return {Algorithm::Ring, perRank(bytes) + " > " + formatBytes(kOneShotMaxPcie) + ", no NVLink mesh (" +
                               fabric.detail + "): ring (neighbours only)"};
}

// Reduce-scatter: the ring from kRingReduceScatterFrom per block on 3+ ranks of an NVLink mesh, else as
// all-gather.
AlgorithmChoice reduceScatterRule(std::size_t bytes, int n, const Fabric& fabric) {
  if (fabric.nvlinkMesh && n > 2 && bytes >= kRingReduceScatterFrom) {
    return {Algorithm::Ring, perRank(bytes) + " >= " + formatBytes(kRingReduceScatterFrom) +
                                 " on an NVLink mesh: ring (stores " + times(n - 1) +
                                 " the block per rank along the ranks)"};
  }
  return scatterGatherRule(bytes, fabric);
}

AlgorithmChoice rootedRule(std::size_t bytes, int n) {
  if (n <= 2) return {Algorithm::OneShot, "2 ranks: direct (two-shot would move the same data in two steps)"};
  if (bytes <= kDirectRootMax) {
    return {Algorithm::OneShot, perRank(bytes) + " <= " + formatBytes(kDirectRootMax) + ": direct (latency-bound)"};
  }
  return {Algorithm::TwoShot, perRank(bytes) + " > " + formatBytes(kDirectRootMax) +
                                  ": two-shot (the root's link carries the data once, not " + times(n - 1) + ")"};
}

// Broadcast and reduce: the ring from `ringFrom` on 3+ ranks of an NVLink mesh, else rootedRule.
AlgorithmChoice rootedRingRule(std::size_t bytes, int n, const Fabric& fabric, std::size_t ringFrom) {
  if (n > 2 && fabric.nvlinkMesh && bytes >= ringFrom) {
    return {Algorithm::Ring,
            perRank(bytes) + " >= " + formatBytes(ringFrom) + " on an NVLink mesh: ring (pipelined along the ranks)"};
  }
  return rootedRule(bytes, n);
}

// " (on 32 blocks)" where rootedTwoShotBlocks caps the grid, else nothing.
std::string gridCapNote(Collective collective, std::size_t bytes, int nranks) {
  const int cap = rootedTwoShotBlocks(collective, bytes, nranks);
  return cap > 0 ? " (on " + std::to_string(cap) + " blocks)" : "";
}

// Whether LL carries a one-shot message of `bytes`, and why.
struct LlRule {
  bool use = false;
  std::string why;
};

// The lines a rank puts on its links sending a message of `bytes` to each of its n - 1 peers: 16 bytes per
// 8 of payload in LL lines, 128 per 120 in LL128's.
std::size_t lineWireBytes(std::size_t bytes, int nranks, bool ll128Lines) {
  const auto peers = static_cast<std::size_t>(std::max(1, nranks - 1));
  return ll128Lines ? peers * ((bytes + kernels::kCollLl128LinePayload - 1) / kernels::kCollLl128LinePayload *
                               kernels::kCollLl128LineBytes)
                    : 2 * peers * bytes;
}

// The lines a rank may put on its links for LL to carry a message of `collective` (above).
std::size_t lineBudget(Collective collective, bool ll128Lines) {
  if (ll128Lines) return collective == Collective::Reduce ? kLl128ReduceWireBytes : kLl128WireBytes;
  return collective == Collective::Broadcast ? kLlRootWireBytes : kLlWireBytes;
}

// The largest message whose lines (lineWireBytes) keep each rank's links within `wireBytes`.
std::size_t llWireLimit(int nranks, std::size_t llMaxBytes, std::size_t wireBytes, bool ll128Lines) {
  const auto peers = static_cast<std::size_t>(std::max(1, nranks - 1));
  const std::size_t limit = ll128Lines
                                ? wireBytes / peers / kernels::kCollLl128LineBytes * kernels::kCollLl128LinePayload
                                : wireBytes / (2 * peers);
  return std::min(llMaxBytes, limit);
}

// All-reduce and reduce: every rank's whole message is an operand (reduce-scatter reduces blocks).
bool reducesWholeMessages(Collective collective) {
  return collective == Collective::AllReduce || collective == Collective::Reduce;
}

LlRule llRule(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh, Protocol protocol,
              std::size_t llMaxBytes, bool ll128Lines) {
  if (bytes > llMaxBytes) return {false, ""};
  if (protocol == Protocol::Ll || protocol == Protocol::Ll128) {
    return {true, std::string("LL protocol (forced by PEERLINK_PROTO=") + protocolName(protocol) + ")"};
  }
  if (protocol == Protocol::Simple) return {false, "PEERLINK_PROTO=SIMPLE"};
  std::size_t limit = llMaxBytes;
  if (nvlinkMesh) {
    limit = llWireLimit(nranks, llMaxBytes, lineBudget(collective, ll128Lines), ll128Lines);
  } else if (!reducesWholeMessages(collective)) {
    limit = kLlCopyMaxPcie;  // off a mesh all-reduce and reduce take LL wherever one-shot's own limit allows
  }
  if (bytes > limit) return {false, ""};
  return {true, "LL protocol (<= " + formatBytes(limit) + " per message: one flag wait, no barrier)"};
}

// A reduction past the one-shot size limit on an NVLink mesh still runs LL one-shot while its lines fit
// kLlWireBytes (2 ranks: up to 512 KiB; 2 GPUs, 512 KiB: 7.9 us LL, 8.4 two-shot, round 25).
bool llInsteadOfTwoShot(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh,
                        const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes, bool ll128Lines) {
  return reducesWholeMessages(collective) && algorithm.algorithm == Algorithm::TwoShot && !algorithm.forced &&
         nvlinkMesh && protocol != Protocol::Simple &&
         bytes <= llWireLimit(nranks, llMaxBytes, lineBudget(collective, ll128Lines), ll128Lines);
}

std::string joined(const std::string& reason, const std::string& more) {
  return more.empty() ? reason : reason + "; " + more;
}

// Whether a send/recv group whose ranks send at most `bytes` each runs in LL lines, and why. Off an NVLink
// mesh only as far as the copy collectives take LL there (the doubled bytes share PCIe links; unmeasured).
LlRule p2pLlRule(std::size_t bytes, Protocol protocol, bool nvlinkMesh) {
  if (protocol == Protocol::Simple || bytes > kernels::kCollP2pLlMaxBytes) return {false, ""};
  if (protocol == Protocol::Ll || protocol == Protocol::Ll128) {
    return {true, std::string("LL lines (forced by PEERLINK_PROTO=") + protocolName(protocol) + ")"};
  }
  const std::size_t limit = nvlinkMesh ? kernels::kCollP2pLlMaxBytes : kLlCopyMaxPcie;
  if (bytes > limit) return {false, ""};
  return {true, "LL lines (a rank sends <= " + formatBytes(limit) + ": one flag wait, no barrier)"};
}

}  // namespace

bool isNvlinkMesh(const Topology& topology, const std::vector<int>& devices) {
  return fabricOf(topology, devices).nvlinkMesh;
}

namespace {

// The kernel before the push choice.
KernelChoice readingKernel(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                           const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes,
                           bool ll128Lines) {
  const std::string& why = algorithm.reason;
  const bool oneShot = algorithm.algorithm == Algorithm::OneShot;
  const LlRule ll = llRule(collective, bytes, nranks, nvlinkMesh, protocol, llMaxBytes, ll128Lines);
  if (llInsteadOfTwoShot(collective, bytes, nranks, nvlinkMesh, algorithm, protocol, llMaxBytes, ll128Lines)) {
    return {Algorithm::OneShot, Kernel::Ll,
            why + "; but LL one-shot puts " + formatBytes(lineWireBytes(bytes, nranks, ll128Lines)) +
                " <= " + formatBytes(lineBudget(collective, ll128Lines)) +
                (ll128Lines ? " of LL128 lines" : " of lines") + " on a rank's links: one step, no barrier"};
  }
  switch (collective) {
    case Collective::AllReduce:
      if (oneShot) {
        if (ll.use) return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why)};
        if (!inPlace) return {Algorithm::OneShot, Kernel::DirectOneShot, joined(why, "direct reads")};
        return {Algorithm::TwoShot, Kernel::TwoShot,
                why + "; but one-shot in place without LL would overwrite inputs peers still read: two-shot"};
      }
      if (algorithm.algorithm == Algorithm::Ring) {
        // Chosen (off a mesh, past one-shot's limit) it carries the message; forced, small messages stay LL.
        if (algorithm.forced && ll.use) return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why)};
        return {Algorithm::Ring, Kernel::RingAllReduce,
                why +
                    "; n chains side by side: each rank's segment reduced along the ranks into it, then passed on "
                    "from it (stores only)"};
      }
      if (bytes >= kSplitTwoShotFrom && nvlinkMesh) {
        return {Algorithm::TwoShot, Kernel::SplitTwoShot, why + splitTwoShotClause()};
      }
      return {Algorithm::TwoShot, Kernel::TwoShot, why};
    case Collective::Reduce:
      if (algorithm.algorithm == Algorithm::TwoShot) {
        if (reduceTwoShotSharesRoot(bytes, nranks)) {
          return {Algorithm::TwoShot, Kernel::TwoShot, why + "; each rank reduces its shard into the root's output"};
        }
        return {Algorithm::TwoShot, Kernel::TwoShot,
                why + "; >= " + formatBytes(kReduceRootShardBelow) +
                    ": each non-root rank reduces its shard of every input into the root's output" +
                    gridCapNote(Collective::Reduce, bytes, nranks) + ", the root only lends its input"};
      }
      if (ll.use) return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why + ", output on the root only")};
      if (oneShot) return {Algorithm::OneShot, Kernel::DirectOneShot, why + "; the root reads every rank"};
      return {Algorithm::Ring, Kernel::RingReduce,
              why +
                  "; each rank combines every chunk with its input and stores it into the next rank's stage, the root "
                  "into its output (stores only, each link carries the data once)"};
    case Collective::ReduceScatter:
      if (ll.use) return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why)};
      if (algorithm.algorithm == Algorithm::Ring) {
        return {Algorithm::Ring, Kernel::RingReduceScatter,
                why + "; n chains side by side: block j reduced along the ranks into rank j (stores only)"};
      }
      return {Algorithm::OneShot, Kernel::ReduceScatter, why};
    case Collective::Broadcast:
      if (ll.use) {
        return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why + ", the root stores to every rank")};
      }
      if (algorithm.algorithm == Algorithm::Ring) {
        return {Algorithm::Ring, Kernel::RingBroadcast,
                why +
                    "; each rank stores every chunk into the next rank's output as it arrives (stores only, "
                    "each link carries the data once)"};
      }
      if (algorithm.algorithm == Algorithm::TwoShot && nranks > 2) {
        return {Algorithm::TwoShot, Kernel::Copy,
                why +
                    "; each non-root rank pulls 1/(n-1) of the root's buffer once and stores it to every non-root "
                    "rank" +
                    gridCapNote(Collective::Broadcast, bytes, nranks)};
      }
      return {Algorithm::OneShot, Kernel::Copy, why + "; every rank reads the root's buffer"};
    case Collective::AllGather:
    case Collective::AllToAll:
      if (ll.use) return {Algorithm::OneShot, Kernel::Ll, joined(why, ll.why)};
      return {Algorithm::OneShot, Kernel::Copy,
              algorithm.algorithm == Algorithm::Ring ? why + "; ring is not built on GPUs yet: direct" : why};
    case Collective::SendRecv:
      if (const LlRule lines = p2pLlRule(bytes, protocol, nvlinkMesh); lines.use) {
        return {Algorithm::OneShot, Kernel::Ll, joined(why, lines.why)};
      }
      break;
  }
  return {Algorithm::OneShot, Kernel::Copy, why};
}

}  // namespace

KernelChoice chooseKernel(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                          const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes, PushMode push,
                          bool ll128Lines, CopyEngineMode copyEngine) {
  KernelChoice choice =
      readingKernel(collective, bytes, inPlace, nranks, nvlinkMesh, algorithm, protocol, llMaxBytes, ll128Lines);
  // Reduce's two-shot stores into the root only: it stays a direct read.
  // An explicit PEERLINK_COLL_CE=1 goes before AUTO's push (the copy-engine two-shot has copies to move).
  const PushMode pushing = push == PushMode::Auto && copyEngine == CopyEngineMode::On ? PushMode::Pull : push;
  if (collective == Collective::AllReduce || collective == Collective::ReduceScatter) {
    // The push replaces the kernels, so its reason extends the algorithm's, not the split kernels' clause.
    std::string reading = choice.reason;
    const std::string split = splitTwoShotClause();
    if (choice.kernel == Kernel::SplitTwoShot && reading.size() >= split.size() &&
        reading.compare(reading.size() - split.size(), split.size(), split) == 0) {
      reading.resize(reading.size() - split.size());
    }
    if (auto pushed =
            pushInstead(collective, choice.kernel, bytes, nranks, nvlinkMesh, algorithm.forced, pushing, reading)) {
      return *pushed;
    }
  }
  if (auto engine = copyEngineInstead(collective, bytes, nranks, nvlinkMesh, choice, copyEngine)) return *engine;
  return choice;
}

bool ll128Capable(const Topology& topology, const std::vector<int>& devices) {
  if (!isNvlinkMesh(topology, devices)) return false;
  for (int device : devices) {
    const int index = gpuIndexOf(topology, device);
    if (index < 0 || topology.gpus[static_cast<std::size_t>(index)].ccMajor < 9) return false;
  }
  return true;
}

KernelChoice withLineFormat(KernelChoice choice, Collective collective, std::size_t bytes, int nranks,
                            Protocol protocol, bool capable) {
  if (choice.kernel != Kernel::Ll || protocol == Protocol::Ll || protocol == Protocol::Simple) return choice;
  if (collective == Collective::SendRecv) return choice;  // its lines are LL's (coll_p2p_ll.cu)
  if (!capable) {
    if (protocol == Protocol::Ll128) {
      choice.reason += "; LL lines: LL128 needs NVLink between every pair and compute capability 9.0+";
    }
    return choice;
  }
  if (protocol == Protocol::Ll128) {
    choice.kernel = Kernel::Ll128;
    choice.reason += "; in LL128 lines (forced by PEERLINK_PROTO=LL128)";
  } else if (reducesWholeMessages(collective)) {
    choice.kernel = Kernel::Ll128;
    choice.reason += "; in LL128 lines (a reduction of whole messages: LL128's as fast as LL's at one line)";
  } else if (const std::size_t llLines = lineWireBytes(bytes, nranks, false); llLines >= kLl128FromWireBytes) {
    choice.kernel = Kernel::Ll128;
    choice.reason += "; in LL128 lines (LL's would put " + formatBytes(llLines) +
                     " >= " + formatBytes(kLl128FromWireBytes) +
                     " on a rank's links; LL128 carries 120 payload bytes per 128)";
  }
  return choice;
}

bool reduceTwoShotSharesRoot(std::size_t bytes, int nranks) {
  return nranks <= 1 || bytes < kReduceRootShardBelow;
}

int rootedTwoShotBlocks(Collective collective, std::size_t bytes, int nranks) {
  if (nranks < 3 || bytes < kRootedFewBlocksFrom) return 0;  // one non-root rank does not crowd the root
  if (collective == Collective::Broadcast) return kRootedTwoShotBlocks;
  if (collective == Collective::Reduce && !reduceTwoShotSharesRoot(bytes, nranks)) return kRootedTwoShotBlocks;
  return 0;
}

bool storesIntoPeers(Collective collective, const KernelChoice& choice) {
  switch (choice.kernel) {
    case Kernel::DirectOneShot:
    case Kernel::ReduceScatter: return false;
    case Kernel::Copy:
      // The receivers of send/recv and of the direct broadcast pull; all-gather, all-to-all and the
      // two-shot broadcast push.
      if (collective == Collective::SendRecv) return false;
      return collective != Collective::Broadcast || choice.algorithm == Algorithm::TwoShot;
    case Kernel::Ll:
    case Kernel::Ll128:
    case Kernel::TwoShot:
    case Kernel::SplitTwoShot:  // its all-gather kernel (its reduce-scatter kernel only loads)
    case Kernel::PushReduce:
    case Kernel::RingBroadcast:
    case Kernel::RingReduce:
    case Kernel::RingAllReduce:
    case Kernel::RingReduceScatter:
    case Kernel::CeCopy:
    case Kernel::CeTwoShot:
    case Kernel::CeRingAllReduce: return true;
  }
  return true;
}

std::vector<Algorithm> algorithmsOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::ReduceScatter:
    case Collective::AllGather: return {Algorithm::OneShot, Algorithm::Ring};
    case Collective::Broadcast: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::Reduce: return {Algorithm::TwoShot, Algorithm::Ring, Algorithm::OneShot};
    case Collective::AllToAll:
    case Collective::SendRecv: return {Algorithm::OneShot};
  }
  return {Algorithm::OneShot};
}

AlgorithmChoice chooseAlgorithm(Collective collective, std::size_t bytesPerRank, const Topology& topology,
                                const std::vector<int>& devices, Algorithm forced) {
  const std::vector<Algorithm> available = algorithmsOf(collective);
  if (forced != Algorithm::Auto && std::find(available.begin(), available.end(), forced) != available.end()) {
    return {forced, std::string("forced by PEERLINK_ALGO=") + algorithmName(forced), true};
  }
  const std::string ignored = forced == Algorithm::Auto
                                  ? std::string()
                                  : std::string("PEERLINK_ALGO=") + algorithmName(forced) + " is not an algorithm of " +
                                        collectiveName(collective) + "; ";
  const int n = static_cast<int>(devices.size());
  AlgorithmChoice choice;
  if (available.size() == 1) {
    choice = {available.front(), "the collective's only algorithm"};
  } else if (n <= 1) {
    choice = {Algorithm::OneShot, "1 rank: a local copy"};
  } else {
    switch (collective) {
      case Collective::AllReduce: choice = allReduceRule(bytesPerRank, n, fabricOf(topology, devices)); break;
      case Collective::ReduceScatter: choice = reduceScatterRule(bytesPerRank, n, fabricOf(topology, devices)); break;
      case Collective::AllGather: choice = scatterGatherRule(bytesPerRank, fabricOf(topology, devices)); break;
      case Collective::Broadcast:
        choice = rootedRingRule(bytesPerRank, n, fabricOf(topology, devices), kRingBroadcastFrom);
        break;
      case Collective::Reduce:
        choice = rootedRingRule(bytesPerRank, n, fabricOf(topology, devices), kRingReduceFrom);
        break;
      case Collective::AllToAll:
      case Collective::SendRecv: choice = {available.front(), "the collective's only algorithm"}; break;
    }
  }
  choice.reason = ignored + choice.reason;
  return choice;
}

}  // namespace peerlink::coll
