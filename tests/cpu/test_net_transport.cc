// The transport between nodes (src/net/) over loopbackWorld, one thread per rank: every collective of a group,
// staged (pieces through pinned-memory slots, the copies pipelined) and direct, against the closed forms; send/recv
// groups; whole hierarchical plans run by runHierarchical on worlds of 2 x 2 and 3 x 2 "nodes" (PEERLINK_HOSTID
// per thread); deadlines that name the silent rank, a lost peer, a broken world; the pure decisions (path, nodes,
// the MPI library's places and requirements).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "coll/hierarchical_plan.hpp"
#include "coll/host_reduce.hpp"
#include "coll_lists.hpp"
#include "core/cpu_affinity.hpp"
#include "net/hierarchical_run.hpp"
#include "net/mpi_abi.h"
#include "net/mpi_library.hpp"
#include "net/net_path.hpp"
#include "net/net_world.hpp"
#include "net_loopback_support.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;
using testing::everySend;
using testing::onEveryRank;

NetOptions optionsFor(const std::string& host, NetPath path, std::size_t chunkBytes = 64) {
  NetOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  options.chunkBytes = chunkBytes;
  options.path = path;
  options.identity.hostId = host;
  return options;
}

std::unique_ptr<NetWorld> makeWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options) {
  return std::make_unique<NetWorld>(std::move(p2p), std::move(options), hostDeviceAccess(),
                                    std::make_unique<HostMemory>());
}

struct GroupCase {
  Collective collective;
  NetPath path;
  bool inPlace;
};

// One group call on every rank of a loopback world of 3, with pieces of 64 bytes (several per block).
std::vector<std::string> runGroupCase(const GroupCase& c, DataType type, ReduceOp op, std::size_t count,
                                      std::vector<Bytes>& results) {
  const int n = 3;
  const int root = 1;
  const std::vector<Bytes> sends = everySend(c.collective, type, n, count, root);
  results.assign(n, Bytes());
  const std::size_t size = dataTypeSize(type);
  return onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = makeWorld(std::move(p2p), optionsFor("one", c.path));
    const Bytes& mine = sends[static_cast<std::size_t>(r)];
    Bytes recv(recvElementsOf(c.collective, n, count, r, root) * size, std::byte{0x5a});
    Bytes send = mine;
    const void* sendPointer = send.data();
    if (c.inPlace) {
      // The API's in-place forms: one buffer, the send data where the API puts it.
      switch (c.collective) {
        case Collective::AllGather:
          if (!mine.empty()) {
            std::memcpy(recv.data() + static_cast<std::size_t>(r) * count * size, mine.data(), mine.size());
          }
          sendPointer = recv.data() + static_cast<std::size_t>(r) * count * size;
          break;
        case Collective::ReduceScatter:
          recv = send;
          sendPointer = recv.data();
          break;
        default:
          // Broadcast and reduce are in place at the root only (the others have no recv or no send).
          if (recv.empty() || mine.empty()) break;
          std::memcpy(recv.data(), mine.data(), mine.size());
          sendPointer = recv.data();
      }
    }
    auto group = world->group({0, 1, 2}, "three");
    void* recvPointer = recv.data();
    if (c.inPlace && c.collective == Collective::ReduceScatter) {
      recvPointer = recv.data() + static_cast<std::size_t>(r) * count * size;
    }
    group->run({c.collective, count, type, op, 0, root, sendPointer, recvPointer});
    if (c.inPlace && c.collective == Collective::ReduceScatter) {
      recv = Bytes(recv.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * count * size),
                   recv.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(r) + 1) * count * size));
    }
    results[static_cast<std::size_t>(r)] = std::move(recv);
  });
}

