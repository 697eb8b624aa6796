// The transport's computations where the memory only queues them (a GPU's stream: LocalMemory::queues), over a
// loopback world whose sends copy the data when posted: a DeferredMemory runs each reduction only some polls after it
// was queued, as a GPU would, so a result sent, a step ended (its landing buffers reused) or a staged piece copied out
// before its reduction ran would give wrong data. Every collective and flat algorithm, staged and direct, against the
// closed forms; whole transfers queued, never slices; a reduction that never finishes named at the deadline, its
// memory kept by the broken world. And copies queued like them: copies out a call leaves queued
// (NetOptions::copiesOutInStreamOrder) never meet a later call.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_reduce.hpp"
#include "net/net_world.hpp"
#include "net_loopback_support.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;
using testing::everySend;
using testing::onEveryRank;

// What a DeferredMemory saw, read by the test once the world is gone.
struct Seen {
  std::size_t reductions = 0;
  std::size_t largest = 0;  ///< elements of the largest reduction queued
  bool leaked = false;
};

// Reductions queued and run in order, each once `delay` polls of reached() passed since the one before ran
// (delay < 0: never). Buffers are HostMemory's.
class DeferredMemory final : public LocalMemory {
 public:
  DeferredMemory(int delay, Seen& seen) : delay_(delay), seen_(seen) {}
  void copy(void* dst, const void* src, std::size_t bytes) override { host_.copy(dst, src, bytes); }
  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override {
    jobs_.push_back({type, op, dst, srcs, count, divisor, finish});
    ++queued_;
    ++seen_.reductions;
    seen_.largest = std::max(seen_.largest, count);
  }
  void* temporary(std::size_t lane, std::size_t bytes) override { return host_.temporary(lane, bytes); }
  void release(std::size_t lane) override { host_.release(lane); }
  void* persistent(std::size_t bytes) override { return host_.persistent(bytes); }
  void leak() noexcept override { seen_.leaked = true; }
  bool queues() const override { return true; }
  std::uint64_t mark() override { return queued_; }
  bool reached(std::uint64_t marker) override {
    if (!jobs_.empty() && delay_ >= 0 && ++polls_ > delay_) {
      const Job& job = jobs_.front();
      coll::hostReduce(job.type, job.op, job.dst, job.srcs, job.count, job.divisor, job.finish);
      jobs_.pop_front();
      ++done_;
      polls_ = 0;
    }
    return done_ >= marker;
  }

 private:
  struct Job {
    DataType type;
    ReduceOp op;
    void* dst;
    std::vector<const void*> srcs;
    std::size_t count;
    int divisor;
    bool finish;
  };
  HostMemory host_;
  int delay_;
  Seen& seen_;
  std::deque<Job> jobs_;
  std::uint64_t queued_ = 0;
  std::uint64_t done_ = 0;
  int polls_ = 0;
};

// Host copies; the staged path's reductions on `memory`.
class HostCopiesWith final : public DeviceAccess {
 public:
  explicit HostCopiesWith(std::function<std::unique_ptr<LocalMemory>()> memory) : memory_(std::move(memory)) {}
  void copyAsync(void* dst, const void* src, std::size_t bytes) override { host_->copyAsync(dst, src, bytes); }
  std::uint64_t mark() override { return host_->mark(); }
  bool reached(std::uint64_t marker) override { return host_->reached(marker); }
  void* allocateHost(std::size_t bytes) override { return host_->allocateHost(bytes); }
  void freeHost(void* memory) noexcept override { host_->freeHost(memory); }
  std::unique_ptr<LocalMemory> stagedMemory() override { return memory_(); }

 private:
  std::unique_ptr<DeviceAccess> host_ = hostDeviceAccess();
  std::function<std::unique_ptr<LocalMemory>()> memory_;
};

// `gpuReduceMinBytes` 0: every staged piece's reductions go to the memory under test, however small.
NetOptions optionsOf(NetPath path, std::size_t chunkBytes, std::size_t gpuReduceMinBytes = 0) {
  NetOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  options.chunkBytes = chunkBytes;
  options.path = path;
  options.gpuReduceMinBytes = gpuReduceMinBytes;
  options.identity.hostId = "one";
  return options;
}

