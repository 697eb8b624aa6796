// The order of a staged call's operations (src/coll/staging_schedule.hpp), checked as a happens-before relation:
// every rank's schedule on its two streams (stream order, each wait after the latest record of its event), each
// chunk's kernel as its start and end on the caller's stream, and the kernels' accesses to the windows as the
// device code orders them (windowAccessOf). Every two accesses to the same bytes of a window or of the caller's
// buffers, one of them a write, must happen in the order the serial schedule gives them -- with the caller's work
// before the call and after it too -- and the relation must have no cycle (which would be a deadlock). The checker
// is shown to catch a missing wait, a missing fork, a kernel that lets peers touch a window outside its run, and
// chunks that overlap in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coll/staging_plan.hpp"
#include "coll/staging_schedule.hpp"
#include "peerlink/collective_choice.hpp"
#include "staging_capture_model.hpp"

namespace peerlink::coll {
namespace {

// How peers' accesses to a rank's window are ordered in the model: as windowAccessOf says, or (to show the checker
// fails) only within the accessing rank's own kernel.
enum class KernelModel { OwnOnly, WhileOwnerRuns, WhilePeerRuns };

// Which memory an access touches: rank r's window, or rank r's caller's memory (send and recv in one space, so
// buffers in place overlap).
struct Memory {
  int rank = 0;
  bool window = false;
  bool operator==(const Memory& o) const { return rank == o.rank && window == o.window; }
};

struct Access {
  int node = 0;
  Memory memory;
  std::size_t begin = 0;
  std::size_t end = 0;  // exclusive
  bool write = false;
  // The serial order of the access: (chunk, phase) with phase 0 copy in, 1 kernel, 2 copy out; before the call
  // -1, after it +infinity.
  std::int64_t order = 0;
  std::string what;
};

constexpr std::int64_t kBefore = -1;
constexpr std::int64_t kAfter = INT64_MAX;
std::int64_t orderOf(std::size_t chunk, int phase) {
  return static_cast<std::int64_t>(chunk) * 3 + phase;
}

class HappensBefore {
 public:
  int add() {
    edges_.emplace_back();
    return static_cast<int>(edges_.size()) - 1;
  }
  void edge(int from, int to) { edges_[static_cast<std::size_t>(from)].push_back(to); }

  // The transitive closure; false where the relation has a cycle.
  bool close() {
    const std::size_t n = edges_.size();
    std::vector<int> indegree(n, 0);
    for (const auto& out : edges_) {
      for (const int to : out) ++indegree[static_cast<std::size_t>(to)];
    }
    std::vector<int> order;
    for (std::size_t v = 0; v < n; ++v) {
      if (indegree[v] == 0) order.push_back(static_cast<int>(v));
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (const int to : edges_[static_cast<std::size_t>(order[i])]) {
        if (--indegree[static_cast<std::size_t>(to)] == 0) order.push_back(to);
      }
    }
    if (order.size() != n) return false;
    reach_.assign(n, std::vector<bool>(n, false));
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      auto& mine = reach_[static_cast<std::size_t>(*it)];
      for (const int to : edges_[static_cast<std::size_t>(*it)]) {
        mine[static_cast<std::size_t>(to)] = true;
        const auto& theirs = reach_[static_cast<std::size_t>(to)];
        for (std::size_t v = 0; v < n; ++v) mine[v] = mine[v] || theirs[v];
      }
    }
    return true;
  }
  bool before(int a, int b) const { return reach_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]; }

 private:
  std::vector<std::vector<int>> edges_;
  std::vector<std::vector<bool>> reach_;
};

struct Scenario {
  Collective collective = Collective::AllReduce;
  int n = 2;
  std::size_t count = 0;
  std::size_t elementSize = 4;
  std::size_t window = 8192;
  bool inPlace = false;
  std::vector<bool> pipelined;  // by rank (empty: every rank)
  KernelModel kernel = KernelModel::WhileOwnerRuns;
  // By rank (empty: none): the chunks keep the rank's own parts in the caller's buffers where the collective's
  // kernel below allows (keepOwnPartsLocal), and its kernel then touches the caller's buffers too.
  std::vector<bool> ownParts;
  // Mutations, to show the checker fails.
  std::function<void(std::vector<StagingOp>&)> editSchedule;
  std::function<void(std::vector<StagedChunk>&)> editCut;

