// Queued calls of the transport (NetGroup::prepareQueued / startQueued) as a communicator makes them, over a loopback
// world: the caller's stream and the transport's copy stream stand-ins (net_stand_in_stream.hpp). Calls of several
// pieces among async calls on one stream in order, each reading what the one before wrote; the order of a queued
// call's device side; which calls may be queued; queued calls that fail, or never run in a broken world, let their
// copy streams run through (their waits compared cyclically, as CUDA's); a queued call, or send/recv group, meets the
// same waiting on the host on another rank; slots keep what a broken world outgrows.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_reduce.hpp"
#include "net/net_world.hpp"
#include "net_loopback_support.hpp"
#include "net_stand_in_stream.hpp"
#include "net_test_data.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

using stand_ins::DeviceWithStagedMemory;
using stand_ins::hostWorld;
using stand_ins::optionsWith;
using stand_ins::queueAsync;
using stand_ins::queueDeviceSide;
using stand_ins::queueQueued;
using stand_ins::StandInStream;
using testing::onEveryRank;

// On 3 ranks, one stream each, a chain of calls where each reads what the one before wrote: an in-place all-reduce of
// 5000 i32 queued (pieces of 4 KiB: five, slots reused within the call), the stream copying its first 8 elements into
// a small buffer, a small async all-reduce of that buffer, the stream copying it back, a queued broadcast of the whole
// buffer from the round's root; four rounds. Any call that read its input early, or whose results the stream read
// before they were there, breaks the chain. The same on 2 ranks where the device reduces: the all-reduces one shot,
// their copies out reducing.
TEST(NetQueuedCall, QueuedAndAsyncCallsOnOneStreamKeepItsOrder) {
  struct World {
    int n;
    bool onDevice;
  };
  for (const World w : {World{3, false}, World{2, true}}) {
    const int n = w.n;
    const std::string where = std::to_string(n) + " ranks" + (w.onDevice ? ", the device reducing" : "");
    const std::size_t count = 5000;
    const std::size_t small = 8;
    const int rounds = 4;
    std::vector<std::vector<std::int32_t>> got(n);
    // The closed form: the all-reduce makes every rank's buffer the sum; the small all-reduce multiplies the first
    // elements by n; the broadcast changes nothing then (every rank holds the same).
    std::vector<std::int64_t> want(count);
    for (std::size_t i = 0; i < count; ++i) {
      std::int64_t v = 0;
      for (int r = 0; r < n; ++r) v += r * 1000 + static_cast<std::int64_t>(i % 97);
      want[i] = v;
    }
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < count; ++i) {
        if (round > 0) want[i] *= n;  // the all-reduce of equal buffers
        if (i < small) want[i] *= n;
      }
    }
    std::vector<int> stuck(n, 0);
    const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(5000));
      options.chunkBytes = 4096;
      std::unique_ptr<DeviceAccess> device =
          w.onDevice ? std::make_unique<DeviceWithStagedMemory>() : hostDeviceAccess();
      auto world =
          std::make_unique<NetWorld>(std::move(p2p), options, std::move(device), std::make_unique<HostMemory>());
      std::vector<int> members;
      for (int m = 0; m < n; ++m) members.push_back(m);
      auto group = world->group(members, "group");
      std::vector<std::int32_t>& buffer = got[static_cast<std::size_t>(r)];
      buffer.resize(count);
      for (std::size_t i = 0; i < count; ++i) buffer[i] = r * 1000 + static_cast<std::int32_t>(i % 97);
      std::vector<std::int32_t> first(small, -1);
      StandInStream stream;
      StandInStream copyStream;
      const std::size_t bytes = small * sizeof(std::int32_t);
      for (int round = 0; round < rounds; ++round) {
        const NetCall whole{Collective::AllReduce, count,        DataType::I32, ReduceOp::Sum, 0, 0,
                            buffer.data(),         buffer.data()};
        ASSERT_TRUE(group->queuedFits(whole));
        ASSERT_FALSE(group->asyncFits(whole));  // more than one piece
        queueQueued(*group, stream, copyStream, whole);
        stream.copies({{first.data(), buffer.data(), bytes}});
        queueAsync(*group, stream,
                   {Collective::AllReduce, small, DataType::I32, ReduceOp::Sum, 0, 0, first.data(), first.data()});
        stream.copies({{buffer.data(), first.data(), bytes}});
        queueQueued(
            *group, stream, copyStream,
            {Collective::Broadcast, count, DataType::I32, ReduceOp::Sum, 0, round % n, buffer.data(), buffer.data()});
      }
      stream.drain();
      stuck[static_cast<std::size_t>(r)] = stream.stuck() + copyStream.stuck();
      EXPECT_EQ(world->brokenBy(), "");
    });
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      EXPECT_EQ(errors[i], "") << where << ", rank " << r;
      EXPECT_EQ(stuck[i], 0) << where << ", rank " << r;
      std::size_t wrong = 0;
      std::string firstWrong;
      for (std::size_t k = 0; k < count; ++k) {
        if (got[i][k] == want[k]) continue;
        if (wrong++ == 0) {
          firstWrong =
              "element " + std::to_string(k) + ": " + std::to_string(got[i][k]) + ", want " + std::to_string(want[k]);
        }
      }
      EXPECT_EQ(wrong, 0u) << where << ", rank " << r << ", first " << firstWrong;
    }
  }
}