TEST(NetTransport, EveryCollectiveOfAGroupMatchesTheClosedForm) {
  const Collective collectives[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                    Collective::Broadcast, Collective::Reduce,    Collective::AllToAll};
  int runs = 0;
  for (Collective collective : collectives) {
    for (NetPath path : {NetPath::Staged, NetPath::Direct}) {
      for (bool inPlace : {false, true}) {
        if (inPlace && collective == Collective::AllToAll) continue;
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{100}}) {
          for (const auto& [type, op] :
               {std::pair{DataType::F32, ReduceOp::Sum}, std::pair{DataType::I32, ReduceOp::Max},
                std::pair{DataType::F16, ReduceOp::Avg}}) {
            std::vector<Bytes> got;
            const std::vector<std::string> errors = runGroupCase({collective, path, inPlace}, type, op, count, got);
            for (const std::string& error : errors) ASSERT_EQ(error, "");
            const std::vector<Bytes> want =
                coll::hostReduceReference(collective, type, op, 3, count, 1, everySend(collective, type, 3, count, 1));
            const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, 3, 8.0) : coll::Tolerance{};
            for (int r = 0; r < 3; ++r) {
              if (want[static_cast<std::size_t>(r)].empty()) continue;  // reduce off the root
              const auto mismatch =
                  coll::findMismatch(type, tol, want[static_cast<std::size_t>(r)], got[static_cast<std::size_t>(r)]);
              ASSERT_FALSE(mismatch) << collectiveName(collective) << ' ' << netPathName(path)
                                     << (inPlace ? " in place" : "") << " count " << count << ' ' << dataTypeName(type)
                                     << " rank " << r << ": " << *mismatch;
            }
            ++runs;
          }
        }
      }
    }
  }
  RecordProperty("runs", runs);
}

TEST(NetTransport, SendRecvGroupsIncludingToItself) {
  for (NetPath path : {NetPath::Staged, NetPath::Direct}) {
    std::vector<std::vector<float>> got(3);
    const auto errors = onEveryRank(3, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      auto world = makeWorld(std::move(p2p), optionsFor("one", path, 16));
      auto group = world->group({0, 1, 2}, "three");
      // Each rank sends 10 values to the next and 3 to itself, receives from the one before and from itself.
      std::vector<float> toNext(10);
      std::vector<float> toSelf(3);
      for (int i = 0; i < 10; ++i) toNext[static_cast<std::size_t>(i)] = static_cast<float>(r * 100 + i);
      for (int i = 0; i < 3; ++i) toSelf[static_cast<std::size_t>(i)] = static_cast<float>(-r - i);
      std::vector<float> in(13, 0);
      group->sendRecv({{false, r, in.data() + 10, 3},
                       {true, (r + 1) % 3, toNext.data(), 10},
                       {false, (r + 2) % 3, in.data(), 10},
                       {true, r, toSelf.data(), 3}},
                      DataType::F32);
      got[static_cast<std::size_t>(r)] = in;
    });
    for (const std::string& error : errors) ASSERT_EQ(error, "");
    for (int r = 0; r < 3; ++r) {
      const int from = (r + 2) % 3;
      for (int i = 0; i < 10; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)], from * 100 + i);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(got[static_cast<std::size_t>(r)][10 + static_cast<std::size_t>(i)], -r - i);
    }
  }
}

// Whole hierarchical collectives: ranks 0-1 on host "a", 2-3 on "b" (and 4-5 on "c"), in-node calls over the
// transport too, every collective in place and out of place, against the closed forms.
TEST(NetTransport, HierarchicalPlansEndToEnd) {
  for (const coll::NodeGrid grid : {coll::NodeGrid{2, 2}, coll::NodeGrid{3, 2}}) {
    for (Collective collective : kEveryCollective) {
      for (bool inPlace : {false, true}) {
        if (inPlace && (collective == Collective::AllToAll || collective == Collective::SendRecv)) continue;
        const int n = grid.size();
        const std::size_t count = 45;
        const int root = n - 1;
        const DataType type = DataType::F32;
        const ReduceOp op = ReduceOp::Avg;
        const coll::HierarchicalPlan h = coll::buildHierarchicalPlan(collective, grid, count, root, inPlace, 0, type);
        const std::vector<Bytes> sends = everySend(collective, type, n, count, root);
        std::vector<Bytes> got(static_cast<std::size_t>(n));
        const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
          auto world =
              makeWorld(std::move(p2p), optionsFor(std::string(1, static_cast<char>('a' + r / 2)), NetPath::Staged));
          got[static_cast<std::size_t>(r)] = testing::runRankOfPlan(*world, h, op, sends);
        });
        for (const std::string& error : errors) ASSERT_EQ(error, "") << collectiveName(collective);
        const std::vector<Bytes> want = coll::hostReduceReference(collective, type, op, n, count, root, sends);
        const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
        for (int r = 0; r < n; ++r) {
          const auto mismatch =
              coll::findMismatch(type, tol, want[static_cast<std::size_t>(r)], got[static_cast<std::size_t>(r)]);
          ASSERT_FALSE(mismatch) << collectiveName(collective) << (inPlace ? " in place" : "") << " on " << grid.nodes
                                 << "x" << grid.ranksPerNode << " rank " << r << ": " << *mismatch;
        }
      }
    }
  }
}