  std::string describe() const {
    return std::string(collectiveName(collective)) + " n=" + std::to_string(n) + " count=" + std::to_string(count) +
           " s=" + std::to_string(elementSize) + (inPlace ? " in place" : "");
  }
};

// Offsets of rank r's send and recv in its caller's memory (in place: where the API pairs them).
void callerLayout(const Scenario& s, int r, std::size_t* send, std::size_t* recv) {
  const int root = 0;
  const std::size_t sendBytes = sendElementsOf(s.collective, s.n, s.count, r, root) * s.elementSize;
  const std::size_t block = s.count * s.elementSize * static_cast<std::size_t>(r);
  const bool rooted = s.collective == Collective::Broadcast || s.collective == Collective::Reduce;
  const bool inPlace = s.inPlace && s.collective != Collective::AllToAll && (!rooted || r == root);
  *send = 0;
  *recv = inPlace ? 0 : sendBytes;
  if (inPlace && s.collective == Collective::AllGather) *send = block;
  if (inPlace && s.collective == Collective::ReduceScatter) *recv = block;
}

// The kernel a collective's chunks run in the scenarios that keep own parts local: one that allows it.
std::pair<Kernel, Algorithm> ownPartsKernelOf(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return {Kernel::TwoShot, Algorithm::TwoShot};
    case Collective::Reduce: return {Kernel::OneShotReduce, Algorithm::OneShot};
    case Collective::ReduceScatter: return {Kernel::ShardReduce, Algorithm::OneShot};
    default: return {Kernel::Copy, Algorithm::OneShot};
  }
}