// The device side of a call of 6 pieces over 4 slots: each piece copied in into slot p % 4 only once the slot's last
// piece was ready and copied out; every piece copied out once ready; the device's computations of a piece, where it
// has any, just before the wait for it to be ready; its reductions as it copies out, after its copies out.
TEST(NetQueuedCall, DeviceSideReusesASlotOnlyOnceItsLastPieceIsOut) {
  using Kind = QueuedDeviceOp::Kind;
  std::vector<std::vector<SlotCopy>> in, out;
  std::vector<std::uint64_t> tickets;
  std::vector<TicketRange> computations;
  std::byte caller[6], slot[4];
  std::uint64_t next = 100;
  for (std::size_t p = 0; p < 6; ++p) {
    in.push_back({{&slot[p % 4], &caller[p], 1}});
    out.push_back({{&caller[p], &slot[p % 4], 1}});
    tickets.push_back(10 + p);
    computations.push_back({next, p % 3});
    next += p % 3;
  }
  const auto orderOf = [&](const std::vector<QueuedDeviceOp>& ops) {
    std::string order;
    for (const QueuedDeviceOp& op : ops) {
      switch (op.kind) {
        case Kind::Copy: {
          const auto* src = static_cast<const std::byte*>(op.copy.src);
          const bool fromSlot = src >= slot && src < slot + 4;  // a copy out, to the caller
          order += fromSlot ? "out" + std::to_string(static_cast<const std::byte*>(op.copy.dst) - caller)
                            : "in" + std::to_string(src - caller);
          break;
        }
        case Kind::AwaitReady: order += "ready" + std::to_string(op.ticket - 10); break;
        case Kind::Copied: order += "copied" + std::to_string(op.ticket - 10); break;
        case Kind::Compute: order += "compute" + std::to_string(op.ticket - 100); break;
        case Kind::Reduce:
          order += "reduce" + std::to_string(static_cast<const std::byte*>(op.reduction.dst) - caller) + "/" +
                   std::to_string(op.divisor);
          break;
      }
      order += ' ';
    }
    return order;
  };
  EXPECT_EQ(orderOf(queuedDeviceOps(in, out, tickets, 4)),
            "in0 copied0 in1 copied1 in2 copied2 in3 copied3 ready0 out0 in4 copied4 ready1 out1 in5 copied5 "
            "ready2 out2 ready3 out3 ready4 out4 ready5 out5 ");
  EXPECT_EQ(orderOf(queuedDeviceOps(in, out, tickets, 4, computations)),
            "in0 copied0 in1 copied1 in2 copied2 in3 copied3 ready0 out0 in4 copied4 compute0 ready1 out1 in5 "
            "copied5 compute1 compute2 ready2 out2 ready3 out3 compute3 ready4 out4 compute4 compute5 ready5 out5 ");
  EXPECT_THROW(queuedDeviceOps(in, out, tickets, 4, {computations[0]}), Error);
  EXPECT_THROW(queuedDeviceOps({}, {}, {}, 4), Error);
  // Pieces whose copies out reduce (every other one here): the reduction right after the piece's copies out, before
  // the slot's next piece is copied in.
  std::vector<std::vector<SlotReduction>> reductions(6);
  for (std::size_t p = 0; p < 6; p += 2) reductions[p].push_back({&caller[p], {&caller[p], &slot[p % 4]}, 1});
  EXPECT_EQ(orderOf(queuedDeviceOps(in, out, tickets, 4, {}, reductions, 2)),
            "in0 copied0 in1 copied1 in2 copied2 in3 copied3 ready0 out0 reduce0/2 in4 copied4 ready1 out1 in5 "
            "copied5 ready2 out2 reduce2/2 ready3 out3 ready4 out4 reduce4/2 ready5 out5 ");
  EXPECT_THROW(queuedDeviceOps(in, out, tickets, 4, {}, {reductions[0]}, 2), Error);
}

