// The host ring's schedule and protocol (kernels/host_ring.cuh) and its calls (coll/host_ring_call.hpp): every
// rank's blocks run on the host here exactly as the kernel's loops run them -- slice by slice, action by action,
// waiting on the ready and free words through the header's functions, each slot stamped with the call and fill that
// stored it -- interleaved as a round-robin sweep gives, for 2-8 ranks, rings in and out of rank order, every
// collective the ring serves (broadcast and reduce from every root), counts from 1 element to several slices a block,
// in place and out of place, against the closed form; calls of different shapes one after another on the same areas;
// and a rank late past the deadline, after which the next calls must run through. A schedule that would stall fails
// the sweep; a block that takes a slot of another call or fill, or overwrites a fill still needed, fails the test.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coll/comm_launch_plan.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/partition.hpp"
#include "kernels/host_ring.cuh"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {
namespace {

using kernels::HostRingAction;
using kernels::HostRingArgs;
using kernels::kHostRingMaxBlocks;
using kernels::kHostRingSlots;

using Value = std::int64_t;  // sums of distinct values: exact
// A small shape for the exhaustive cases: the schedule is the same at any shape, and small slots reach several
// slices a block with small counts.
const HostRingShape kSmallShape{4, 1024};

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

Value sendValue(int rank, std::size_t i) {
  return static_cast<Value>(rank + 1) * 1000003 + static_cast<Value>(i);
}

// One call of every rank: its buffers (inputs[r], outputs[r]; in place the input) and how it was made.
struct CallCase {
  Collective collective = Collective::AllReduce;
  std::size_t count = 0;
  int root = 0;
  bool inPlace = false;
  HostRingShape shape;
  std::vector<std::vector<Value>> inputs;
  std::vector<std::vector<Value>> outputs;