// A world whose computations, on either path, are `make()`'s.
std::unique_ptr<NetWorld> worldWith(std::unique_ptr<PointToPoint> p2p, NetOptions options,
                                    const std::function<std::unique_ptr<LocalMemory>()>& make) {
  return std::make_unique<NetWorld>(std::move(p2p), std::move(options), std::make_unique<HostCopiesWith>(make), make());
}

// Every collective and flat algorithm on 3 ranks, out of place and (all-reduce) in place, with pieces of 64 bytes,
// each rank's result against the closed form. Returns how many calls ran.
int everyCollective(NetPath path, const std::function<std::unique_ptr<LocalMemory>()>& make,
                    std::size_t gpuReduceMinBytes = 0) {
  const int n = 3;
  const int root = 2;
  int calls = 0;
  for (const Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce,
                                      Collective::AllGather, Collective::Broadcast, Collective::AllToAll}) {
    for (const Algorithm algorithm : coll::algorithmsOf(collective)) {
      for (const bool inPlace : {false, true}) {
        if (inPlace && collective != Collective::AllReduce) continue;
        for (const std::size_t count : {std::size_t{1}, std::size_t{37}, std::size_t{300}}) {
          for (const auto& [type, op] :
               {std::pair{DataType::F32, ReduceOp::Sum}, std::pair{DataType::F16, ReduceOp::Avg},
                std::pair{DataType::I32, ReduceOp::Max}}) {
            const std::vector<Bytes> sends = everySend(collective, type, n, count, root);
            std::vector<Bytes> got(n);
            const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
              auto world = worldWith(std::move(p2p), optionsOf(path, 64, gpuReduceMinBytes), make);
              auto group = world->group({0, 1, 2}, "three");
              const auto i = static_cast<std::size_t>(r);
              Bytes send = sends[i];
              Bytes& recv = got[i];
              recv.assign(recvElementsOf(collective, n, count, r, root) * dataTypeSize(type), std::byte{0x5a});
              if (inPlace) recv = send;
              NetCall call{collective, count, type, op, 0, root, inPlace ? recv.data() : send.data(), recv.data()};
              call.algorithm = algorithm;
              group->run(call);
            });
            const std::string what = std::string(collectiveName(collective)) + '/' + algorithmName(algorithm) +
                                     (inPlace ? " in place" : "") + " count " + std::to_string(count) + ' ' +
                                     dataTypeName(type) + ' ' + netPathName(path);
            for (const std::string& error : errors) EXPECT_EQ(error, "") << what;
            const std::vector<Bytes> want = coll::hostReduceReference(collective, type, op, n, count, root, sends);
            const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
            for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
              if (want[r].empty()) continue;  // reduce off the root
              const auto mismatch = coll::findMismatch(type, tol, want[r], got[r]);
              EXPECT_FALSE(mismatch) << what << " rank " << r << ": " << *mismatch;
            }
            ++calls;
          }
        }
      }
    }
  }
  return calls;
}

TEST(NetQueued, EveryCollectiveRightWhenReductionsFinishLate) {
  for (const NetPath path : {NetPath::Staged, NetPath::Direct}) {
    for (const int delay : {1, 5}) {
      std::mutex mutex;  // the ranks' threads make their worlds at once
      std::deque<Seen> seen;
      const int calls = everyCollective(path, [&] {
        std::lock_guard<std::mutex> lock(mutex);
        return std::make_unique<DeferredMemory>(delay, seen.emplace_back());
      });
      EXPECT_GT(calls, 0);
      std::size_t reductions = 0;
      for (const Seen& s : seen) reductions += s.reductions;
      EXPECT_GT(reductions, 0u) << netPathName(path) << ": the reductions went to the memory";
      for (const Seen& s : seen) EXPECT_FALSE(s.leaked);
    }
  }
}