TEST(NetQueuedCall, OnlyStagedCollectivesAreQueued) {
  for (const bool on : {true, false}) {
    for (const bool direct : {false, true}) {
      const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
        NetOptions options = optionsWith(std::chrono::milliseconds(5000));
        options.asyncCalls = on;
        if (direct) options.path = NetPath::Direct;
        auto world = hostWorld(std::move(p2p), options);
        auto group = world->group({0, 1}, "two");
        if (r != 0) return;
        std::byte any[4];
        const auto call = [&](Collective collective, std::size_t count) {
          return NetCall{collective, count, DataType::F32, ReduceOp::Sum, 0, 0, any, any};
        };
        const bool expected = on && !direct;
        EXPECT_EQ(group->queuedFits(call(Collective::AllReduce, 1 << 24)), expected) << on << direct;
        EXPECT_EQ(group->queuedFits(call(Collective::AllToAll, 1)), expected) << on << direct;
        EXPECT_FALSE(group->queuedFits(call(Collective::AllReduce, 0)));  // nothing to move
        EXPECT_FALSE(group->queuedFits(call(Collective::SendRecv, 16)));  // send/recv groups wait on the host
      });
      for (const std::string& error : errors) EXPECT_EQ(error, "");
    }
  }
}

// Every staged collective is queued; its copies and reductions are the device's where the staged path would make
// them there (a GPU's staged memory: more than one piece, or a reduction of PEERLINK_NET_GPU_REDUCE_MIN_BYTES or
// more under AUTO; every reduction under GPU), else the host's; an all-reduce of 2 ranks and a reduce-scatter reduce
// in their copies out wherever the device reduces. Two ranks, pieces of 4 MiB, f32.
TEST(NetQueuedCall, ComputationsAreTheDevicesWhereTheStagedPathWouldMakeThemThere) {
  for (const NetReduce reduce : {NetReduce::Auto, NetReduce::Gpu, NetReduce::Host}) {
    const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(5000));
      options.reduce = reduce;
      auto world = std::make_unique<NetWorld>(std::move(p2p), options, std::make_unique<DeviceWithStagedMemory>(),
                                              std::make_unique<HostMemory>());
      auto group = world->group({0, 1}, "two");
      if (r != 0) return;
      std::vector<float> data((std::size_t{16} << 20) / 4);
      const char* name = reduce == NetReduce::Auto ? "AUTO" : reduce == NetReduce::Host ? "HOST" : "GPU";
      // Whether the call is queued, and who reduces: the device's computations, its copies out, or the host.
      const auto onDevice = [&](Collective collective, std::size_t bytes) -> std::string {
        const NetCall call{collective, bytes / 4, DataType::F32, ReduceOp::Sum, 0, 0, data.data(), data.data()};
        EXPECT_TRUE(group->queuedFits(call)) << name << " " << collectiveName(collective) << " " << bytes;
        const QueuedCall queued = group->prepareQueued(call);
        const bool copiesOut =
            std::any_of(queued.deviceOps.begin(), queued.deviceOps.end(),
                        [](const QueuedDeviceOp& op) { return op.kind == QueuedDeviceOp::Kind::Reduce; });
        return copiesOut ? "copies out" : !queued.computations.empty() ? "computations" : "host";
      };
      const std::size_t MiB = std::size_t{1} << 20;
      const bool gpu = reduce == NetReduce::Gpu;
      const bool host = reduce == NetReduce::Host;  // no staged memory on the device: every reduction the host's
      EXPECT_EQ(onDevice(Collective::AllGather, 16 * MiB), "host") << name;  // no reductions
      EXPECT_EQ(onDevice(Collective::Broadcast, 16 * MiB), "host") << name;
      EXPECT_EQ(onDevice(Collective::AllToAll, 16 * MiB), "host") << name;
      EXPECT_EQ(onDevice(Collective::Reduce, MiB), gpu ? "computations" : "host") << name;       // one piece, 1 MiB
      EXPECT_EQ(onDevice(Collective::Reduce, 4 * MiB), host ? "host" : "computations") << name;  // 4 MiB
      // On 2 ranks an all-reduce and a reduce-scatter are one shot where the device reduces, their copies out reducing.
      for (const std::size_t bytes : {MiB, 16 * MiB}) {
        EXPECT_EQ(onDevice(Collective::AllReduce, bytes), host ? "host" : "copies out") << name << " " << bytes;
        EXPECT_EQ(onDevice(Collective::ReduceScatter, bytes), host ? "host" : "copies out") << name << " " << bytes;
      }
    });
    for (const std::string& error : errors) EXPECT_EQ(error, "");
  }
}

