// Queued calls whose copies and reductions are the device's (net/queued_computations.hpp), over a loopback world
// with the copy stream a stand-in (net_stand_in_stream.hpp) that makes each computation from the ring once asked, as
// the kernel does: what a plan asks of its memory is what the call queued for it (planDemand against MemberPlan);
// every reducing collective right through them, two pieces at a time, the computations on a stream of their own;
// tickets asked out of order; the memory refuses what it was not given. (A failed call's computations:
// test_net_queued_calls.cc, FailedQueuedCallsLetTheirStreamsRunThrough.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_reduce.hpp"
#include "net/net_world.hpp"
#include "net/queued_computations.hpp"
#include "net_loopback_support.hpp"
#include "net_stand_in_stream.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using stand_ins::DeviceWithStagedMemory;
using stand_ins::optionsWith;
using stand_ins::queueDeviceSide;
using stand_ins::queueQueued;
using stand_ins::StandInStream;
using testing::onEveryRank;

// Host memory that says it queues its work (as the device's does), counting what MemberPlan asks of it: the
// computations and their sources and elements, and the temporaries of each step (a step begins with release()).
class CountingMemory final : public LocalMemory {
 public:
  explicit CountingMemory(DataType type) : size_(dataTypeSize(type)) {}
  void copy(void* dst, const void* src, std::size_t bytes) override {
    host_.copy(dst, src, bytes);
    counted(bytes / size_, 0);
  }
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override {
    host_.reduce(type, op, dst, srcs, count, divisor, finish);
    counted(count, srcs.size());
  }
  void* temporary(std::size_t lane, std::size_t bytes) override {
    stepBytes_ += (bytes + kTemporaryAlign - 1) / kTemporaryAlign * kTemporaryAlign;
    asked_.mostTemporaryBytes = std::max(asked_.mostTemporaryBytes, stepBytes_);
    return host_.temporary(lane, bytes);
  }
  void release(std::size_t lane) override {
    stepBytes_ = 0;
    stepComputations_ = 0;
    host_.release(lane);
  }
  void* persistent(std::size_t bytes) override { return host_.persistent(bytes); }
  bool queues() const override { return true; }
  const PlanDemand& asked() const { return asked_; }

 private:
  void counted(std::size_t elements, std::size_t sources) {
    ++asked_.computations;
    asked_.mostComputationsInAStep = std::max(asked_.mostComputationsInAStep, ++stepComputations_);
    asked_.mostElements = std::max(asked_.mostElements, elements);
    asked_.mostSources = std::max(asked_.mostSources, sources);
  }
  HostMemory host_;
  std::size_t size_;
  PlanDemand asked_;
  std::size_t stepBytes_ = 0;
  std::size_t stepComputations_ = 0;
};

std::string demandText(const PlanDemand& d) {
  return std::to_string(d.computations) + " computations, " + std::to_string(d.mostComputationsInAStep) +
         " in a step, " + std::to_string(d.mostSources) + " sources, " + std::to_string(d.mostElements) +
         " elements, " + std::to_string(d.mostTemporaryBytes) + " bytes of temporaries";
}