TEST(NetQueued, WholeTransfersAreQueuedNotSlices) {
  // 2 ranks, one piece of 1 MiB: each rank reduces the whole piece (an all-reduce of 2 runs one shot), which
  // HostMemory takes in 256 KiB slices.
  const std::size_t count = std::size_t{1} << 18;
  std::vector<Seen> seen(2);
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    const auto i = static_cast<std::size_t>(r);
    auto world = worldWith(std::move(p2p), optionsOf(NetPath::Staged, count * sizeof(float)),
                           [&] { return std::make_unique<DeferredMemory>(2, seen[i]); });
    auto group = world->group({0, 1}, "two");
    std::vector<float> send(count, static_cast<float>(r + 1)), recv(count, 0.0f);
    group->allReduce(send.data(), recv.data(), count, DataType::F32, ReduceOp::Sum);
    for (std::size_t k = 0; k < count; k += 4099) ASSERT_EQ(recv[k], 3.0f) << k;
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
  // Two memories per world (staged, and the direct path's caller memory, which the identities' call does not
  // reduce with): the staged one queued the rank's one reduction whole.
  for (const Seen& s : seen) {
    EXPECT_EQ(s.reductions, 1u);
    EXPECT_EQ(s.largest, count);
  }
}

// The choice of where a call's staged pieces reduce, from its first piece's plan and its number of pieces (so every
// rank makes the same one).
TEST(NetReduceChoice, OnePieceWithSmallReductionsGoesToTheHost) {
  const auto plan = [](Collective collective, DataType type, int n, std::size_t count) {
    NetCall call;
    call.collective = collective;
    call.type = type;
    return callPlan(call, n, count);
  };
  const std::size_t mib = std::size_t{1} << 20;
  // 2 ranks: a one-shot all-reduce reduces its whole piece, a reduce-scatter a whole block.
  const coll::Plan ar4 = plan(Collective::AllReduce, DataType::F32, 2, mib);  // 4 MiB
  EXPECT_EQ(largestReductionBytes(ar4), 4 * mib);
  EXPECT_FALSE(reducesOnHost(ar4, 1, kGpuReduceMinBytes));
  const coll::Plan ar1 = plan(Collective::AllReduce, DataType::F32, 2, mib / 4);  // 1 MiB
  EXPECT_EQ(largestReductionBytes(ar1), mib);
  EXPECT_TRUE(reducesOnHost(ar1, 1, kGpuReduceMinBytes));
  const coll::Plan rs4 = plan(Collective::ReduceScatter, DataType::F32, 2, mib / 2);  // blocks of 2 MiB
  EXPECT_EQ(largestReductionBytes(rs4), 2 * mib);
  EXPECT_FALSE(reducesOnHost(rs4, 1, kGpuReduceMinBytes));
  EXPECT_TRUE(reducesOnHost(plan(Collective::ReduceScatter, DataType::F32, 2, mib / 8), 1, kGpuReduceMinBytes));
  // Bytes, not elements: a piece of 1 Mi f16 is 2 MiB.
  EXPECT_EQ(largestReductionBytes(plan(Collective::AllReduce, DataType::F16, 2, mib)), 2 * mib);
  // The threshold itself goes to the GPU, a byte more to the host.
  EXPECT_FALSE(reducesOnHost(ar1, 1, mib));
  EXPECT_TRUE(reducesOnHost(ar1, 1, mib + 1));
  // The largest reduction of any rank: 3 ranks split 1000 f32 into blocks of 336, 332 and 332 (multiples of 16 B).
  EXPECT_EQ(largestReductionBytes(plan(Collective::AllReduce, DataType::F32, 3, 1000)), 336 * sizeof(float));
  // Nothing to reduce: the piece stays with the GPU's memory, whatever the threshold.
  const coll::Plan gather = plan(Collective::AllGather, DataType::F32, 2, 16);
  EXPECT_EQ(largestReductionBytes(gather), 0u);
  EXPECT_FALSE(reducesOnHost(gather, 1, kGpuReduceMinBytes));
  // 3 and 4 ranks, as measured: a call of one 4 MiB piece reduces 1-1.3 MiB at a time, on the host; a call of
  // several such pieces on the GPU, however small its reductions.
  for (const int n : {3, 4}) {
    const coll::Plan ar = plan(Collective::AllReduce, DataType::F32, n, mib);
    EXPECT_LT(largestReductionBytes(ar), kGpuReduceMinBytes) << n << " ranks";
    EXPECT_TRUE(reducesOnHost(ar, 1, kGpuReduceMinBytes)) << n << " ranks";
    EXPECT_FALSE(reducesOnHost(ar, 2, kGpuReduceMinBytes)) << n << " ranks";
    EXPECT_FALSE(reducesOnHost(ar, 16, kGpuReduceMinBytes)) << n << " ranks";
  }
  // Several pieces go to the GPU even with the smallest reductions.
  EXPECT_FALSE(reducesOnHost(ar1, 2, kGpuReduceMinBytes));
}