// Two queued calls, prepared before either starts (a caller's thread goes on at once): rank 0 could not queue the
// first one's copies (abandoned), so its job fails at once and breaks the world; rank 1's first one times out at the
// deadline naming rank 0. Every piece of both calls is marked ready whatever happened -- the second call's too, whose
// job never runs in a broken world -- and, where the device reduces, every computation of both is asked (those never
// reached as computations of nothing), so that every copy and compute stream runs through to the end; the next call
// is refused naming why. The streams wait as CUDA's do (cyclic comparisons): a ready word past every ticket would
// hold them forever.
TEST(NetQueuedCall, FailedQueuedCallsLetTheirStreamsRunThrough) {
  const auto timeout = std::chrono::milliseconds(300);
  enum class Reducing { OnTheHost, InTheCopiesOut, ByComputations };
  for (const Reducing reducing : {Reducing::OnTheHost, Reducing::InTheCopiesOut, Reducing::ByComputations}) {
    const bool onDevice = reducing != Reducing::OnTheHost;
    // On 2 ranks an all-reduce's reductions are the copies out's where the device reduces; a reduce's root's are
    // computations.
    const Collective collective = reducing == Reducing::ByComputations ? Collective::Reduce : Collective::AllReduce;
    const std::string where = reducing == Reducing::OnTheHost        ? "reducing on the host"
                              : reducing == Reducing::InTheCopiesOut ? "reducing in the copies out"
                                                                     : "reducing by the device's computations";
    std::vector<std::string> broken(2), refused(2);
    std::vector<int> stuck(2, -1);
    const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(timeout);
      options.chunkBytes = 4096;
      if (onDevice) options.reduce = NetReduce::Gpu;
      std::unique_ptr<DeviceAccess> device = onDevice ? std::make_unique<DeviceWithStagedMemory>() : hostDeviceAccess();
      auto world =
          std::make_unique<NetWorld>(std::move(p2p), options, std::move(device), std::make_unique<HostMemory>());
      auto group = world->group({0, 1}, "two");
      std::vector<float> first(6000, 1.0f), second(6000, 2.0f);
      const auto callOf = [&](std::vector<float>& data) {
        // (A reduce to rank 1: rank 1 waits for rank 0's messages, and names it.)
        return NetCall{collective, data.size(), DataType::F32, ReduceOp::Sum, 0, 1, data.data(), data.data()};
      };
      QueuedCall a = group->prepareQueued(callOf(first));
      QueuedCall b = group->prepareQueued(callOf(second));
      ASSERT_EQ(a.tickets.size(), 6u);  // 24000 bytes in pieces of 4 KiB: more pieces than slots
      ASSERT_EQ(a.computations.size(), reducing == Reducing::ByComputations ? 6u : 0u) << where;
      const auto reductionsOut = std::count_if(a.deviceOps.begin(), a.deviceOps.end(), [](const QueuedDeviceOp& op) {
        return op.kind == QueuedDeviceOp::Kind::Reduce;
      });
      ASSERT_EQ(reductionsOut, reducing == Reducing::InTheCopiesOut ? 6 : 0) << where;
      AsyncFlags* flags = a.flags;
      const AskedKernel kernel = a.kernel;
      std::vector<QueuedDeviceOp> ops = b.deviceOps;
      if (r == 1) ops.insert(ops.begin(), a.deviceOps.begin(), a.deviceOps.end());
      if (r == 0) a.abandoned->store(true);  // its copies never queued
      group->startQueued(std::move(a));
      group->startQueued(std::move(b));
      const auto i = static_cast<std::size_t>(r);
      {
        StandInStream copyStream;
        StandInStream computeStream;
        queueDeviceSide(copyStream, ops, flags, kernel, &computeStream);
        copyStream.drain();
        stuck[i] = copyStream.stuck() + computeStream.stuck();
      }
      broken[i] = world->brokenBy();
      try {
        group->prepareQueued(callOf(first));
      } catch (const Error& error) {
        refused[i] = std::string(errorCodeName(error.code())) + ": " + error.what();
      }
    });
    for (const std::string& error : errors) EXPECT_EQ(error, "") << where;
    for (int r = 0; r < 2; ++r) {
      const auto i = static_cast<std::size_t>(r);
      EXPECT_EQ(stuck[i], 0) << where << ", rank " << r << ": a wait of a stream never ended";
      EXPECT_NE(refused[i].find("RemoteError: net: an earlier call failed"), std::string::npos) << where << refused[i];
    }
    EXPECT_NE(broken[0].find("the caller could not queue the call's copies"), std::string::npos) << where << broken[0];
    EXPECT_NE(broken[1].find("rank 0"), std::string::npos) << where << broken[1];
  }
}

