// The host ring's blocks run on the host (kernels/host_ring.cuh), for test_coll_host_ring.cc: every rank's ring area
// and blocks' states over a sequence of calls, each block stepped exactly as the kernel's loops run it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coll/partition.hpp"
#include "kernels/host_ring.cuh"

namespace peerlink::coll::hostring {

using kernels::HostRingAction;
using kernels::HostRingArgs;
using kernels::kHostRingMaxBlocks;
using kernels::kHostRingSlots;

using Value = std::int64_t;  // sums of distinct values: exact

// A rank's ring area: per block its ready and free words and its region of kHostRingRegionBytes, as granules of
// kGranuleBytes (every slot size the tests use is a multiple), each stamped with the call and the fill (1, 2, ...
// within the call) that last stored it and whether the next rank has read that fill; a slot of any size covers
// the granules its bytes do, so slots of different sizes in consecutive calls overlap as in the kernel.
constexpr std::size_t kGranuleBytes = 1024;

struct Granule {
  unsigned long long call = ~0ull;
  unsigned long long fill = 0;
  bool read = true;
};

struct Area {
  std::vector<unsigned long long> ready;                  // [block]
  std::vector<unsigned long long> free;                   // [block]
  std::vector<std::vector<Granule>> granules;             // [block][granule of the region]
  std::vector<std::vector<std::vector<Value>>> slotData;  // [block][slot]: the values of its latest fill
};

// One block of one rank in its current call, as the kernel's loops run it.
struct BlockRun {
  kernels::HostRingBlockState state;  // as the call found it
  unsigned long long call = 0;
  unsigned long long occupant[kHostRingSlots] = {};  // what each slot must have had emptied before a fill
  std::size_t slices = 0;
  std::size_t slice = 0;
  int action = 0;
  unsigned long long filled = 0;  // slots of the call it filled and emptied
  unsigned long long emptied = 0;
  unsigned long long readySeen = 0;
  unsigned long long freeSeen = 0;
  std::vector<ElementRange> parts;
  bool running = false;
  bool stopped = false;
};

struct RankRun {
  HostRingArgs args;
  std::vector<Value>* input = nullptr;
  std::vector<Value>* output = nullptr;
  std::vector<BlockRun> blocks;
};

// A call a rank starts once its current call has ended on every block (its stream's order).
struct QueuedCall {
  HostRingArgs args;
  std::vector<Value>* input = nullptr;
  std::vector<Value>* output = nullptr;
};

// Every rank's ring area and blocks' states, over a sequence of calls, and the call each rank runs now. step() runs
// a block as far as its waits let it, exactly as the kernel: the ready words through hostRingReadyNeed, the free
// words through each slot's occupant (hostRingFirstFreeNeed at the call's start), fills and receives at the block's
// places going round the slots. It fails a test where a block would take bytes of another call or fill, or
// overwrite a fill the next rank still needs.
class RingWorld {
 public:
  explicit RingWorld(int n)
      : areas_(static_cast<std::size_t>(n)),
        states_(static_cast<std::size_t>(n)),
        runs_(static_cast<std::size_t>(n)),
        queues_(static_cast<std::size_t>(n)) {
    for (int r = 0; r < n; ++r) {
      Area& area = areas_[static_cast<std::size_t>(r)];
      area.ready.assign(kHostRingMaxBlocks, 0);
      area.free.assign(kHostRingMaxBlocks, 0);
      area.granules.assign(kHostRingMaxBlocks, std::vector<Granule>(kernels::kHostRingRegionBytes / kGranuleBytes));
      area.slotData.assign(kHostRingMaxBlocks, std::vector<std::vector<Value>>(kHostRingSlots));
      states_[static_cast<std::size_t>(r)].assign(kHostRingMaxBlocks, kernels::HostRingBlockState{});
    }
  }

  int size() const { return static_cast<int>(areas_.size()); }

  // Rank r starts a call, its blocks as their last calls left them.
  void start(int r, const HostRingArgs& args, std::vector<Value>* input, std::vector<Value>* output) {
    RankRun& run = runs_[static_cast<std::size_t>(r)];
    run.args = args;
    run.input = input;
    run.output = output;
    run.blocks.assign(static_cast<std::size_t>(args.blocks), BlockRun{});
    const std::size_t sliceElements = args.slotBytes / sizeof(Value);
    for (int b = 0; b < args.blocks; ++b) {
      BlockRun& block = run.blocks[static_cast<std::size_t>(b)];
      block.state = states_[static_cast<std::size_t>(r)][static_cast<std::size_t>(b)];
      block.call = block.state.calls;
      for (int slot = 0; slot < kHostRingSlots; ++slot) {
        block.occupant[slot] = kernels::hostRingFirstFreeNeed(block.state, args.slotBytes, slot);
      }
      for (int c = 0; c < args.nranks; ++c) {
        block.parts.push_back(partitionRange(args.chunkCount[c], args.blocks, b, args.alignElements));
        block.slices = std::max(block.slices, (block.parts.back().count + sliceElements - 1) / sliceElements);
      }
      block.action = kernels::hostRingFirstAction(args.collective, args.nranks);
      block.running = true;
    }
  }