// "" when every conflicting pair of accesses is ordered as the serial schedule orders it, else the first that is not.
std::string check(const Scenario& s) {
  const int root = 0;
  HappensBefore hb;
  std::vector<Access> accesses;
  const auto touch = [&](int node, Memory memory, std::size_t begin, std::size_t bytes, bool write, std::int64_t order,
                         std::string what) {
    if (bytes > 0) accesses.push_back({node, memory, begin, begin + bytes, write, order, std::move(what)});
  };
  std::vector<std::vector<StagedChunk>> cuts;
  for (int r = 0; r < s.n; ++r) {
    cuts.push_back(stagedChunks(s.collective, s.n, r, root, s.count, s.elementSize, s.window));
    if (!s.ownParts.empty() && s.ownParts[static_cast<std::size_t>(r)]) {
      const auto [kernel, algorithm] = ownPartsKernelOf(s.collective);
      for (StagedChunk& chunk : cuts.back()) {
        keepOwnPartsLocal(chunk, s.collective, kernel, algorithm, s.n, r, root, s.count, s.elementSize);
      }
    }
    if (s.editCut) s.editCut(cuts.back());
  }
  const std::size_t chunks = cuts.front().size();
  const std::size_t everything = SIZE_MAX / 4;
  // Per rank and chunk: the kernel's start and end.
  std::vector<std::vector<int>> starts(static_cast<std::size_t>(s.n)), ends(static_cast<std::size_t>(s.n));
  for (int r = 0; r < s.n; ++r) {
    // As the library issues it: pipelined only where the rank copies anything (copiesAnything).
    const bool pipelined = (s.pipelined.empty() || s.pipelined[static_cast<std::size_t>(r)]) &&
                           copiesAnything(cuts[static_cast<std::size_t>(r)]);
    std::vector<StagingOp> ops = stagingSchedule(chunks, pipelined);
    if (s.editSchedule) s.editSchedule(ops);
    std::size_t send = 0, recv = 0;
    callerLayout(s, r, &send, &recv);
    const std::string rank = "rank " + std::to_string(r) + ": ";
    // The caller's work before and after the call, on its stream: it may touch anything.
    const int before = hb.add();
    const int after = hb.add();
    for (const bool window : {false, true}) {
      touch(before, {r, window}, 0, everything, true, kBefore, rank + "the caller's work before");
      touch(after, {r, window}, 0, everything, true, kAfter, rank + "the caller's work after");
    }
    int last[2] = {before, -1};  // the latest node on each lane
    std::vector<int> recorded(kStagingEvents, -1);
    const auto onLane = [&](StagingLane lane, int node) {
      int& previous = last[lane == StagingLane::Caller ? 0 : 1];
      if (previous >= 0) hb.edge(previous, node);
      previous = node;
    };
    starts[static_cast<std::size_t>(r)].assign(chunks, -1);
    ends[static_cast<std::size_t>(r)].assign(chunks, -1);
    for (const StagingOp& op : ops) {
      const StagedChunk& chunk = cuts[static_cast<std::size_t>(r)][std::min(op.chunk, chunks - 1)];
      const std::string label = rank + "chunk " + std::to_string(op.chunk);
      const int node = hb.add();
      switch (op.kind) {
        case StagingOp::Kind::Record:
          onLane(op.lane, node);
          recorded[static_cast<std::size_t>(op.event)] = node;
          break;
        case StagingOp::Kind::Wait: {
          const int record = recorded[static_cast<std::size_t>(op.event)];
          if (record < 0) return rank + "waits for an event it never recorded (CUDA ignores such a wait)";
          hb.edge(record, node);
          onLane(op.lane, node);
          break;
        }
        case StagingOp::Kind::CopyIn:
          onLane(op.lane, node);
          for (const StridedCopy& in : chunk.in) {
            for (std::size_t j = 0; j < in.rows; ++j) {
              touch(node, {r, false}, send + in.srcOffset + j * in.srcPitch, in.rowBytes, false, orderOf(op.chunk, 0),
                    label + " copy in");
              touch(node, {r, true}, in.dstOffset + j * in.dstPitch, in.rowBytes, true, orderOf(op.chunk, 0),
                    label + " copy in");
            }
          }
          break;
        case StagingOp::Kind::CopyOut:
          onLane(op.lane, node);
          for (const StridedCopy& out : chunk.out) {
            for (std::size_t j = 0; j < out.rows; ++j) {
              touch(node, {r, true}, out.srcOffset + j * out.srcPitch, out.rowBytes, false, orderOf(op.chunk, 2),
                    label + " copy out");
              touch(node, {r, false}, recv + out.dstOffset + j * out.dstPitch, out.rowBytes, true, orderOf(op.chunk, 2),
                    label + " copy out");
            }
          }
          break;
        case StagingOp::Kind::Kernel: {
          if (op.lane != StagingLane::Caller) return rank + "a kernel off the caller's stream";
          onLane(op.lane, node);
          const int end = hb.add();
          onLane(op.lane, end);
          starts[static_cast<std::size_t>(r)][op.chunk] = node;
          ends[static_cast<std::size_t>(r)][op.chunk] = end;
          if (chunk.own == OwnBuffers::Caller) {
            // Its own parts in the caller's buffers, conservatively the chunk's elements of every block of its
            // send and recv, read and written, while it runs.
            const int access = hb.add();
            hb.edge(node, access);
            hb.edge(access, end);
            const std::size_t bytes = chunk.count * s.elementSize;
            const std::size_t block = s.count * s.elementSize;
            const std::size_t at = chunk.first * s.elementSize;
            for (const bool sendSide : {true, false}) {
              const std::size_t blocks = sendSide ? sendElementsOf(s.collective, s.n, 1, r, root)
                                                  : recvElementsOf(s.collective, s.n, 1, r, root);
              for (std::size_t j = 0; j < blocks; ++j) {
                touch(access, {r, false}, (sendSide ? send : recv) + j * block + at, bytes, true, orderOf(op.chunk, 1),
                      label + " kernel in the caller's buffers");
              }
            }
          }
          break;
        }
      }
    }
    onLane(StagingLane::Caller, after);
  }
  // The kernels' accesses to the windows: rank p's kernel of chunk k reads and writes the chunk's regions of
  // rank r's window (its send region and recv region, conservatively all of it).
  for (std::size_t k = 0; k < chunks; ++k) {
    for (int r = 0; r < s.n; ++r) {
      if (starts[static_cast<std::size_t>(r)][k] < 0)
        return "rank " + std::to_string(r) + " runs no kernel for a chunk";
    }
    const StagedChunk& cut = cuts.front()[k];
    const std::size_t regionEnd =
        cut.recvOffset + cut.count * s.elementSize * recvElementsOf(s.collective, s.n, 1, 0, 0);
    for (int r = 0; r < s.n; ++r) {
      for (int p = 0; p < s.n; ++p) {
        if (p != r && s.kernel == KernelModel::OwnOnly) continue;
        const int access = hb.add();
        const int ownerStart = starts[static_cast<std::size_t>(r)][k];
        const int ownerEnd = ends[static_cast<std::size_t>(r)][k];
        const int peerStart = starts[static_cast<std::size_t>(p)][k];
        const int peerEnd = ends[static_cast<std::size_t>(p)][k];
        hb.edge(peerStart, access);
        hb.edge(access, peerEnd);
        if (s.kernel != KernelModel::WhilePeerRuns || p == r) {
          hb.edge(ownerStart, access);
          hb.edge(access, ownerEnd);
        }
        touch(access, {r, true}, cut.sendOffset, regionEnd - cut.sendOffset, true, orderOf(k, 1),
              "rank " + std::to_string(p) + "'s kernel of chunk " + std::to_string(k) + " in rank " +
                  std::to_string(r) + "'s window");
      }
    }
  }
  if (!hb.close()) return "the operations wait for each other in a circle (a deadlock)";
  for (std::size_t a = 0; a < accesses.size(); ++a) {
    for (std::size_t b = a + 1; b < accesses.size(); ++b) {
      const Access& x = accesses[a];
      const Access& y = accesses[b];
      if (!(x.memory == y.memory) || (!x.write && !y.write) || x.end <= y.begin || y.end <= x.begin) continue;
      // One operation's parts, or the ranks' kernels of one chunk among themselves (the kernel's own affair, as
      // between the caller's buffers in one process).
      if (x.order == y.order) continue;
      const Access& first = x.order < y.order ? x : y;
      const Access& second = x.order < y.order ? y : x;
      if (!hb.before(first.node, second.node)) {
        return first.what + " is not ordered before " + second.what + " (" +
               (x.memory.window ? "window" : "caller's buffer") + " of rank " + std::to_string(x.memory.rank) +
               ", bytes from " + std::to_string(std::max(x.begin, y.begin)) + ")";
      }
    }
  }
  return "";
}