// Records when copies are queued, "in" (into the pinned memory it allocated) or "out", and messages posted, with
// their tags (each piece in flight has its own).
class RecordingDevice final : public DeviceAccess {
 public:
  explicit RecordingDevice(std::vector<std::string>& log, std::mutex& mutex) : log_(log), mutex_(mutex) {}
  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    std::memmove(dst, src, bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(pinnedHolds(dst) ? "in" : "out");
  }
  std::uint64_t mark() override { return 0; }
  bool reached(std::uint64_t) override { return true; }
  void* allocateHost(std::size_t bytes) override {
    void* memory = ::operator new(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    pinned_.push_back(memory);
    sizes_.push_back(bytes);
    return memory;
  }
  void freeHost(void* memory) noexcept override { ::operator delete(memory); }

 private:
  bool pinnedHolds(const void* address) const {
    for (std::size_t i = 0; i < pinned_.size(); ++i) {
      const auto* begin = static_cast<const std::byte*>(pinned_[i]);
      if (address >= begin && address < begin + sizes_[i]) return true;
    }
    return false;
  }
  std::vector<std::string>& log_;
  std::mutex& mutex_;
  std::vector<void*> pinned_;
  std::vector<std::size_t> sizes_;
};

class RecordingP2P final : public PointToPoint {
 public:
  RecordingP2P(std::unique_ptr<PointToPoint> inner, std::vector<std::string>& log, std::mutex& mutex)
      : inner_(std::move(inner)), log_(log), mutex_(mutex) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  int maxTag() const override { return inner_->maxTag(); }
  Request isend(int peer, int tag, const void* data, std::size_t bytes) override {
    record("send " + std::to_string(tag));
    return inner_->isend(peer, tag, data, bytes);
  }
  Request irecv(int peer, int tag, void* data, std::size_t bytes) override {
    record("recv " + std::to_string(tag));
    return inner_->irecv(peer, tag, data, bytes);
  }
  bool test(Request request, std::size_t* received) override { return inner_->test(request, received); }
  void abandon(Request request) noexcept override { inner_->abandon(request); }