  // Rank r runs this call after those queued before it (and the one it runs now).
  void enqueue(int r, const HostRingArgs& args, std::vector<Value>* input, std::vector<Value>* output) {
    queues_[static_cast<std::size_t>(r)].push_back({args, input, output});
  }

  // Runs every started block as far as it goes until none moves: round-robin, each block as far as its waits let
  // it, or, with a seed, rounds in which each block in a shuffled order takes one action or, by chance, none (so
  // some run ahead of their neighbours for a while). A rank whose blocks have all ended starts its next queued call,
  // while its neighbours may still be in the one before.
  void sweep(unsigned seed = 0) {
    std::mt19937 random(seed);
    for (bool progress = true, everyBlock = seed == 0; progress || !everyBlock;) {
      if (!progress) everyBlock = true;  // a round of chance moved nothing: try every block before giving up
      progress = false;
      std::vector<std::pair<int, int>> blocks;
      for (int r = 0; r < size(); ++r) {
        std::deque<QueuedCall>& queue = queues_[static_cast<std::size_t>(r)];
        if (!running(r) && !queue.empty()) {
          start(r, queue.front().args, queue.front().input, queue.front().output);
          queue.pop_front();
          progress = true;
        }
        for (std::size_t b = 0; b < runs_[static_cast<std::size_t>(r)].blocks.size(); ++b) {
          blocks.emplace_back(r, static_cast<int>(b));
        }
      }
      if (seed != 0) std::shuffle(blocks.begin(), blocks.end(), random);
      for (const auto& [r, b] : blocks) {
        if (seed == 0) {
          while (step(r, b)) progress = true;
        } else if (everyBlock || random() % 3 == 0) {
          progress = step(r, b) || progress;
        }
      }
      if (seed != 0 && progress) everyBlock = false;
    }
  }

  // Rank r's blocks still running give up at their deadline, as the kernel's: each ends its call.
  void stopWaiting(int r) {
    RankRun& run = runs_[static_cast<std::size_t>(r)];
    for (std::size_t b = 0; b < run.blocks.size(); ++b) {
      if (!run.blocks[b].running) continue;
      run.blocks[b].stopped = true;
      end(r, static_cast<int>(b));
    }
  }

  bool running(int r) const {
    const auto& blocks = runs_[static_cast<std::size_t>(r)].blocks;
    return std::any_of(blocks.begin(), blocks.end(), [](const BlockRun& block) { return block.running; });
  }

  // "" when every block of every rank that started has ended its call and no call waits in a queue, naming a block
  // still running or a rank's queue otherwise.
  std::string stillRunning() const {
    for (int r = 0; r < size(); ++r) {
      if (!queues_[static_cast<std::size_t>(r)].empty()) {
        return "stalled: rank " + std::to_string(r) + " has " +
               std::to_string(queues_[static_cast<std::size_t>(r)].size()) + " calls queued";
      }
      const RankRun& run = runs_[static_cast<std::size_t>(r)];
      for (std::size_t b = 0; b < run.blocks.size(); ++b) {
        if (run.blocks[b].running) {
          return "stalled: rank " + std::to_string(r) + " block " + std::to_string(b) + " at slice " +
                 std::to_string(run.blocks[b].slice);
        }
      }
    }
    return "";
  }

  bool anyStopped(int r) const {
    const auto& blocks = runs_[static_cast<std::size_t>(r)].blocks;
    return std::any_of(blocks.begin(), blocks.end(), [](const BlockRun& block) { return block.stopped; });
  }

 private:
  // The end of a block's call, run through or stopped: done with the previous rank's slots; its state as the kernel
  // stores it.
  void end(int r, int b) {
    RankRun& run = runs_[static_cast<std::size_t>(r)];
    BlockRun& block = run.blocks[static_cast<std::size_t>(b)];
    areas_[static_cast<std::size_t>(run.args.prev)].free[static_cast<std::size_t>(b)] =
        kernels::hostRingWord(block.call + 1, 0);
    const kernels::HostRingSlots perSlice =
        kernels::hostRingSlotsPerSlice(run.args.collective, run.args.nranks, run.args.position, run.args.rootPosition);
    kernels::HostRingBlockState& state = states_[static_cast<std::size_t>(r)][static_cast<std::size_t>(b)];
    state.calls = block.call + 1;
    state.slotBytes = run.args.slotBytes;
    state.stopped = block.stopped ? 1 : 0;
    state.sent = block.state.sent + block.slices * static_cast<unsigned long long>(perSlice.sends);
    state.received = block.state.received + block.slices * static_cast<unsigned long long>(perSlice.receives);
    for (int slot = 0; slot < kHostRingSlots; ++slot) state.occupant[slot] = block.occupant[slot];
    block.running = false;
  }