// Each collective's plan, by every algorithm it has, on 2 to 5 ranks, as the staged path runs a piece (its local
// copies taken out), run by MemberPlan over memory that queues: it asks exactly what planDemand says, on every rank.
TEST(NetQueuedComputation, PlanDemandIsWhatMemberPlanAsks) {
  const Collective collectives[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                    Collective::Broadcast, Collective::Reduce,    Collective::AllToAll};
  int cases = 0;
  for (const Collective collective : collectives) {
    for (const Algorithm algorithm : coll::algorithmsOf(collective)) {
      for (int n = 2; n <= 5; ++n) {
        for (const std::size_t count : {std::size_t{1}, std::size_t{1000}}) {
          const int root = n - 1;
          std::vector<std::string> texts(static_cast<std::size_t>(n) * 2);
          const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
            std::vector<int> members;
            for (int m = 0; m < n; ++m) members.push_back(m);
            const NetCall call{collective, count, DataType::F32, ReduceOp::Sum, 0, root, nullptr, nullptr, algorithm};
            CallPiece piece = callPiece(call, n, r, 0, count);
            takeLocalCopies(piece.plan, r);
            std::vector<float> input(piece.inputElements + 1, 1.0f), output(piece.outputElements + 1),
                scratch(piece.scratchElements + 1);
            MemberRun run;
            run.p2p = p2p.get();
            run.members = members;
            run.me = r;
            run.avgDivisor = n;
            run.timeout = std::chrono::milliseconds(5000);
            run.name = collectiveName(collective);
            run.describe = [](int rank) { return "rank " + std::to_string(rank); };
            CountingMemory memory(DataType::F32);
            MemberPlan plan(piece.plan, run, 0, BufferMap::contiguous(input.data(), piece.inputElements),
                            BufferMap::contiguous(output.data(), piece.outputElements),
                            BufferMap::contiguous(scratch.data(), piece.scratchElements), memory, 0);
            while (!plan.done()) plan.advance();
            const auto i = static_cast<std::size_t>(r) * 2;
            texts[i] = demandText(planDemand(piece.plan, r));
            texts[i + 1] = demandText(memory.asked());
          });
          for (int r = 0; r < n; ++r) {
            const auto i = static_cast<std::size_t>(r) * 2;
            ASSERT_EQ(errors[static_cast<std::size_t>(r)], "");
            EXPECT_EQ(texts[i], texts[i + 1])
                << collectiveName(collective) << " " << algorithmName(algorithm) << " on " << n << " ranks, count "
                << count << ", rank " << r << " (planDemand, then what it asked)";
          }
          ++cases;
        }
      }
    }
  }
  RecordProperty("cases", cases);
}

struct Case {
  Collective collective;
  DataType type;
  ReduceOp op;
  bool inPlace;
};

// On 3 ranks whose staged memory is the device's, PEERLINK_NET_REDUCE=GPU: each reducing collective queued in pieces
// of 1 KiB (several per call, slots reused), its copies and reductions asked of the stand-in copy stream, right
// against the closed form; calls one after another, so that later calls' tickets follow earlier ones' (more of them
// than the ring has slots).
void checkReducingCollectives(bool computeStreamOfTheirOwn) {
  SCOPED_TRACE(computeStreamOfTheirOwn ? "computations on a stream of their own" : "computations on the copy stream");
  const int n = 3;
  const int root = 1;
  const std::size_t count = 2500;
  const Case cases[] = {{Collective::AllReduce, DataType::F32, ReduceOp::Sum, false},
                        {Collective::AllReduce, DataType::I32, ReduceOp::Max, true},
                        {Collective::ReduceScatter, DataType::F16, ReduceOp::Avg, false},
                        {Collective::Reduce, DataType::F32, ReduceOp::Sum, false},
                        {Collective::Reduce, DataType::BF16, ReduceOp::Min, true},
                        {Collective::AllReduce, DataType::F64, ReduceOp::Avg, false}};
  std::vector<std::vector<coll::Bytes>> got(std::size(cases), std::vector<coll::Bytes>(n));
  std::vector<std::size_t> computations(n, 0);
  std::vector<int> stuck(n, 0);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 1024;
    options.reduce = NetReduce::Gpu;
    auto world = std::make_unique<NetWorld>(std::move(p2p), options, std::make_unique<DeviceWithStagedMemory>(),
                                            std::make_unique<HostMemory>());
    auto group = world->group({0, 1, 2}, "three");
    StandInStream stream;
    StandInStream copyStream;
    StandInStream computeStream;
    std::vector<coll::Bytes> sends, recvs;
    for (const Case& c : cases) {
      const std::size_t size = dataTypeSize(c.type);
      sends.push_back(testing::sendDataOf(c.collective, c.type, n, count, r, root));
      recvs.emplace_back(recvElementsOf(c.collective, n, count, r, root) * size);
    }
    for (std::size_t k = 0; k < std::size(cases); ++k) {
      const Case& c = cases[k];
      coll::Bytes& send = sends[k];
      coll::Bytes& recv = recvs[k];
      if (c.inPlace) {
        // In place as the API says for these: one buffer, the send data in it (a reduce's off the root too).
        recv.resize(std::max(recv.size(), send.size()));
        std::memcpy(recv.data(), send.data(), send.size());
      }
      const NetCall call{c.collective, count, c.type, c.op, 0, root, c.inPlace ? recv.data() : send.data(),
                         recv.data()};
      ASSERT_TRUE(group->queuedFits(call));
      computations[static_cast<std::size_t>(r)] +=
          queueQueued(*group, stream, copyStream, call, computeStreamOfTheirOwn ? &computeStream : nullptr);
      // Slots grow for later calls here, once the world's device says its copies ended: the stand-in copy stream is
      // not that device, so each call ends before the next.
      stream.drain();
    }
    stuck[static_cast<std::size_t>(r)] = stream.stuck() + copyStream.stuck() + computeStream.stuck();
    EXPECT_EQ(world->brokenBy(), "");
    for (std::size_t k = 0; k < std::size(cases); ++k) got[k][static_cast<std::size_t>(r)] = recvs[k];
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(stuck[static_cast<std::size_t>(r)], 0) << "rank " << r;
    EXPECT_GT(computations[static_cast<std::size_t>(r)], kAskedRing) << "rank " << r << " reused no ring slot";
  }
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    const std::vector<coll::Bytes> want = coll::hostReduceReference(
        c.collective, c.type, c.op, n, count, root, testing::everySend(c.collective, c.type, n, count, root));
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (want[i].empty()) continue;  // reduce off the root
      const auto mismatch = coll::findMismatch(c.type, coll::tolerance(c.type, c.op, n, 8.0), want[i], got[k][i]);
      EXPECT_FALSE(mismatch) << collectiveName(c.collective) << ' ' << dataTypeName(c.type) << ' ' << reduceOpName(c.op)
                             << (c.inPlace ? " in place" : "") << " rank " << r << ": " << *mismatch;
    }
  }
}