 private:
  void record(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(what);
  }
  std::unique_ptr<PointToPoint> inner_;
  std::vector<std::string>& log_;
  std::mutex& mutex_;
};

TEST(NetTransport, StagedPiecesOverlapCopiesWithMessages) {
  std::vector<std::vector<std::string>> logs(2);
  std::vector<std::mutex> mutexes(2);
  const std::size_t pieces = 2 * StagingSlots::kSlots;
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    const auto i = static_cast<std::size_t>(r);
    auto recording = std::make_unique<RecordingP2P>(std::move(p2p), logs[i], mutexes[i]);
    NetWorld world(std::move(recording), optionsFor("one", NetPath::Staged, 64),
                   std::make_unique<RecordingDevice>(logs[i], mutexes[i]), std::make_unique<HostMemory>());
    auto group = world.group({0, 1}, "two");
    std::vector<float> send(16 * pieces, 1.0f), recv(16 * pieces, 0.0f);  // pieces of 16
    {
      std::lock_guard<std::mutex> lock(mutexes[i]);
      logs[i].clear();  // what the identities' all-gather posted
    }
    group->allReduce(send.data(), recv.data(), 16 * pieces, DataType::F32, ReduceOp::Sum);
    for (float value : recv) ASSERT_EQ(value, 2.0f);
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
  // Every slot's piece is copied in before the first message; kPiecesInFlight pieces (tags) post messages before
  // the first result is copied out; a slot's next piece is copied in only after the piece before it copied out.
  const std::vector<std::string>& log = logs[0];
  ASSERT_GE(log.size(), StagingSlots::kSlots + 1);
  for (std::size_t i = 0; i < StagingSlots::kSlots; ++i) EXPECT_EQ(log[i], "in") << i;
  EXPECT_NE(log[StagingSlots::kSlots], "in");
  const auto firstOut = std::find(log.begin(), log.end(), "out");
  std::set<std::string> tags;
  for (auto entry = log.begin(); entry != firstOut; ++entry) {
    if (*entry != "in") tags.insert(entry->substr(entry->find(' ') + 1));
  }
  EXPECT_EQ(tags.size(), kPiecesInFlight);
  const auto laterIn = std::find(log.begin() + StagingSlots::kSlots, log.end(), "in");
  EXPECT_LT(firstOut, laterIn);
  EXPECT_EQ(static_cast<std::size_t>(std::count(log.begin(), log.end(), "in")), pieces);
  EXPECT_EQ(static_cast<std::size_t>(std::count(log.begin(), log.end(), "out")), pieces);
}

TEST(NetTransport, ASilentRankIsNamedWithinTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> done{false};
  const auto errors = onEveryRank(3, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsFor("one", NetPath::Staged);
    options.timeout = std::chrono::milliseconds(300);
    auto world = makeWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    std::vector<float> data(16, 1.0f);
    if (r == 2) {  // never calls; stays until the others gave up
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return;
    }
    try {
      group->allReduce(data.data(), data.data(), 16, DataType::F32, ReduceOp::Sum);
    } catch (...) {
      if (r == 0) done = true;
      throw;
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 3.0);
  for (int r = 0; r < 2; ++r) {
    const std::string& error = errors[static_cast<std::size_t>(r)];
    EXPECT_NE(error.find("net all_reduce of three on rank " + std::to_string(r)), std::string::npos) << error;
    EXPECT_NE(error.find("nothing within 300 ms"), std::string::npos) << error;
  }
  // Rank 0 waits on rank 2 in the ring's first step: named with its host and pid (rank 1 then waits on rank 0).
  EXPECT_NE(errors[0].find("from rank 2 (host "), std::string::npos) << errors[0];
}

TEST(NetTransport, ALostPeerFailsTheCallAtOnceAndBreaksTheWorld) {
  const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = makeWorld(std::move(p2p), optionsFor("one", NetPath::Staged));
    if (r == 1) return;  // leaves
    world->peerLost(1, "rank 1 (host b, pid 7) exited: its bootstrap connection closed without a goodbye");
    auto group = world->group({0, 1}, "two");
    std::vector<float> data(4, 1.0f);
    const auto start = std::chrono::steady_clock::now();
    try {
      group->allReduce(data.data(), data.data(), 4, DataType::F32, ReduceOp::Sum);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::RemoteError);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      EXPECT_NE(std::string(error.what()).find("rank 1 (host b, pid 7) exited"), std::string::npos) << error.what();
      EXPECT_NE(world->brokenBy().find("rank 1 (host b, pid 7) exited"), std::string::npos);
      try {
        group->allReduce(data.data(), data.data(), 4, DataType::F32, ReduceOp::Sum);
      } catch (const Error& again) {
        EXPECT_NE(std::string(again.what()).find("cannot be used again"), std::string::npos) << again.what();
        return;
      }
    }
    ADD_FAILURE() << "expected errors";
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
}

TEST(NetTransport, BadCallsAreNamedAndLeaveTheWorldUsable) {
  const auto errors = onEveryRank(2, [&](int, std::unique_ptr<PointToPoint> p2p) {
    auto world = makeWorld(std::move(p2p), optionsFor("one", NetPath::Staged));
    auto group = world->group({0, 1}, "two");
    std::vector<float> data(4, 1.0f);
    EXPECT_THROW(group->broadcast(data.data(), data.data(), 4, DataType::F32, 2), Error);
    EXPECT_THROW(group->allReduce(nullptr, data.data(), 4, DataType::F32, ReduceOp::Sum), Error);
    EXPECT_EQ(world->brokenBy(), "");
    group->allReduce(data.data(), data.data(), 4, DataType::F32, ReduceOp::Sum);
    EXPECT_EQ(data[0], 2.0f);
    EXPECT_THROW(world->group({5}, "stranger"), Error);
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
}

TEST(NetTransport, WorldKnowsItsNodesRailsAndPeers) {
  const auto errors = onEveryRank(4, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    auto world = makeWorld(std::move(p2p), optionsFor(r < 2 ? "a" : "b", NetPath::Staged));
    const coll::NodeGrid grid = world->grid();
    EXPECT_EQ(grid.nodes, 2);
    EXPECT_EQ(grid.ranksPerNode, 2);
    EXPECT_EQ(world->node().members(), (r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}));
    EXPECT_EQ(world->rail().members(), (r % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3}));
    EXPECT_NE(world->describe(3).find("rank 3 (host "), std::string::npos);
    EXPECT_EQ(world->peers()[3].pid, world->peers()[0].pid);  // threads of one process
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
}

// How many of this process's threads may run on exactly `cpus` (/proc/self/task/*/status).
int threadsAllowedOn(const std::string& cpus) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) count += line.substr(line.find_first_not_of(" \t", 18)) == cpus;
    }
  }
  return count;
}