// A call of five pieces queued on rank 0 and waiting on the host on rank 1 (PEERLINK_NET_ASYNC off there, or a GPU
// without 64-bit stream memory operations): the same messages on the same tags (piece p on lane p % 2, as the staged
// path runs two pieces at a time), so both get the sum; also where rank 0's copies out make its reductions.
TEST(NetQueuedCall, AQueuedCallMeetsTheSameCallWaitingOnAnotherRank) {
  const std::size_t count = 5000;
  // Rank 0 reducing on the host, then on the device (its copies out reducing): the plan, and so the messages, the same.
  for (const bool onDevice : {false, true}) {
    std::vector<std::vector<std::int32_t>> got(2);
    const auto errors = onEveryRank(2, [&](int r, std::unique_ptr<PointToPoint> p2p) {
      NetOptions options = optionsWith(std::chrono::milliseconds(2000));
      options.chunkBytes = 4096;
      options.asyncCalls = r == 0;
      std::unique_ptr<DeviceAccess> device =
          onDevice && r == 0 ? std::make_unique<DeviceWithStagedMemory>() : hostDeviceAccess();
      auto world =
          std::make_unique<NetWorld>(std::move(p2p), options, std::move(device), std::make_unique<HostMemory>());
      auto group = world->group({0, 1}, "two");
      std::vector<std::int32_t>& data = got[static_cast<std::size_t>(r)];
      data.resize(count);
      for (std::size_t k = 0; k < count; ++k) data[k] = static_cast<std::int32_t>(k) * (r + 1);
      const NetCall call{Collective::AllReduce, count, DataType::I32, ReduceOp::Sum, 0, 0, data.data(), data.data()};
      if (r == 1) {
        ASSERT_FALSE(group->queuedFits(call));
        group->run(call);
        return;
      }
      ASSERT_TRUE(group->queuedFits(call));
      StandInStream stream;
      StandInStream copyStream;
      queueQueued(*group, stream, copyStream, call);
      stream.drain();
      EXPECT_EQ(stream.stuck() + copyStream.stuck(), 0);
    });
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
      std::size_t wrong = 0;
      for (std::size_t k = 0; k < count; ++k)
        wrong += got[static_cast<std::size_t>(r)][k] != static_cast<std::int32_t>(k) * 3;
      EXPECT_EQ(wrong, 0u) << "rank " << r << (onDevice ? ", rank 0 reducing in its copies out" : "");
    }
  }
}