  std::string name() const {
    return std::string(collectiveName(collective)) + ", count " + std::to_string(count) + ", root " +
           std::to_string(root) + (inPlace ? ", in place" : "") + ", " + std::to_string(shape.blocks) + " blocks of " +
           std::to_string(shape.slotBytes) + "-byte slots";
  }
};

// A call of n ranks, rank r's input sendValue(r, i) (a broadcast's other ranks have none out of place).
CallCase makeCall(Collective collective, std::size_t count, int n, int root, bool inPlace, const HostRingShape& shape) {
  CallCase call{collective, count, root, inPlace, shape, {}, {}};
  const std::size_t inCount = collective == Collective::ReduceScatter ? count * static_cast<std::size_t>(n) : count;
  const std::size_t outCount = collective == Collective::AllGather ? count * static_cast<std::size_t>(n) : count;
  call.inputs.resize(static_cast<std::size_t>(n));
  call.outputs.assign(static_cast<std::size_t>(n), std::vector<Value>(outCount, -1));
  for (int r = 0; r < n; ++r) {
    // A broadcast's other ranks pass no input: the run reading one would fail (vector::at), out of place.
    if (collective == Collective::Broadcast && r != root && !inPlace) continue;
    call.inputs[static_cast<std::size_t>(r)].resize(inCount);
    for (std::size_t i = 0; i < inCount; ++i) call.inputs[static_cast<std::size_t>(r)][i] = sendValue(r, i);
  }
  return call;
}

// Queues the call on every rank of `world` around the ring `order`. In place the ring's buffers are one (the
// all-reduce's, broadcast's, reduce's; the others' in-place forms are offsets into the output, which
// hostRingCallArgs does not see).
void enqueueCall(RingWorld& world, CallCase& call, const std::vector<int>& order) {
  for (int r = 0; r < world.size(); ++r) {
    world.enqueue(
        r, hostRingCallArgs(call.collective, call.count, DataType::I64, order, r, call.root, call.shape),
        &call.inputs[static_cast<std::size_t>(r)],
        call.inPlace ? &call.inputs[static_cast<std::size_t>(r)] : &call.outputs[static_cast<std::size_t>(r)]);
  }
}

// The call's outputs against the closed form.
void expectClosedForm(const CallCase& call) {
  SCOPED_TRACE(call.name());
  const int n = static_cast<int>(call.inputs.size());
  for (int r = 0; r < n; ++r) {
    if (call.collective == Collective::Reduce && r != call.root) continue;  // only the root's output is defined
    const std::vector<Value>& got =
        call.inPlace ? call.inputs[static_cast<std::size_t>(r)] : call.outputs[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < got.size(); ++i) {
      Value want = 0;
      switch (call.collective) {
        case Collective::AllReduce:
        case Collective::Reduce:
          for (int q = 0; q < n; ++q) want += sendValue(q, i);
          break;
        case Collective::ReduceScatter:
          for (int q = 0; q < n; ++q) want += sendValue(q, static_cast<std::size_t>(r) * call.count + i);
          break;
        case Collective::Broadcast: want = sendValue(call.root, i); break;
        default: want = sendValue(static_cast<int>(i / call.count), i % call.count); break;
      }
      ASSERT_EQ(got[i], want) << "rank " << r << " element " << i;
    }
  }
}

// Runs one call on `world` (every rank at once) and checks it against the closed form.
void checkCall(RingWorld& world, Collective collective, std::size_t count, const std::vector<int>& order, bool inPlace,
               int root, const HostRingShape& shape) {
  CallCase call = makeCall(collective, count, static_cast<int>(order.size()), root, inPlace, shape);
  SCOPED_TRACE(std::to_string(order.size()) + " ranks");
  enqueueCall(world, call, order);
  world.sweep();
  ASSERT_EQ(world.stillRunning(), "") << call.name();
  expectClosedForm(call);
}

// One call on a fresh world.
void checkCase(Collective collective, std::size_t count, const std::vector<int>& order, bool inPlace, int root = 0,
               const HostRingShape& shape = kSmallShape) {
  RingWorld world(static_cast<int>(order.size()));
  checkCall(world, collective, count, order, inPlace, root, shape);
}

// Elements of a call whose block parts span three slices and a bit of the shape's (of each rank's part, for the
// all-gather and reduce-scatter).
std::size_t severalSlices(const HostRingShape& shape) {
  return 3 * static_cast<std::size_t>(shape.blocks) * (shape.slotBytes / sizeof(Value)) + 5;
}

std::vector<int> scrambled(int n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin() + 1, order.end());  // 0, n-1, ..., 1
  if (n >= 4) std::swap(order[1], order[2]);
  return order;
}

TEST(HostRing, EveryCollectiveMatchesTheClosedForm) {
  const std::size_t several = severalSlices(kSmallShape);
  for (int n = 2; n <= 8; ++n) {
    std::vector<int> inOrder(static_cast<std::size_t>(n));
    std::iota(inOrder.begin(), inOrder.end(), 0);
    for (const std::vector<int>& order : {inOrder, scrambled(n)}) {
      for (Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather}) {
        for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1001}, several / 3, several}) {
          checkCase(collective, count, order, false);
          if (collective == Collective::AllReduce) checkCase(collective, count, order, true);
        }
      }
      // The chains from and to every root, in place and not.
      for (Collective collective : {Collective::Broadcast, Collective::Reduce}) {
        for (int root = 0; root < n; ++root) {
          for (std::size_t count : {std::size_t{1}, std::size_t{1001}, several}) {
            checkCase(collective, count, order, root % 2 == 1, root);
          }
        }
      }
    }
  }
}

TEST(HostRing, TheChosenShapesCarryEveryCollective) {
  const std::vector<int> order = scrambled(3);
  for (Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                                Collective::Broadcast, Collective::Reduce}) {
    const HostRingShape shape = hostRingShape(collective, std::nullopt);
    checkCase(collective, severalSlices(shape), order, false, 1, shape);
  }
}