// The progress thread binds itself where NetOptions::progressCpus says (the communicator decides it near the GPU)
// before its first call: the world's creation is such a call.
TEST(NetTransport, TheProgressThreadRunsWhereItsOptionsSay) {
  const CpuSet allowed = currentThreadCpus();
  if (allowed.size() < 2) GTEST_SKIP() << "this process may run on one CPU only (" << allowed.toList() << ")";
  const std::string last = std::to_string(allowed.cpus().back());
  const int before = threadsAllowedOn(last);
  const auto errors = onEveryRank(1, [&](int, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsFor("a", NetPath::Staged);
    options.progressCpus = CpuSet({allowed.cpus().back()});
    auto world = makeWorld(std::move(p2p), options);
    EXPECT_EQ(threadsAllowedOn(last), before + 1);
  });
  for (const std::string& error : errors) ASSERT_EQ(error, "");
  EXPECT_EQ(threadsAllowedOn(last), before);  // gone with its world
}

PeerIdentity peer(int rank, std::uint64_t host, const std::string& name) {
  return PeerIdentity{rank, host, name, 100 + rank, 0};
}

// The staged path's copy out makes a rank's copies of its own send data into its own recv buffer, where no later
// step reads or overwrites them; the plan keeps everything else.
TEST(NetDecisions, LocalCopiesLeaveThePlanForTheCopyOut) {
  const std::size_t count = 100;
  const auto transfers = [](const coll::Plan& plan) {
    std::size_t n = 0;
    for (const coll::Step& step : plan.steps) n += step.transfers.size();
    return n;
  };
  for (int r = 0; r < 3; ++r) {
    coll::Plan gather = callPlan({Collective::AllGather, count, DataType::F32}, 3, count);
    const std::size_t before = transfers(gather);
    const std::vector<LocalCopy> own = takeLocalCopies(gather, r);
    ASSERT_EQ(own.size(), 1u) << r;
    EXPECT_EQ(own[0].input, 0u);
    EXPECT_EQ(own[0].output, static_cast<std::size_t>(r) * count);
    EXPECT_EQ(own[0].count, count);
    EXPECT_EQ(transfers(gather), before - 1);

    coll::Plan toAll = callPlan({Collective::AllToAll, count, DataType::F32}, 3, count);
    const std::vector<LocalCopy> self = takeLocalCopies(toAll, r);
    ASSERT_EQ(self.size(), 1u) << r;
    EXPECT_EQ(self[0].input, static_cast<std::size_t>(r) * count);
    EXPECT_EQ(self[0].output, static_cast<std::size_t>(r) * count);

    coll::Plan reduce = callPlan({Collective::AllReduce, count, DataType::F32}, 3, count);
    EXPECT_TRUE(takeLocalCopies(reduce, r).empty());

    NetCall broadcast{Collective::Broadcast, count, DataType::F32};
    broadcast.root = 1;
    coll::Plan fromRoot = callPlan(broadcast, 3, count);
    EXPECT_EQ(takeLocalCopies(fromRoot, r).size(), r == 1 ? 1u : 0u) << r;
  }
  // A copy whose destination a later step reads (rank 1 takes rank 0's output) stays in the plan.
  coll::Plan plan;
  plan.nranks = 2;
  plan.type = DataType::F32;
  plan.ranks.resize(2);
  plan.steps.resize(2);
  plan.steps[0].transfers.push_back(
      {0, coll::TransferKind::Copy, {0, coll::BufferKind::Output, 0}, {{0, coll::BufferKind::Input, 0}}, 8, false});
  plan.steps[1].transfers.push_back(
      {1, coll::TransferKind::Copy, {1, coll::BufferKind::Output, 0}, {{0, coll::BufferKind::Output, 4}}, 2, false});
  EXPECT_TRUE(takeLocalCopies(plan, 0).empty());
  EXPECT_EQ(plan.steps[0].transfers.size(), 1u);
}