// Send/recv groups of several pieces queued (pieces of 4 KiB): on 3 ranks a ring shift, each rank sending 10000 bytes
// to the next and receiving from the one before, with a send to itself among them; rank 2 waits on the host
// (PEERLINK_NET_ASYNC off there), so a queued group meets a waiting one; then a queued broadcast on the same stream
// reads what the group received. Every rank holds its left neighbour's data, then rank 0's.
TEST(NetQueuedCall, SendRecvGroupsAreQueuedAndMeetWaitingOnes) {
  const int n = 3;
  const std::size_t bytes = 10000;
  std::vector<std::vector<std::uint8_t>> received(n), self(n), broadcast(n);
  const auto byteOf = [](int rank, std::size_t k) { return static_cast<std::uint8_t>(rank * 37 + k % 251); };
  const auto errors = onEveryRank(n, [&](int r, std::unique_ptr<PointToPoint> p2p) {
    NetOptions options = optionsWith(std::chrono::milliseconds(5000));
    options.chunkBytes = 4096;
    options.asyncCalls = r != 2;
    auto world = hostWorld(std::move(p2p), options);
    auto group = world->group({0, 1, 2}, "three");
    std::vector<std::uint8_t> send(bytes), own(bytes / 2);
    for (std::size_t k = 0; k < bytes; ++k) send[k] = byteOf(r, k);
    std::vector<std::uint8_t>& recv = received[static_cast<std::size_t>(r)];
    std::vector<std::uint8_t>& toSelf = self[static_cast<std::size_t>(r)];
    recv.assign(bytes, 0);
    toSelf.assign(bytes / 2, 0);
    for (std::size_t k = 0; k < own.size(); ++k) own[k] = byteOf(r + 10, k);
    const std::vector<PeerOp> ops = {{true, (r + 1) % n, send.data(), bytes},
                                     {false, (r + n - 1) % n, recv.data(), bytes},
                                     {true, r, own.data(), own.size()},
                                     {false, r, toSelf.data(), toSelf.size()}};
    const NetCall shareRankZeros{Collective::Broadcast, bytes,      DataType::U8, ReduceOp::Sum, 0, 0,
                                 send.data(),           send.data()};
    if (r == 2) {
      ASSERT_FALSE(group->queuedFits(ops, DataType::U8));
      group->sendRecv(ops, DataType::U8);
      group->run(shareRankZeros);
    } else {
      ASSERT_TRUE(group->queuedFits(ops, DataType::U8));
      ASSERT_FALSE(group->asyncFits(ops, DataType::U8));  // more than one piece
      StandInStream stream;
      StandInStream copyStream;
      queueQueued(*group, stream, copyStream, group->prepareQueued(ops, DataType::U8));
      queueQueued(*group, stream, copyStream, shareRankZeros);
      stream.drain();
      EXPECT_EQ(stream.stuck() + copyStream.stuck(), 0);
    }
    broadcast[static_cast<std::size_t>(r)] = send;
    EXPECT_EQ(world->brokenBy(), "");
  });
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(errors[i], "") << "rank " << r;
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < bytes; ++k) {
      wrong += received[i][k] != byteOf((r + n - 1) % n, k);
      wrong += broadcast[i][k] != byteOf(0, k);
    }
    for (std::size_t k = 0; k < bytes / 2; ++k) wrong += self[i][k] != byteOf(r + 10, k);
    EXPECT_EQ(wrong, 0u) << "rank " << r;
  }
}

// Memory the slots outgrow is kept, not freed, once the world broke (messages of the failed call may still land in
// it): a queued call prepared beside a failing one may grow the slots just after the failure.
TEST(NetQueuedCall, SlotsNeverFreeWhatALeakedWorldOutgrows) {
  struct Counting final : DeviceAccess {
    std::unique_ptr<DeviceAccess> host = hostDeviceAccess();
    int freed = 0;
    void copyAsync(void* dst, const void* src, std::size_t bytes) override { host->copyAsync(dst, src, bytes); }
    std::uint64_t mark() override { return host->mark(); }
    bool reached(std::uint64_t marker) override { return host->reached(marker); }
    void* allocateHost(std::size_t bytes) override { return host->allocateHost(bytes); }
    void freeHost(void* memory) noexcept override {
      ++freed;
      host->freeHost(memory);
    }
  } device;
  std::vector<void*> kept;
  {
    StagingSlots slots(device);
    slots.reserve({64, 64, 64, 0}, std::chrono::milliseconds(1000));
    slots.reserve({128, 64, 64, 0}, std::chrono::milliseconds(1000));
    EXPECT_EQ(device.freed, 4) << "a healthy world frees the inputs it outgrew";
    for (std::size_t s = 0; s < StagingSlots::kSlots; ++s) kept.push_back(slots.slot(s).input);
    slots.leak();
    slots.reserve({256, 64, 64, 0}, std::chrono::milliseconds(1000));
    EXPECT_EQ(device.freed, 4) << "a leaked world freed memory it outgrew";
  }
  EXPECT_EQ(device.freed, 4) << "a leaked world freed its slots at its end";
  for (void* memory : kept) device.host->freeHost(memory);  // (the test's own: nothing reads them)
}

}  // namespace
}  // namespace peerlink::net