// One world, calls one after another of every collective, root and shape: a fill waits for the next rank to have
// emptied what its slot held, from this call or an earlier one, or, after a change of slot size, for the next rank
// to be done with the call before; the blocks a smaller grid leaves out keep their states in step.
TEST(HostRing, CallsOfEveryShapeFollowEachOtherOnTheSameAreas) {
  for (int n : {2, 3, 5}) {
    for (unsigned seed : {0u, 1u, 2u, 3u}) {
      SCOPED_TRACE(std::to_string(n) + " ranks, seed " + std::to_string(seed));
      RingWorld world(n);
      const std::vector<int> order = scrambled(n);
      std::deque<CallCase> calls;  // every call queued on every rank at once: a rank runs ahead into the next
      int root = 0;
      for (const HostRingShape& shape : {HostRingShape{4, 1024}, HostRingShape{7, 2048}, HostRingShape{2, 1024},
                                         HostRingShape{kHostRingMaxBlocks, 1024}, HostRingShape{3, 4096}}) {
        for (Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::AllGather,
                                      Collective::Reduce, Collective::ReduceScatter}) {
          for (std::size_t count : {std::size_t{33}, severalSlices(shape)}) {
            calls.push_back(makeCall(collective, count, n, root, false, shape));
            enqueueCall(world, calls.back(), order);
            root = (root + 1) % n;
          }
        }
      }
      world.sweep(seed);
      ASSERT_EQ(world.stillRunning(), "");
      for (const CallCase& call : calls) expectClosedForm(call);
    }
  }
}

// A rank late past the deadline: the others' blocks give up waiting for it and end the call, and go on into the
// next call as far as they can while it comes and runs the late call; whatever still waits then gives up too. No
// block ever takes bytes of another call or fill, nor overwrites a fill still needed (checked inside the run), and
// the calls after run through on every rank -- as they do after a rank aborted at the start of the call (its blocks
// end before moving anything).
TEST(HostRing, AStalledRankLeavesTheNextCallsRunnable) {
  for (int n : {2, 3, 4}) {
    for (Collective collective : {Collective::AllReduce, Collective::Reduce, Collective::AllGather}) {
      for (bool abortedAtStart : {false, true}) {
        for (unsigned seed : {0u, 1u, 2u}) {
          SCOPED_TRACE(std::to_string(n) + " ranks, " + collectiveName(collective) +
                       (abortedAtStart ? ", the late rank aborted at the start" : ", the late rank late") + ", seed " +
                       std::to_string(seed));
          RingWorld world(n);
          const std::vector<int> order = scrambled(n);
          const int late = order.back();
          const std::size_t count = severalSlices(kSmallShape);
          CallCase stalled = makeCall(collective, count, n, 0, false, kSmallShape);
          CallCase following = makeCall(collective, count, n, 0, false, kSmallShape);
          const auto enqueueOn = [&](int r, CallCase& call) {
            world.enqueue(r,
                          hostRingCallArgs(call.collective, call.count, DataType::I64, order, r, call.root, call.shape),
                          &call.inputs[static_cast<std::size_t>(r)], &call.outputs[static_cast<std::size_t>(r)]);
          };
          for (int r = 0; r < n; ++r) {
            if (r != late) enqueueOn(r, stalled);
          }
          world.sweep(seed);
          for (int r = 0; r < n; ++r) {
            if (r != late) world.stopWaiting(r);
          }
          // Someone waited for the late rank in vain (the late rank itself may run through later: a chain's first
          // rank fills slots that the stopped ranks have let go).
          bool othersStopped = false;
          for (int r = 0; r < n; ++r) othersStopped = othersStopped || (r != late && world.anyStopped(r));
          EXPECT_TRUE(othersStopped);
          for (int r = 0; r < n; ++r) {
            if (r != late) enqueueOn(r, following);
          }
          world.sweep(seed);  // the others into the next call, as far as it goes without the late rank
          if (abortedAtStart) {
            world.start(late, hostRingCallArgs(stalled.collective, count, DataType::I64, order, late, 0, kSmallShape),
                        &stalled.inputs[static_cast<std::size_t>(late)],
                        &stalled.outputs[static_cast<std::size_t>(late)]);
            world.stopWaiting(late);
          } else {
            enqueueOn(late, stalled);
          }
          enqueueOn(late, following);
          // Everything that waits for a call another rank has left gives up, until nothing runs.
          for (int round = 0; round < 8 && !world.stillRunning().empty(); ++round) {
            world.sweep(seed);
            for (int r = 0; r < n; ++r) world.stopWaiting(r);
          }
          ASSERT_EQ(world.stillRunning(), "");
          for (int call = 0; call < 3; ++call) {
            checkCall(world, call == 1 ? Collective::Broadcast : collective, count, order, false, call % n,
                      kSmallShape);
            for (int r = 0; r < n; ++r) EXPECT_FALSE(world.anyStopped(r)) << "rank " << r << ", call " << call;
          }
        }
      }
    }
  }
}