TEST(NetDecisions, NodesFromHostIds) {
  const coll::NodeGrid grid = nodeGridOf({peer(0, 1, "a"), peer(1, 1, "a"), peer(2, 2, "b"), peer(3, 2, "b")});
  EXPECT_EQ(grid.nodes, 2);
  EXPECT_EQ(grid.ranksPerNode, 2);
  try {
    nodeGridOf({peer(0, 1, "a"), peer(1, 1, "a"), peer(2, 2, "b")});
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "host b has 1 ranks, host a 2: collectives across nodes need the same number of ranks "
                 "on every node");
  }
  try {
    nodeGridOf({peer(0, 1, "a"), peer(1, 2, "b"), peer(2, 1, "a"), peer(3, 2, "b")});
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "rank 1 is on host b, but ranks 0-1 should all be on host a: start ranks grouped by "
                 "node (mpirun --map-by slot, srun --distribution=block)");
  }
}

TEST(NetDecisions, PathFollowsTheMpisCudaAwareness) {
  PathFacts facts;
  facts.mpiName = "Open MPI v4.1.6";
  facts.mpiCudaSupport = 0;
  PathChoice choice = choosePath(facts);
  EXPECT_EQ(choice.path, NetPath::Staged);
  EXPECT_EQ(choice.reason, "Open MPI v4.1.6 is not CUDA-aware (its own query says so): through pinned host memory");
  EXPECT_FALSE(wantsStartupCheck(facts));
  facts.mpiCudaSupport = 1;
  EXPECT_TRUE(wantsStartupCheck(facts));
  EXPECT_EQ(choosePath(facts).path, NetPath::Staged);  // the check has not run
  facts.startupCheck = 0;
  EXPECT_NE(choosePath(facts).reason.find("arrived wrong"), std::string::npos);
  facts.startupCheck = 1;
  EXPECT_EQ(choosePath(facts).path, NetPath::Direct);
  facts.setting = "OFF";
  EXPECT_EQ(choosePath(facts).path, NetPath::Staged);
  EXPECT_FALSE(wantsStartupCheck(facts));
  facts.setting = "ON";
  facts.mpiCudaSupport = -1;
  try {
    choosePath(facts);
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(error.what()).find("cannot say whether it is CUDA-aware"), std::string::npos);
  }
  facts.callerMemoryIsHost = true;
  EXPECT_EQ(choosePath(facts).path, NetPath::Direct);
}

TEST(NetDecisions, TheStartupCheckSendsToItself) {
  const auto errors = onEveryRank(1, [&](int, std::unique_ptr<PointToPoint> p2p) {
    auto device = hostDeviceAccess();
    std::vector<unsigned char> a(100), b(100);
    EXPECT_TRUE(checkDirectPath(*p2p, *device, a.data(), b.data(), a.size(), std::chrono::milliseconds(1000)));
    EXPECT_EQ(a, b);
  });
  ASSERT_EQ(errors[0], "");
}

TEST(NetDecisions, MpiLibraryPlacesAndRequirements) {
  EXPECT_EQ(mpiLibraryCandidates("/opt/x/libpeerlink_mpi.so", "/usr/bin"),
            (std::vector<std::string>{"/opt/x/libpeerlink_mpi.so"}));
  EXPECT_EQ(mpiLibraryCandidates("", "/usr/bin"),
            (std::vector<std::string>{"/usr/bin/libpeerlink_mpi.so", "/usr/bin/../lib/libpeerlink_mpi.so",
                                      "libpeerlink_mpi.so"}));
  MpiFacts facts;
  facts.library = "Open MPI v4.1.4";
  EXPECT_EQ(mpiUnusableReason(facts),
            "MPI is not initialized (Open MPI v4.1.4): call MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, "
            "&provided) before the transport between nodes is made, and finalize MPI after it is destroyed");
  facts.initialized = true;
  facts.threadLevel = PEERLINK_MPI_THREAD_SERIALIZED;
  EXPECT_NE(mpiUnusableReason(facts).find("MPI was initialized with MPI_THREAD_SERIALIZED (Open MPI v4.1.4)"),
            std::string::npos);
  facts.threadLevel = PEERLINK_MPI_THREAD_MULTIPLE;
  EXPECT_EQ(mpiUnusableReason(facts), "");
  Params params;
  params.set("PEERLINK_MPI_LIBRARY", "/nonexistent/libpeerlink_mpi.so");
  try {
    mpiFacts(params);
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("needs libpeerlink_mpi.so"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("/nonexistent/libpeerlink_mpi.so: "), std::string::npos);
  }
}

}  // namespace
}  // namespace peerlink::net