  // One action of block b of rank r, if its waits let it; false where it waits or has ended.
  bool step(int r, int b) {
    RankRun& run = runs_[static_cast<std::size_t>(r)];
    BlockRun& block = run.blocks[static_cast<std::size_t>(b)];
    if (!block.running) return false;
    const int n = run.args.nranks;
    const auto bi = static_cast<std::size_t>(b);
    if (block.slice >= block.slices) {
      end(r, b);
      return true;
    }
    const HostRingAction action =
        kernels::hostRingAction(run.args.collective, n, run.args.position, run.args.rootPosition, block.action);
    Area& own = areas_[static_cast<std::size_t>(r)];
    Area& prev = areas_[static_cast<std::size_t>(run.args.prev)];
    if (action.receives) {
      const unsigned long long need = kernels::hostRingReadyNeed(block.call, block.emptied);
      if (block.readySeen < need) {
        if (prev.ready[bi] < need) return false;
        block.readySeen = prev.ready[bi];
      }
    }
    if (action.sends) {
      const unsigned long long need = block.occupant[(block.state.sent + block.filled) % kHostRingSlots];
      if (block.freeSeen < need) {
        if (own.free[bi] < need) return false;
        block.freeSeen = own.free[bi];
      }
    }
    const std::size_t sliceElements = run.args.slotBytes / sizeof(Value);
    const ElementRange piece =
        slotPartOf(block.parts[static_cast<std::size_t>(action.chunk)], sliceElements, block.slice);
    std::vector<Value> got;
    const std::size_t slotGranules = run.args.slotBytes / kGranuleBytes;
    if (action.receives) {
      const std::size_t slot = (block.state.received + block.emptied) % kHostRingSlots;
      for (std::size_t g = slot * slotGranules; g < (slot + 1) * slotGranules; ++g) {
        Granule& granule = prev.granules[bi][g];
        EXPECT_TRUE(granule.call == block.call && granule.fill == block.emptied + 1)
            << "rank " << r << " block " << b << " of call " << block.call << " took fill " << block.emptied + 1
            << " from bytes holding call " << granule.call << "'s fill " << granule.fill;
        granule.read = true;
      }
      got = prev.slotData[bi][slot];
      EXPECT_EQ(got.size(), piece.count) << "rank " << r << " block " << b;
      got.resize(piece.count);
    }
    std::vector<Value> value(piece.count);
    for (std::size_t i = 0; i < piece.count; ++i) {
      // The kernel reads the rank's input only where it sends it or reduces with it (a broadcast's other ranks
      // have none).
      const bool reads = !action.receives || action.reduces;
      const Value mine = reads ? run.input->at(run.args.inBegin[action.chunk] + piece.begin + i) : 0;
      value[i] = !action.receives ? mine : (action.reduces ? got[i] + mine : got[i]);
    }
    if (action.stores) {
      for (std::size_t i = 0; i < piece.count; ++i) {
        run.output->at(run.args.outBegin[action.chunk] + piece.begin + i) = value[i];
      }
    }
    if (action.sends) {
      const std::size_t slot = (block.state.sent + block.filled) % kHostRingSlots;
      // A fill not read yet may be overwritten only once the next rank has ended the call it belongs to.
      const unsigned long long nextCall = states_[static_cast<std::size_t>(run.args.next)][bi].calls;
      for (std::size_t g = slot * slotGranules; g < (slot + 1) * slotGranules; ++g) {
        Granule& granule = own.granules[bi][g];
        EXPECT_TRUE(granule.read || granule.call < nextCall)
            << "rank " << r << " block " << b << " overwrote call " << granule.call << "'s fill " << granule.fill
            << " before rank " << run.args.next << " read it";
        granule = Granule{block.call, block.filled + 1, false};
      }
      own.slotData[bi][slot] = value;
      block.occupant[slot] = kernels::hostRingWord(block.call, block.filled + 1);
      own.ready[bi] = kernels::hostRingWord(block.call, ++block.filled);
    }
    if (action.receives) prev.free[bi] = kernels::hostRingWord(block.call, ++block.emptied);
    if (++block.action > kernels::hostRingLastAction(run.args.collective, n)) {
      block.action = kernels::hostRingFirstAction(run.args.collective, n);
      ++block.slice;
    }
    return true;
  }

  std::vector<Area> areas_;                                       // [rank]
  std::vector<std::vector<kernels::HostRingBlockState>> states_;  // [rank][block]: as its last call left it
  std::vector<RankRun> runs_;                                     // [rank]: its current call
  std::vector<std::deque<QueuedCall>> queues_;                    // [rank]: the calls it runs next
};

}  // namespace peerlink::coll::hostring