TEST(NetQueuedComputation, ReducingCollectivesAreRightWithTheirComputationsOnTheDevice) {
  checkReducingCollectives(true);
  // Two streams may share one hardware queue, which runs their work in the order it was submitted: as one stream.
  checkReducingCollectives(false);
}

// A ring too long for the ticket ring: a piece's computations and one step's more do not fit it (65 ranks' ring
// all-reduce asks 64 per piece), so the call waits on the host instead of being queued; 3 ranks' is queued.
TEST(NetQueuedComputation, CallsWhosePiecesOutgrowTheRingWait) {
  for (const int n : {3, 65}) {
    std::vector<int> fits(static_cast<std::size_t>(n), -1);
    const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(5000));
      options.chunkBytes = 65536;  // every rank's block of a piece has elements
      options.reduce = NetReduce::Gpu;
      auto world = std::make_unique<NetWorld>(std::move(p2p), options, std::make_unique<DeviceWithStagedMemory>(),
                                              std::make_unique<HostMemory>());
      std::vector<int> members;
      for (int m = 0; m < n; ++m) members.push_back(m);
      auto group = world->group(members, "all");
      float any = 0;
      fits[static_cast<std::size_t>(r)] = group->queuedFits(
          {Collective::AllReduce, std::size_t{16384} * 4, DataType::F32, ReduceOp::Sum, 0, 0, &any, &any});
    });
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << n << " ranks, rank " << r;
      EXPECT_EQ(fits[static_cast<std::size_t>(r)], n == 3 ? 1 : 0) << n << " ranks, rank " << r;
    }
  }
}

// The code of the Error `body` throws, or "none".
std::string code(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return std::string(errorCodeName(error.code()));
  }
  return "none";
}