// One call of `call` on 2 ranks of a staged world with pieces of `chunkBytes` and the threshold `gpuMinBytes`, its
// queued reductions finishing `delay` polls late; each rank's result checked against the closed form. Returns what
// each rank's queued memory saw.
std::vector<Seen> twoRanksStaged(NetCall call, std::size_t chunkBytes, std::size_t gpuMinBytes, bool inPlace) {
  const int n = 2;
  std::vector<Seen> seen(n);
  const std::vector<Bytes> sends = everySend(call.collective, call.type, n, call.count, call.root);
  std::vector<Bytes> got(n);
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    const auto i = static_cast<std::size_t>(r);
    auto world = worldWith(std::move(p2p), optionsOf(NetPath::Staged, chunkBytes, gpuMinBytes),
                           [&] { return std::make_unique<DeferredMemory>(3, seen[i]); });
    auto group = world->group({0, 1}, "two");
    Bytes send = sends[i];
    got[i].assign(recvElementsOf(call.collective, n, call.count, r, call.root) * dataTypeSize(call.type),
                  std::byte{0x5a});
    if (inPlace) got[i] = send;
    NetCall mine = call;
    mine.send = inPlace ? got[i].data() : send.data();
    mine.recv = got[i].data();
    group->run(mine);
  });
  const std::string what = std::string(collectiveName(call.collective)) + " count " + std::to_string(call.count) +
                           (inPlace ? " in place" : "") + ", pieces of " + std::to_string(chunkBytes) +
                           " B, GPU from " + std::to_string(gpuMinBytes) + " B";
  for (const std::string& error : errors) EXPECT_EQ(error, "") << what;
  const std::vector<Bytes> want =
      coll::hostReduceReference(call.collective, call.type, call.op, n, call.count, call.root, sends);
  const coll::Tolerance tol = coll::tolerance(call.type, call.op, n, 8.0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
    const auto mismatch = coll::findMismatch(call.type, tol, want[r], got[r]);
    EXPECT_FALSE(mismatch) << what << " rank " << r << ": " << *mismatch;
  }
  return seen;
}

TEST(NetQueued, ACallOfSeveralPiecesQueuesEveryPieceOneSmallPieceReducesOnTheHost) {
  // Pieces of 64 B: 52 f32 are pieces of 16, 16, 16 and 4 f32. A one-shot all-reduce on 2 ranks reduces its whole
  // piece on each rank: 64 B of the full pieces, under a threshold of 65 B, yet every piece is queued (finishing
  // late), as with no threshold at all, because the call has several.
  for (const bool inPlace : {false, true}) {
    NetCall call{Collective::AllReduce, 52, DataType::F32, ReduceOp::Sum};
    const std::vector<Seen> all = twoRanksStaged(call, 64, 0, inPlace);
    const std::vector<Seen> several = twoRanksStaged(call, 64, 65, inPlace);
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_GE(all[r].reductions, 3u);
      EXPECT_EQ(several[r].reductions, all[r].reductions);
      EXPECT_EQ(several[r].largest, 16u);
    }
    // One piece (16 f32) with a reduction of 64 B: on the host under the threshold of 65 B, queued from 64 B.
    NetCall one{Collective::AllReduce, 16, DataType::F32, ReduceOp::Sum};
    for (const Seen& s : twoRanksStaged(one, 64, 65, inPlace)) EXPECT_EQ(s.reductions, 0u);
    for (const Seen& s : twoRanksStaged(one, 64, 64, inPlace)) EXPECT_EQ(s.reductions, 1u);
  }
  // Reduce-scatter: a whole block of a piece per rank (16 f32 = 64 B), the last piece's 4 f32: both pieces queued
  // under a threshold above either.
  NetCall scatter{Collective::ReduceScatter, 36, DataType::F32, ReduceOp::Avg};
  for (const Seen& s : twoRanksStaged(scatter, 64, 65, false)) {
    EXPECT_EQ(s.reductions, 3u);
    EXPECT_EQ(s.largest, 16u);
  }
}