constexpr Collective kCollectives[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                                       Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};

// Counts of 1, 2, 3 and 5 chunks (and one element) through a window of 8192 bytes.
std::vector<std::size_t> chunkedCounts(Collective collective, int n, std::size_t s, std::size_t window) {
  const std::size_t most = stagedChunkCount(collective, n, s, stagingHalfBytes(window));
  return {1, most, most + 1, 2 * most + 3, 4 * most + 7};
}

TEST(StagingSchedule, EveryAccessHappensInTheSerialOrder) {
  int checked = 0;
  for (const Collective collective : kCollectives) {
    for (const int n : {1, 2, 3, 5, 8}) {
      for (const std::size_t s : {std::size_t{1}, std::size_t{4}}) {
        for (const std::size_t count : chunkedCounts(collective, n, s, 8192)) {
          for (const bool inPlace : {false, true}) {
            for (const KernelModel kernel : {KernelModel::OwnOnly, KernelModel::WhileOwnerRuns}) {
              Scenario scenario;
              scenario.collective = collective;
              scenario.n = n;
              scenario.count = count;
              scenario.elementSize = s;
              scenario.inPlace = inPlace;
              scenario.kernel = kernel;
              EXPECT_EQ(check(scenario), "") << scenario.describe();
              // Ranks may differ in PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL: the cut is the same.
              scenario.pipelined.assign(static_cast<std::size_t>(n), true);
              scenario.pipelined[0] = false;
              EXPECT_EQ(check(scenario), "") << scenario.describe() << ", rank 0 serial";
              // Own parts in the caller's buffers, on every rank and on rank 0 alone.
              scenario.ownParts.assign(static_cast<std::size_t>(n), true);
              EXPECT_EQ(check(scenario), "") << scenario.describe() << ", own parts local, rank 0 serial";
              scenario.pipelined.clear();
              EXPECT_EQ(check(scenario), "") << scenario.describe() << ", own parts local";
              scenario.ownParts.assign(static_cast<std::size_t>(n), false);
              scenario.ownParts[0] = true;
              EXPECT_EQ(check(scenario), "") << scenario.describe() << ", rank 0's own parts local";
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(StagingSchedule, PipelinesOnlyCallsOfTwoChunksOrMore) {
  const auto onCaller = [](const std::vector<StagingOp>& ops) {
    return std::all_of(ops.begin(), ops.end(), [](const StagingOp& op) { return op.lane == StagingLane::Caller; });
  };
  EXPECT_TRUE(stagingSchedule(0, true).empty());
  EXPECT_EQ(stagingSchedule(1, true).size(), 3u);  // copy in, kernel, copy out: nothing forked
  EXPECT_TRUE(onCaller(stagingSchedule(1, true)));
  EXPECT_TRUE(onCaller(stagingSchedule(4, false)));
  const std::vector<StagingOp> pipelined = stagingSchedule(4, true);
  EXPECT_FALSE(onCaller(pipelined));
  for (const StagingOp& op : pipelined) {
    if (op.kind == StagingOp::Kind::CopyIn || op.kind == StagingOp::Kind::CopyOut) {
      EXPECT_EQ(op.lane, StagingLane::Copies);
    }
  }
}

// A graph the application captures over many staged calls (nccl-tests -G, PyTorch's CUDA graphs) stays a chain:
// each kernel depends on a few nodes, whatever the collective, the rank and whether it keeps its own parts -- so the
// graph launches as fast as the calls would run eagerly. A rank that copies nothing would otherwise carry every
// kernel's dependencies on through its idle copy stream's events (shown below with the pipelined form forced).
TEST(StagingSchedule, ACaptureOfManyCallsStaysAChainOnEveryRank) {
  constexpr int kCalls = 20;
  int pipelinedRanks = 0;
  int kernelsOnlyRanks = 0;
  for (const Collective collective : kCollectives) {
    for (const int n : {2, 3}) {
      const std::size_t count = 9 * stagedChunkCount(collective, n, 4, stagingHalfBytes(8192)) + 5;  // 10 chunks
      for (const bool ownParts : {false, true}) {
        for (int r = 0; r < n; ++r) {
          std::vector<StagedChunk> chunks = stagedChunks(collective, n, r, 0, count, 4, 8192);
          if (ownParts) {
            const auto [kernel, algorithm] = ownPartsKernelOf(collective);
            for (StagedChunk& chunk : chunks)
              keepOwnPartsLocal(chunk, collective, kernel, algorithm, n, r, 0, count, 4);
          }
          const bool copies = copiesAnything(chunks);
          (copies ? pipelinedRanks : kernelsOnlyRanks) += 1;
          const CaptureShape shape = captureOf(chunks, stagingSchedule(chunks.size(), copies), kCalls);
          SCOPED_TRACE(std::string(collectiveName(collective)) + ", rank " + std::to_string(r) + " of " +
                       std::to_string(n) + (ownParts ? ", own parts local" : ""));
          EXPECT_EQ(shape.kernels, chunks.size() * kCalls);
          EXPECT_LE(shape.mostIntoAKernel, 4u);
          EXPECT_LE(shape.edgesIntoKernels, 3 * shape.kernels);
        }
      }
    }
  }
  EXPECT_GT(pipelinedRanks, 0);
  EXPECT_GT(kernelsOnlyRanks, 0);  // the broadcast's non-roots and the reduce's root keeping their own parts
  // The broadcast's non-root keeping its own parts, pipelined regardless: every kernel of the capture depends on
  // every kernel before it.
  const std::size_t count = 9 * stagedChunkCount(Collective::Broadcast, 2, 4, stagingHalfBytes(8192)) + 5;
  std::vector<StagedChunk> chunks = stagedChunks(Collective::Broadcast, 2, 1, 0, count, 4, 8192);
  for (StagedChunk& chunk : chunks) {
    keepOwnPartsLocal(chunk, Collective::Broadcast, Kernel::Copy, Algorithm::OneShot, 2, 1, 0, count, 4);
  }
  ASSERT_FALSE(copiesAnything(chunks));
  const CaptureShape forced = captureOf(chunks, stagingSchedule(chunks.size(), true), kCalls);
  EXPECT_GT(forced.mostIntoAKernel, forced.kernels / 2);
}

// The scenario every mutation below starts from: four chunks on three ranks, in place.
Scenario pipelinedScenario(Collective collective) {
  Scenario scenario;
  scenario.collective = collective;
  scenario.n = 3;
  scenario.count = 3 * stagedChunkCount(collective, 3, 4, stagingHalfBytes(8192)) + 5;
  scenario.inPlace = true;
  return scenario;
}

TEST(StagingSchedule, TheCheckerCatchesAMissingWaitForTheKernelBeforeACopyOut) {
  Scenario scenario = pipelinedScenario(Collective::AllReduce);
  ASSERT_EQ(check(scenario), "");
  scenario.editSchedule = [](std::vector<StagingOp>& ops) {
    const auto wait = std::find_if(ops.begin(), ops.end(), [](const StagingOp& op) {
      return op.kind == StagingOp::Kind::Wait && op.event == StagingEvent::KernelDoneOdd;
    });
    ASSERT_NE(wait, ops.end());
    ops.erase(wait);
  };
  EXPECT_NE(check(scenario).find("chunk 1 in rank 0's window is not ordered before rank 0: chunk 1 copy out"),
            std::string::npos)
      << check(scenario);
}

// Chunk k+1's copy in must follow chunk k-1's copy out on the copy stream: the kernel of chunk k+1 waits only for
// the copy in, and the peers' kernels then store into the half chunk k-1's result is still read from.
TEST(StagingSchedule, TheCheckerCatchesACopyOutAfterTheNextCopyIntoItsHalf) {
  Scenario scenario = pipelinedScenario(Collective::AllReduce);
  scenario.editSchedule = [](std::vector<StagingOp>& ops) {
    const auto out = std::find_if(ops.begin(), ops.end(), [](const StagingOp& op) {
      return op.kind == StagingOp::Kind::CopyOut && op.chunk == 0;
    });
    ASSERT_NE(out, ops.end());
    ASSERT_EQ((out + 1)->kind, StagingOp::Kind::CopyIn);
    ASSERT_EQ((out + 2)->kind, StagingOp::Kind::Record);
    std::rotate(out, out + 1, out + 3);  // copy in of chunk 2, its record, then the copy out of chunk 0
  };
  EXPECT_NE(check(scenario).find("chunk 0 copy out is not ordered before"), std::string::npos) << check(scenario);
}

TEST(StagingSchedule, TheCheckerCatchesACopyStreamThatIsNotForked) {
  Scenario scenario = pipelinedScenario(Collective::ReduceScatter);
  scenario.editSchedule = [](std::vector<StagingOp>& ops) {
    ops.erase(std::find_if(ops.begin(), ops.end(), [](const StagingOp& op) {
      return op.kind == StagingOp::Kind::Wait && op.event == StagingEvent::Forked;
    }));
  };
  EXPECT_NE(check(scenario).find("the caller's work before"), std::string::npos) << check(scenario);
}

TEST(StagingSchedule, TheCheckerCatchesPeersTouchingAWindowOutsideItsOwnersKernel) {
  for (const bool pipelined : {true, false}) {
    Scenario scenario = pipelinedScenario(Collective::AllGather);
    scenario.pipelined.assign(3, pipelined);
    scenario.kernel = KernelModel::WhilePeerRuns;
    EXPECT_NE(check(scenario).find("kernel of chunk"), std::string::npos) << check(scenario);
  }
}

TEST(StagingSchedule, TheCheckerCatchesChunksThatOverlapInPlace) {
  Scenario scenario = pipelinedScenario(Collective::AllReduce);
  scenario.editCut = [](std::vector<StagedChunk>& cut) { cut[1].in[0].srcOffset -= 4; };  // reads chunk 0's last
  EXPECT_NE(check(scenario).find("caller's buffer of rank"), std::string::npos) << check(scenario);
  scenario.inPlace = false;  // apart, chunk 0's copy out writes elsewhere
  EXPECT_EQ(check(scenario), "");
}

// A kernel using the caller's buffers beyond its own chunk races the copy stream's copy in of the chunk after it.
TEST(StagingSchedule, TheCheckerCatchesAKernelReachingPastItsChunkInTheCallersBuffers) {
  Scenario scenario = pipelinedScenario(Collective::AllReduce);
  scenario.ownParts.assign(3, true);
  ASSERT_EQ(check(scenario), "");
  scenario.editCut = [](std::vector<StagedChunk>& cut) {
    ASSERT_EQ(cut[1].own, OwnBuffers::Caller);
    cut[1].first += cut[1].count / 2;  // its kernel's accesses now reach into chunk 2's elements
  };
  EXPECT_NE(check(scenario).find("kernel in the caller's buffers"), std::string::npos) << check(scenario);
}

// Whether the caller's stream, after `ops` on one rank (stream order on each lane, each wait after the latest record
// of its event), passes every copy they issued: what an event recorded behind the call there must cover.
bool callerPassesEveryCopy(const std::vector<StagingOp>& ops) {
  HappensBefore hb;
  int last[2] = {-1, -1};
  std::vector<int> recorded(kStagingEvents, -1);
  std::vector<int> copies;
  for (const StagingOp& op : ops) {
    const int node = hb.add();
    int& previous = last[op.lane == StagingLane::Caller ? 0 : 1];
    if (previous >= 0) hb.edge(previous, node);
    previous = node;
    if (op.kind == StagingOp::Kind::Record) recorded[static_cast<std::size_t>(op.event)] = node;
    if (op.kind == StagingOp::Kind::Wait && recorded[static_cast<std::size_t>(op.event)] >= 0) {
      hb.edge(recorded[static_cast<std::size_t>(op.event)], node);
    }
    if (op.kind == StagingOp::Kind::CopyIn || op.kind == StagingOp::Kind::CopyOut) copies.push_back(node);
  }
  const int after = hb.add();  // the event recorded behind the call on the caller's stream
  if (last[0] >= 0) hb.edge(last[0], after);
  if (!hb.close()) return false;
  return std::all_of(copies.begin(), copies.end(), [&](int copy) { return hb.before(copy, after); });
}

// A call whose launch fails part way: what was issued, then stagingAbandon's join, leaves no copy behind the caller's
// stream, wherever it stopped; without the join, stopping after the first copy in would.
TEST(StagingSchedule, ACallStoppedPartWayIsJoinedBackIntoTheCallersStream) {
  for (const bool pipelined : {true, false}) {
    for (std::size_t chunks = 1; chunks <= 5; ++chunks) {
      const std::vector<StagingOp> schedule = stagingSchedule(chunks, pipelined);
      EXPECT_TRUE(stagingAbandon(schedule, schedule.size()).empty()) << "a whole call is joined already";
      EXPECT_TRUE(stagingAbandon(schedule, 0).empty()) << "nothing issued, nothing to join";
      for (std::size_t issued = 0; issued <= schedule.size(); ++issued) {
        std::vector<StagingOp> ops(schedule.begin(), schedule.begin() + static_cast<std::ptrdiff_t>(issued));
        const std::vector<StagingOp> abandon = stagingAbandon(schedule, issued);
        ops.insert(ops.end(), abandon.begin(), abandon.end());
        EXPECT_TRUE(callerPassesEveryCopy(ops))
            << chunks << " chunk(s), " << (pipelined ? "pipelined" : "serial") << ", stopped after " << issued;
        if (!pipelined || chunks < 2) {
          EXPECT_TRUE(abandon.empty()) << "a serial call forks nothing";
        }
      }
    }
  }
  const std::vector<StagingOp> schedule = stagingSchedule(3, true);
  const auto firstCopy = std::find_if(schedule.begin(), schedule.end(),
                                      [](const StagingOp& op) { return op.kind == StagingOp::Kind::CopyIn; });
  ASSERT_NE(firstCopy, schedule.end());
  const std::vector<StagingOp> stopped(schedule.begin(), firstCopy + 1);
  EXPECT_FALSE(callerPassesEveryCopy(stopped)) << "the checker sees a copy left on the copy stream";
  EXPECT_FALSE(stagingAbandon(schedule, stopped.size()).empty());
}

// windowAccessOf against the registry: a kernel that moves data only through the library's own buffers touches
// no peer's window; one that reads or stores into peers' buffers must do so only while the owner's kernel runs.
TEST(StagingSchedule, EveryKernelSaysHowItTouchesTheWindows) {
  for (const KernelInfo& info : kernelRegistry()) {
    const WindowAccess expected =
        info.flow == DataFlow::ThroughStages ? WindowAccess::OwnOnly : WindowAccess::WhileOwnerRuns;
    EXPECT_EQ(windowAccessOf(info.kernel), expected) << info.name;
  }
}

}  // namespace
}  // namespace peerlink::coll
