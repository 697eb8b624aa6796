// Every size at which the collectives' kernel choice changes (collective_choice.hpp), in one table, each with
// the one line that says why. The measurements behind them, with the runs they came from, are in
// docs/collectives.md ("Thresholds"); a threshold moves only with a run that shows it should, and the choice's
// golden test (tests/cpu/test_coll_choice_golden.cc) shows the diff.
#pragma once

#include <cstddef>

#include "kernels/coll_kernels.cuh"

namespace peerlink::coll::threshold {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

// Algorithms (bytes per rank).
/// One-shot all-reduce up to here on NVLink: one step and one flag wait beat two-shot's extra step.
constexpr std::size_t kOneShotMaxNvlink = 256 * kKiB;
/// Off NVLink one-shot's (n-1)-fold reads share the PCIe switches' links, so bandwidth costs sooner.
constexpr std::size_t kOneShotMaxPcie = 64 * kKiB;
/// Direct broadcast/reduce up to here: past it the root's link carrying (n-1)x the data costs more than a step.
constexpr std::size_t kDirectRootMax = 256 * kKiB;
/// Ring broadcast from here on 3+ ranks of a mesh: below, the chain's n-1 rounds of fill lose to two-shot.
constexpr std::size_t kRingBroadcastFrom = 64 * kMiB;
/// Ring reduce from here on 3+ ranks of a mesh: its stores only beat two-shot's reads once its fill is paid.
constexpr std::size_t kRingReduceFrom = 16 * kMiB;
/// Ring all-reduce from here on 3+ ranks of a mesh: stores only, 2(n-1)/n of the data per link, beat split two-shot.
constexpr std::size_t kRingAllReduceFrom = 128 * kMiB;
/// Ring reduce-scatter from blocks of this size on 3+ ranks of a mesh: its stores beat the direct reads.
constexpr std::size_t kRingReduceScatterFrom = 32 * kMiB;

// LL and LL128 (bytes of lines one rank puts on its links: n-1 messages).
/// LL carries a message while a rank's LL lines stay within this: LL saves two barriers at twice the bytes.
constexpr std::size_t kLlWireBytes = 1024 * kKiB;
/// The broadcast's budget: it loads only the root's outgoing links.
constexpr std::size_t kLlRootWireBytes = 1536 * kKiB;
/// The same budget in LL128 lines, which carry 120 payload bytes per 128.
constexpr std::size_t kLl128WireBytes = 1792 * kKiB;
/// The reduce's LL128 budget: its ranks send to the root alone, and one-shot led up to the whole LL scratch.
constexpr std::size_t kLl128ReduceWireBytes = 3584 * kKiB;
/// LL128 lines in place of LL's once a rank's LL lines reach this (all-reduce and reduce: at every size).
constexpr std::size_t kLl128FromWireBytes = 32 * kKiB;
/// Off an NVLink mesh the copy collectives (and send/recv) take LL only up to this: doubled bytes share PCIe.
constexpr std::size_t kLlCopyMaxPcie = 64 * kKiB;
/// A send/recv group runs in LL lines while the most one rank sends fits a pair's slot: one flag wait, no barrier.
constexpr std::size_t kP2pLlMaxBytes = kernels::kCollP2pLlMaxBytes;

// Kernels of the two-shot reductions (bytes per rank).
/// Split two-shot from here on a mesh: a reduce-scatter and a pushing all-gather beat the fused loads and stores.
constexpr std::size_t kSplitTwoShotFrom = 64 * kMiB;
/// AUTO pushes all-reduces from here on 3+ ranks of a mesh while every shard fits a stage slot: stores only.
constexpr std::size_t kAutoPushFrom = 16 * kMiB;
/// Two-shot reduce: below this the root reduces a shard too; from it the n-1 others share the count.
constexpr std::size_t kReduceRootShardBelow = 4 * kMiB;
/// Rooted two-shot (broadcast; reduce without the root's shard) on few blocks from here: the root is the bound.
constexpr std::size_t kRootedFewBlocksFrom = 4 * kMiB;
/// Those kernels' blocks per rank: all n-1 non-root ranks work on the root at once, and fewer blocks moved more.
constexpr int kRootedTwoShotBlocks = 32;

// Copy engines (bytes one rank pushes to its peers).
/// All-gather and all-to-all copies on the copy engines from here: ~8 us a copy, but past SM stores' bandwidth.
constexpr std::size_t kCeCopyFromPushedBytes = 192 * kMiB;
/// An all-reduce's gather (after its ring reduces or reduce-scatter) on the copy engines from here.
constexpr std::size_t kCeGatherFromPushedBytes = 96 * kMiB;
/// A send/recv group's sends pushed by the copy engines from here instead of the receivers' kernels pulling.
constexpr std::size_t kCeSendFromPushedBytes = 64 * kMiB;

}  // namespace peerlink::coll::threshold