TEST(NetQueued, TheMeasuredSizesReduceWhereTheyWereFaster) {
  // The default pieces (4 MiB) and threshold on 2 ranks: a 1 MiB all-reduce (one shot: a reduction of 1 MiB) or a
  // 1 MiB reduce-scatter (512 KiB) on the host, a 4 MiB one (4 MiB, 2 MiB) on the GPU; 5 MiB of all-reduce is two
  // pieces, both on the GPU (its last piece's reduction is 1 MiB). (The threshold was measured on the ring's halves.)
  const std::size_t chunk = NetOptions{}.chunkBytes;
  const std::size_t mib = std::size_t{1} << 20;
  const auto queued = [&](Collective collective, std::size_t count) {
    const std::vector<Seen> seen =
        twoRanksStaged({collective, count, DataType::F32, ReduceOp::Sum}, chunk, kGpuReduceMinBytes, false);
    EXPECT_EQ(seen[0].reductions, seen[1].reductions);
    return seen[0].reductions;
  };
  EXPECT_EQ(queued(Collective::AllReduce, mib / 4), 0u);
  EXPECT_EQ(queued(Collective::AllReduce, mib), 1u);
  EXPECT_EQ(queued(Collective::AllReduce, 5 * mib / 4), 2u);
  EXPECT_EQ(queued(Collective::ReduceScatter, mib / 8), 0u);
  EXPECT_EQ(queued(Collective::ReduceScatter, mib / 2), 1u);
}

TEST(NetQueued, EveryCollectiveRightWithCallsOnBoth) {
  // Pieces of 64 B on 3 ranks, queued from 32 B a reduction: the calls of one piece reduce on the host, the longer
  // ones queue theirs. The queued memory takes some reductions but not all.
  const auto queuedWith = [](std::size_t gpuMinBytes) {
    std::mutex mutex;
    std::deque<Seen> seen;
    everyCollective(
        NetPath::Staged,
        [&] {
          std::lock_guard<std::mutex> lock(mutex);
          return std::make_unique<DeferredMemory>(2, seen.emplace_back());
        },
        gpuMinBytes);
    std::size_t reductions = 0;
    for (const Seen& s : seen) reductions += s.reductions;
    return reductions;
  };
  const std::size_t all = queuedWith(0);
  const std::size_t some = queuedWith(32);
  EXPECT_GT(some, 0u);
  EXPECT_LT(some, all);
}

TEST(NetQueued, AReductionThatNeverFinishesIsNamedAtTheDeadline) {
  std::vector<Seen> seen(2);
  const auto start = std::chrono::steady_clock::now();
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    const auto i = static_cast<std::size_t>(r);
    NetOptions options = optionsOf(NetPath::Staged, 64);
    options.timeout = std::chrono::milliseconds(300);
    auto world = worldWith(std::move(p2p), options, [&] { return std::make_unique<DeferredMemory>(-1, seen[i]); });
    auto group = world->group({0, 1}, "two");
    std::vector<float> data(16, 1.0f);
    try {
      group->allReduce(data.data(), data.data(), 16, DataType::F32, ReduceOp::Sum);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::Timeout) << error.what();
      EXPECT_NE(world->brokenBy(), "");
      throw;
    }
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  for (int r = 0; r < 2; ++r) {
    const std::string& error = errors[static_cast<std::size_t>(r)];
    EXPECT_NE(error.find("nothing within 300 ms"), std::string::npos) << error;
    EXPECT_NE(error.find("computation(s) queued here"), std::string::npos) << error;
    // The broken world kept the memory its queued work writes into.
    EXPECT_TRUE(seen[static_cast<std::size_t>(r)].leaked);
  }
}