TEST(HostRing, EveryActionMovesTheChunkTheNextRankExpects) {
  for (int n = 2; n <= 8; ++n) {
    for (int collective : {kernels::kHostRingAllReduce, kernels::kHostRingReduceScatter, kernels::kHostRingAllGather}) {
      const int first = kernels::hostRingFirstAction(collective, n);
      const int last = kernels::hostRingLastAction(collective, n);
      int sends = 0;
      int receives = 0;
      for (int p = 0; p < n; ++p) {
        for (int a = first; a <= last; ++a) {
          const HostRingAction action = kernels::hostRingAction(collective, n, p, 0, a);
          sends += action.sends ? 1 : 0;
          receives += action.receives ? 1 : 0;
          if (!action.sends) continue;
          // What position p sends at action a, position p + 1 receives at a + 1.
          const HostRingAction next = kernels::hostRingAction(collective, n, (p + 1) % n, 0, a + 1);
          EXPECT_TRUE(next.receives) << n << " ranks, position " << p << ", action " << a;
          EXPECT_EQ(next.chunk, action.chunk) << n << " ranks, position " << p << ", action " << a;
        }
        // The rank stores its own chunk finished (reductions) and every chunk (all-reduce, all-gather).
        const HostRingAction own = kernels::hostRingAction(collective, n, p, 0, n - 1);
        EXPECT_EQ(own.chunk, p);
        EXPECT_TRUE(own.stores);
        EXPECT_EQ(own.finishes, collective != kernels::kHostRingAllGather);
      }
      EXPECT_EQ(sends, receives);
      EXPECT_EQ(sends, n * (last - first));
    }
  }
}

TEST(HostRing, ChainsPassOneSliceAlongTheRingFromOrToTheRoot) {
  for (int n = 2; n <= 8; ++n) {
    for (int root = 0; root < n; ++root) {
      for (int collective : {kernels::kHostRingBroadcast, kernels::kHostRingReduce}) {
        int stores = 0;
        for (int p = 0; p < n; ++p) {
          const HostRingAction action = kernels::hostRingAction(collective, n, p, root, 0);
          const HostRingAction next = kernels::hostRingAction(collective, n, (p + 1) % n, root, 0);
          EXPECT_EQ(action.sends, next.receives) << n << " ranks, root " << root << ", position " << p;
          EXPECT_EQ(action.chunk, 0);
          stores += action.stores ? 1 : 0;
          // The broadcast starts at its root; the reduce ends there, finished.
          if (collective == kernels::kHostRingBroadcast) {
            EXPECT_EQ(action.receives, p != root);
          } else {
            EXPECT_EQ(action.finishes, p == root);
            EXPECT_EQ(action.sends, p != root);
          }
        }
        EXPECT_EQ(stores, collective == kernels::kHostRingBroadcast ? n : 1);
      }
    }
  }
}