// Tickets asked out of order (two pieces in flight) move the asked word only over those asked in full, each once its
// ring slot's last ticket ran; the rest of a failed call is asked as nothing.
TEST(NetQueuedComputation, AskedTicketsAdvanceOverWhatIsAskedInFull) {
  auto words = std::make_unique<AskedComputations>();
  AskedTickets tickets(*words);
  const auto args = [](std::size_t count) { return kernels::planReduceArgs(nullptr, nullptr, 0, count, 1, false); };
  tickets.ask(2, args(20));
  EXPECT_EQ(words->asked.value.load(), 0u) << "ticket 1 not asked yet";
  EXPECT_EQ(words->ring[2].count, 20u);
  tickets.ask(1, args(10));
  EXPECT_EQ(words->asked.value.load(), 2u);
  EXPECT_EQ(code([&] { tickets.ask(2, args(1)); }), "Internal");  // asked again
  tickets.ask(4, args(40));
  EXPECT_EQ(words->asked.value.load(), 2u);
  EXPECT_EQ(code([&] { tickets.ask(3 + kAskedRing, args(1)); }), "Internal");  // ticket 3 has not run
  tickets.ask(3, args(30));
  EXPECT_EQ(words->asked.value.load(), 4u);
  EXPECT_FALSE(tickets.computed(3));
  words->computed.value.store(3);
  EXPECT_TRUE(tickets.computed(3));
  tickets.ask(3 + kAskedRing, args(7));  // its slot's last ticket ran
  EXPECT_EQ(words->asked.value.load(), 4u);
  tickets.skipTo(5 + kAskedRing);
  EXPECT_EQ(words->asked.value.load(), 5 + kAskedRing);
  EXPECT_EQ(words->ring[3].count, 0u);
  tickets.skipTo(4);  // behind: nothing changes
  EXPECT_EQ(words->asked.value.load(), 5 + kAskedRing);
}

// A piece's memory asks its own tickets, and refuses what the call did not queue for it.
TEST(NetQueuedComputation, AskedMemoryRefusesWhatItWasNotGiven) {
  auto words = std::make_unique<AskedComputations>();
  AskedTickets tickets(*words);
  const AskedKernel kernel = askedKernel(DataType::F32, ReduceOp::Sum, 1000);
  EXPECT_EQ(kernel.blocks, 1);
  EXPECT_EQ(askedKernel(DataType::F32, ReduceOp::Sum, std::size_t{1} << 30).blocks, 64);
  std::vector<std::byte> landing(1024);
  float a[4] = {1, 2, 3, 4}, b[4] = {};
  AskedMemory memory(tickets, kernel, 1, 2, landing.data(), landing.size());
  EXPECT_TRUE(memory.reached(memory.mark()));  // nothing asked yet
  memory.reduce(DataType::F32, ReduceOp::Sum, b, {a, a}, 4, 1, false);
  EXPECT_EQ(words->asked.value.load(), 1u);
  EXPECT_EQ(words->ring[1].count, 4u);
  EXPECT_EQ(words->ring[1].nsrcs, 2);
  EXPECT_FALSE(memory.reached(memory.mark()));
  words->computed.value.store(1);
  EXPECT_TRUE(memory.reached(memory.mark()));
  EXPECT_EQ(code([&] { memory.reduce(DataType::I32, ReduceOp::Sum, b, {a}, 4, 1, false); }), "Internal");
  EXPECT_EQ(code([&] { memory.reduce(DataType::F32, ReduceOp::Max, b, {a}, 4, 1, false); }), "Internal");
  EXPECT_EQ(code([&] { memory.reduce(DataType::F32, ReduceOp::Sum, b, std::vector<const void*>(9, a), 4, 1, false); }),
            "Internal");
  EXPECT_EQ(code([&] { memory.copy(b, a, 6); }), "Internal");  // not whole elements
  memory.copy(b, a, 16);
  EXPECT_EQ(words->ring[2].nsrcs, 1);
  EXPECT_EQ(memory.unasked(), 0u);
  EXPECT_EQ(code([&] { memory.copy(b, a, 16); }), "Internal");  // a third where two were queued
  EXPECT_EQ(code([&] { memory.temporary(0, 2048); }), "Internal");
  EXPECT_NE(memory.temporary(0, 1000), nullptr);
  memory.release(0);
  EXPECT_NE(memory.temporary(0, 1000), nullptr);
  // A copy onto itself asks nothing to be done; a call abandoned by its caller fails its waits at once.
  std::atomic<bool> abandoned{false};
  AskedMemory onto(tickets, kernel, 3, 1, landing.data(), landing.size(), &abandoned);
  words->computed.value.store(3);
  onto.copy(b, b, 16);
  EXPECT_EQ(words->ring[3].count, 0u);
  EXPECT_TRUE(onto.reached(onto.mark()));
  abandoned = true;
  EXPECT_EQ(code([&] { onto.reached(onto.mark()); }), "CudaError");
}

}  // namespace
}  // namespace peerlink::net