// Copies that run only when polled, one per poll, in the order queued, as a slow copy engine's: a call that leaves
// its copies out queued (NetOptions::copiesOutInStreamOrder) returns with them pending. Records any memory freed
// while a pending copy still reads or writes it.
class DeferredCopies final : public DeviceAccess {
 public:
  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back({dst, src, bytes});
  }
  std::uint64_t mark() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ + pending_.size();
  }
  bool reached(std::uint64_t marker) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_ < marker && !pending_.empty()) runOne();
    return done_ >= marker;
  }
  void* allocateHost(std::size_t bytes) override {
    void* memory = ::operator new(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[memory] = bytes;
    return memory;
  }
  void freeHost(void* memory) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* begin = static_cast<const std::byte*>(memory);
    const auto* end = begin + sizes_[memory];
    const auto inside = [&](const void* address) {
      const auto* a = static_cast<const std::byte*>(address);
      return a >= begin && a < end;
    };
    for (const Copy& copy : pending_) {
      if (inside(copy.dst) || inside(copy.src)) ++freedUnderCopy_;
    }
    sizes_.erase(memory);
    ::operator delete(memory);
  }
  std::size_t pending() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.size();
  }
  /// What the caller's stream waiting for the copies stands for: every pending copy run.
  void drain() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!pending_.empty()) runOne();
  }
  int freedUnderCopy() {
    std::lock_guard<std::mutex> lock(mutex_);
    return freedUnderCopy_;
  }

 private:
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  void runOne() {
    const Copy copy = pending_.front();
    pending_.pop_front();
    std::memmove(copy.dst, copy.src, copy.bytes);
    ++done_;
  }
  std::mutex mutex_;
  std::deque<Copy> pending_;
  std::map<void*, std::size_t> sizes_;  // the pinned memory handed out
  std::uint64_t done_ = 0;
  int freedUnderCopy_ = 0;
};

// A call returns with its copies out still queued; the next call's pieces run only once those are done (they precede
// its copies in on the one queue), so neither call's results are overwritten; slots that grow wait for them first.
TEST(NetQueued, CopiesOutLeftQueuedNeverMeetALaterCall) {
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsOf(NetPath::Staged, 64);
    options.copiesOutInStreamOrder = true;
    auto copies = std::make_unique<DeferredCopies>();
    DeferredCopies& device = *copies;
    NetWorld world(std::move(p2p), options, std::move(copies), std::make_unique<HostMemory>());
    auto group = world.group({0, 1}, "two");
    const std::size_t count = 16 * 2 * StagingSlots::kSlots;  // pieces of 16 floats, every slot used twice
    std::vector<float> send1(count, 1.0f + static_cast<float>(r)), recv1(count, 0.0f);
    std::vector<float> send2(count, 10.0f * static_cast<float>(r + 1)), recv2(count, 0.0f);
    group->allReduce(send1.data(), recv1.data(), count, DataType::F32, ReduceOp::Sum);
    ASSERT_GT(device.pending(), 0u) << "the call waited for its copies out";
    group->allReduce(send2.data(), recv2.data(), count, DataType::F32, ReduceOp::Sum);
    // Larger: the slots grow, after the copies out of them.
    std::vector<float> send3(4 * count, 100.0f), recv3(4 * count, 0.0f);
    group->allGather(send3.data(), recv3.data(), 2 * count, DataType::F32);
    device.drain();
    for (float value : recv1) ASSERT_EQ(value, 3.0f);
    for (float value : recv2) ASSERT_EQ(value, 30.0f);
    for (float value : recv3) ASSERT_EQ(value, 100.0f);
    EXPECT_EQ(device.freedUnderCopy(), 0);
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
}

}  // namespace
}  // namespace peerlink::net