TEST(HostRing, TakesTheCallsBetweenTheLinesAndItsLimit) {
  const std::size_t lines = kPlanLlMaxBytes / 4;  // f32 elements of the largest LL message
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, lines, DataType::F32, 2, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::AllReduce, lines + 1, DataType::F32, 2, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::AllReduce, (16u << 20) / 4, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, (16u << 20) / 4 + 1, DataType::F32, 2, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllReduce, lines + 1, DataType::F32, 2, 0));  // off
  // The all-gather and reduce-scatter count their whole buffer: 4 ranks of 4 MiB + 4 bytes pass 16 MiB.
  EXPECT_TRUE(runsAsHostRing(Collective::AllGather, (4u << 20) / 4, DataType::F32, 4, 16u << 20));
  EXPECT_FALSE(runsAsHostRing(Collective::AllGather, (4u << 20) / 4 + 1, DataType::F32, 4, 16u << 20));
  EXPECT_TRUE(runsAsHostRing(Collective::ReduceScatter, (4u << 20) / 4, DataType::F32, 4, 16u << 20));
  for (Collective chain : {Collective::Broadcast, Collective::Reduce}) {
    EXPECT_TRUE(runsAsHostRing(chain, (1u << 20) / 4, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    // A chain goes on to kHostRingChainFactor times the limit.
    EXPECT_TRUE(runsAsHostRing(chain, (128u << 20) / 4, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    EXPECT_FALSE(runsAsHostRing(chain, (128u << 20) / 4 + 1, DataType::F32, 4, 16u << 20)) << collectiveName(chain);
    EXPECT_FALSE(runsAsHostRing(chain, (1u << 20) / 4, DataType::F32, 4, 0)) << collectiveName(chain);
  }
  for (Collective other : {Collective::AllToAll, Collective::SendRecv}) {
    EXPECT_FALSE(runsAsHostRing(other, (1u << 20) / 4, DataType::F32, 2, 16u << 20)) << collectiveName(other);
  }
  EXPECT_EQ(hostRingCallBytes(Collective::AllGather, 10, DataType::F16, 4), 80u);
  EXPECT_EQ(hostRingLimitBytes(Collective::AllReduce, 1000), 1000u);
  EXPECT_EQ(hostRingLimitBytes(Collective::Broadcast, 1000), 1000u * kHostRingChainFactor);
  EXPECT_EQ(hostRingLimitBytes(Collective::SendRecv, 1000), 0u);
}

TEST(HostRing, ChunksFollowTheRingOrder) {
  const std::vector<int> order = {0, 2, 1, 3};
  const HostRingArgs args = hostRingCallArgs(Collective::ReduceScatter, 100, DataType::F32, order, 1, 0, kSmallShape);
  EXPECT_EQ(args.position, 2);
  EXPECT_EQ(args.prev, 2);
  EXPECT_EQ(args.next, 3);
  // Chunk c is the block of the rank at position c.
  EXPECT_EQ(args.inBegin[1], 200u);
  EXPECT_EQ(args.inBegin[2], 100u);
  EXPECT_EQ(args.outBegin[2], 0u);
  const HostRingArgs gather = hostRingCallArgs(Collective::AllGather, 100, DataType::F32, order, 3, 0, kSmallShape);
  EXPECT_EQ(gather.outBegin[1], 200u);
  EXPECT_EQ(gather.position, 3);
  EXPECT_EQ(gather.next, 0);
  const HostRingArgs reduce = hostRingCallArgs(Collective::AllReduce, 1001, DataType::F32, order, 0, 0, kSmallShape);
  std::size_t covered = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(reduce.inBegin[c], covered);
    EXPECT_EQ(reduce.inBegin[c] % 4, 0u);  // 16-byte boundaries
    covered += reduce.chunkCount[c];
  }
  EXPECT_EQ(covered, 1001u);
  const HostRingArgs broadcast = hostRingCallArgs(Collective::Broadcast, 1001, DataType::F32, order, 3, 1, kSmallShape);
  EXPECT_EQ(broadcast.rootPosition, 2);
  EXPECT_EQ(broadcast.chunkCount[0], 1001u);
  EXPECT_EQ(broadcast.chunkCount[1], 0u);
  EXPECT_EQ(broadcast.blocks, 4);
  EXPECT_EQ(broadcast.slotBytes, 1024u);
  EXPECT_THROW(hostRingCallArgs(Collective::AllReduce, 10, DataType::F32, {0}, 0, 0, kSmallShape), Error);
  EXPECT_THROW(hostRingCallArgs(Collective::AllToAll, 10, DataType::F32, order, 0, 0, kSmallShape), Error);
  EXPECT_THROW(hostRingCallArgs(Collective::Broadcast, 10, DataType::F32, order, 0, 7, kSmallShape),
               Error);  // no such root
}

TEST(HostRing, ShapesAreNamedBlocksBySlot) {
  const std::optional<HostRingShape> shape = hostRingShapeNamed("64x32K");
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->blocks, 64);
  EXPECT_EQ(shape->slotBytes, std::size_t{32} << 10);
  EXPECT_FALSE(hostRingShapeNamed("AUTO").has_value());
  for (const char* bad : {"", "64", "x32K", "64x", "64xK", "65x32K", "0x32K", "64x128K", "64x32", "ax32K"}) {
    EXPECT_THROW(hostRingShapeNamed(bad), Error) << bad;
  }
  // Every value PEERLINK_COLL_HOST_RING_SHAPE allows names a shape the ring areas hold.
  for (const std::string& name : paramSpec("PEERLINK_COLL_HOST_RING_SHAPE").allowed) {
    const std::optional<HostRingShape> named = hostRingShapeNamed(name);
    if (!named) continue;
    EXPECT_LE(named->blocks, kHostRingMaxBlocks) << name;
    EXPECT_LE(named->slotBytes * kHostRingSlots, kernels::kHostRingRegionBytes) << name;
    EXPECT_EQ(named->slotBytes % 16, 0u) << name;
  }
  // AUTO: the chains' larger shape, the rounds' smaller.
  EXPECT_EQ(hostRingShape(Collective::Broadcast, std::nullopt).blocks, 64);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt).blocks, 32);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, std::nullopt).slotBytes, std::size_t{64} << 10);
  EXPECT_EQ(hostRingShape(Collective::AllReduce, HostRingShape{8, 2048}).blocks, 8);
}

// The words: a later call's always above an earlier call's, whatever the slots.
TEST(HostRing, AWordOfALaterCallIsAboveEveryWordOfAnEarlierOne) {
  using kernels::hostRingFirstFreeNeed;
  using kernels::hostRingWord;
  EXPECT_GT(hostRingWord(1, 0), hostRingWord(0, 1000000));
  EXPECT_EQ(kernels::hostRingReadyNeed(5, 0), hostRingWord(5, 1));
  kernels::HostRingBlockState state;
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 2), 0u);  // the first call: nothing to wait for
  state.calls = 5;
  state.slotBytes = 1024;
  state.occupant[0] = hostRingWord(4, 5);
  state.occupant[1] = hostRingWord(2, 1);
  // A slot's occupant emptied, whichever call it came from ...
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 0), hostRingWord(4, 5));
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 1), hostRingWord(2, 1));
  // ... but after a call the block stopped in or whose slots were another size, the next rank done with it.
  EXPECT_EQ(hostRingFirstFreeNeed(state, 2048, 0), hostRingWord(5, 0));
  state.stopped = 1;
  EXPECT_EQ(hostRingFirstFreeNeed(state, 1024, 1), hostRingWord(5, 0));
}

}  // namespace
}  // namespace peerlink::coll
