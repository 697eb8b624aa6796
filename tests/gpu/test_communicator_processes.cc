// The communicator with one process per rank (as torchrun and mpirun run it): worlds of 2, 3 and 4 processes,
// rank 0 making the unique id and handing its text to the others through pipes, every collective checked
// against the host reference on every rank -- small calls in LL lines on the callers' own buffers, larger ones
// through the staging windows or shared at the call (AUTO) -- eager and captured in a graph, in place and out of
// place; send/recv groups of every shape (LL lines, the window in rounds, messages to itself); then what a user
// gets wrong: a call for a rank of another process, processes that disagree on a setting that chooses kernels,
// a rank that dies in the middle of a collective, and a rank that aborts. Then the same worlds with every pair
// host-staged (the staged plans across processes).
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "communicator_processes_support.hpp"
#include "doctor/verdict_cache.hpp"

namespace peerlink::testing {
namespace {

TEST(CommunicatorProcesses, EveryCollectiveOnTwoThreeAndFourProcesses) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes" + (sharing(n) ? " sharing GPUs" : ""));
    expectWorldOk(runWorld(n, [](Communicator& comm, int rank) {
      if (comm.localRanks() != std::vector<int>{rank}) return fail(rank, "localRanks is not {rank}");
      const int result = everyCollective(comm, rank);
      return result != kOk ? result : capturedReplays(comm, rank);
    }));
  }
}

// Every rank sends every rank (itself too) messages of sizes that take every path -- LL lines, one window
// slot, several rounds of it, two and three messages per pair -- in one group, each rank starting with another
// peer; every received byte checked.
int sendRecvGroups(Communicator& comm, int rank) {
  const int n = comm.size();
  const std::size_t sizes[] = {0, 8, 4000, 300000, std::size_t{20} << 20};
  const auto sizeOf = [&](int from, int to, int k) {
    return sizes[static_cast<std::size_t>(from * 7 + to * 3 + k) % 5];
  };
  const auto byteOf = [](int from, int to, int k, std::size_t i) {
    return static_cast<unsigned char>((static_cast<std::size_t>(from * 31 + to * 17 + k * 5) + i) % 251);
  };
  const int perPair = 3;
  Stream stream(comm.device(rank));
  std::vector<DeviceBuffer> sends;
  std::vector<DeviceBuffer> recvs;
  std::vector<std::pair<int, int>> recvFrom;  // (peer, k) of each recv buffer
  comm.groupStart();
  for (int k = 0; k < perPair; ++k) {
    for (int i = 0; i < n; ++i) {
      const int peer = (rank + i) % n;
      const std::size_t out = sizeOf(rank, peer, k);
      std::vector<unsigned char> data(out);
      for (std::size_t b = 0; b < out; ++b) data[b] = byteOf(rank, peer, k, b);
      sends.emplace_back(comm.device(rank), std::max<std::size_t>(out, 1));
      copyToDevice(sends.back().data(), data.data(), out);
      comm.send(rank, sends.back().data(), out, DataType::U8, peer, stream.get());
      const int from = (rank - i + n) % n;
      const std::size_t in = sizeOf(from, rank, k);
      recvs.emplace_back(comm.device(rank), std::max<std::size_t>(in, 1));
      recvFrom.emplace_back(from, k);
      comm.recv(rank, recvs.back().data(), in, DataType::U8, from, stream.get());
    }
  }
  comm.groupEnd();
  if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "the send/recv group did not finish");
  comm.checkHealth();
  for (std::size_t j = 0; j < recvs.size(); ++j) {
    const auto [from, k] = recvFrom[j];
    const std::size_t in = sizeOf(from, rank, k);
    std::vector<unsigned char> got(in);
    PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recvs[j].data(), in, cudaMemcpyDeviceToHost));
    for (std::size_t b = 0; b < in; ++b) {
      if (got[b] != byteOf(from, rank, k, b)) {
        return fail(rank, "message " + std::to_string(k) + " from rank " + std::to_string(from) + " (" +
                              std::to_string(in) + " bytes): byte " + std::to_string(b) + " wrong");
      }
    }
  }
  return kOk;
}

TEST(CommunicatorProcesses, SendRecvGroupsOfEveryShape) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    expectWorldOk(runWorld(n, [](Communicator& comm, int rank) {
      const int first = sendRecvGroups(comm, rank);
      return first != kOk ? first : sendRecvGroups(comm, rank);  // the pair counters moved on: again
    }));
  }
}

// ncclCommSplit's way: four processes split by rank parity, keys reversing the order, rank 3 joining none;
// the new communicators run collectives of their own, and the parent still works after.
TEST(CommunicatorProcesses, SplitMakesCommunicatorsOfTheColors) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(4, [](Communicator& comm, int rank) {
    const int color = rank == 3 ? -1 : rank % 2;
    const std::vector<std::shared_ptr<Communicator>> made = comm.split({color}, {-rank});
    if (made.size() != 1) return fail(rank, "split returned " + std::to_string(made.size()) + " communicators");
    if (color < 0) {
      if (made[0] != nullptr) return fail(rank, "a negative color got a communicator");
    } else {
      Communicator& child = *made[0];
      const int expectedSize = color == 0 ? 2 : 1;  // {0, 2} and {1}
      if (child.size() != expectedSize) return fail(rank, "the new communicator has " + std::to_string(child.size()));
      const int childRank = child.localRanks().front();
      if (color == 0 && childRank != (rank == 2 ? 0 : 1)) {
        return fail(rank, "key order: rank " + std::to_string(rank) + " became " + std::to_string(childRank));
      }
      for (const std::size_t count : {std::size_t{100}, std::size_t{3} << 20}) {
        CollCase c;
        c.collective = Collective::AllReduce;
        c.count = count;
        c.seed = 5 + count;
        const std::string problem = runCase(child, c);
        if (!problem.empty()) return fail(rank, "in the new communicator: " + problem);
      }
    }
    CollCase c;  // the parent goes on
    c.collective = Collective::AllGather;
    c.count = 1000;
    const std::string problem = runCase(comm, c);
    return problem.empty() ? kOk : fail(rank, "in the parent after the split: " + problem);
  }));
}

// Every collective on buffers in a registered window (one cudaMalloc allocation per rank, the send and recv
// regions at the same offsets on every rank; in place too), past LL so the peers' buffers are reached directly;
// the window deregistered at the end.
int registeredWindows(Communicator& comm, int rank) {
  const int n = comm.size();
  const std::size_t region = std::size_t{48} << 20;
  DeviceBuffer memory(comm.device(rank), 2 * region + 4096);
  auto* base = static_cast<unsigned char*>(memory.data()) + 4096;  // the window starts inside the allocation
  const int window = comm.registerWindow({base}, {2 * region});
  Stream stream(comm.device(rank));
  const DataType type = DataType::F32;
  std::uint64_t seed = 41;
  for (const Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;
    for (const bool inPlace : {false, true}) {
      if (inPlace && collective == Collective::AllToAll) continue;
      const std::size_t count = (std::size_t{6} << 20) / static_cast<std::size_t>(n) + 3;
      const int root = static_cast<int>(seed % static_cast<std::uint64_t>(n));
      const ReduceOp op = reduces(collective) ? ReduceOp::Sum : ReduceOp::Sum;
      std::vector<coll::Bytes> inputs;
      for (int r = 0; r < n; ++r) {
        inputs.push_back(randomElements(type, op, sendElementsOf(collective, n, count, r, root), seed * 101 + r));
      }
      const auto expected = coll::hostReduceReference(collective, type, op, n, count, root, inputs);
      const std::size_t size = dataTypeSize(type);
      unsigned char* send = base;
      unsigned char* recv = base + region;
      if (inPlace) {
        recv = base;
        if (collective == Collective::AllGather) send = base + count * size * static_cast<std::size_t>(rank);
        if (collective == Collective::ReduceScatter) recv = base + count * size * static_cast<std::size_t>(rank);
      }
      const coll::Bytes& mine = inputs[static_cast<std::size_t>(rank)];
      if (!mine.empty()) copyToDevice(send, mine.data(), mine.size());
      switch (collective) {
        case Collective::AllReduce: comm.allReduce(rank, send, recv, count, type, op, stream.get()); break;
        case Collective::Broadcast: comm.broadcast(rank, send, recv, count, type, root, stream.get()); break;
        case Collective::Reduce: comm.reduce(rank, send, recv, count, type, op, root, stream.get()); break;
        case Collective::AllGather: comm.allGather(rank, send, recv, count, type, stream.get()); break;
        case Collective::ReduceScatter: comm.reduceScatter(rank, send, recv, count, type, op, stream.get()); break;
        case Collective::AllToAll: comm.allToAll(rank, send, recv, count, type, stream.get()); break;
        case Collective::SendRecv: break;
      }
      if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "a registered call did not finish");
      comm.checkHealth();
      const coll::Bytes& want = expected[static_cast<std::size_t>(rank)];
      coll::Bytes got(want.size());
      if (!got.empty()) PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recv, got.size(), cudaMemcpyDeviceToHost));
      if (const auto mismatch = coll::findMismatch(type, coll::tolerance(type, op, n, 1.5), want, got)) {
        return fail(rank, std::string(collectiveName(collective)) + (inPlace ? " in place" : "") +
                              " on a registered window: " + *mismatch);
      }
      ++seed;
    }
  }
  comm.deregisterWindow(window);
  return kOk;
}

TEST(CommunicatorProcesses, RegisteredWindowsCarryEveryCollective) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    expectWorldOk(runWorld(n, [](Communicator& comm, int rank) { return registeredWindows(comm, rank); }));
  }
}

// Ranks that disagree on a count: across processes nothing can compare the calls before the kernels run, so the
// rank left waiting reports it at its deadline, naming the call and the rank it waited for; asyncError keeps it.
TEST(CommunicatorProcesses, CountsThatDisagreeMeetTheDeadlineNamingTheCall) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  const std::vector<int> codes = runWorld(
      2,
      [](Communicator& comm, int rank) {
        Stream stream(comm.device(rank));
        DeviceBuffer buffer(comm.device(rank), 64 << 10);
        const std::size_t count = rank == 0 ? 1000 : 3000;  // rank 1 expects more lines than rank 0 sends
        const auto start = RoleClock::now();
        comm.allReduce(rank, buffer.data(), buffer.data(), count, DataType::F32, ReduceOp::Sum, stream.get());
        if (!finishes(stream.get(), 10)) return fail(rank, "the call did not end within 10 s");
        const double seconds = std::chrono::duration<double>(RoleClock::now() - start).count();
        if (rank == 0) return kOk;  // it heard all it waited for: its result is wrong, and nothing here can tell
        if (seconds > 4.0) return fail(rank, "the deadline (2 s) took " + std::to_string(seconds) + " s");
        const int reported = expectsError(rank, ErrorCode::Timeout, "waited for rank 0", [&] { comm.checkHealth(); });
        if (reported != kOk) return reported;
        // The error stays for a watchdog that polls after a call reported it (as NCCL's ncclCommGetAsyncError).
        const std::optional<Error> kept = comm.asyncError();
        if (!kept || std::string(kept->what()).find("waited for rank 0") == std::string::npos) {
          return fail(rank, "asyncError forgot the stall checkHealth reported");
        }
        return kOk;
      },
      [](int) {
        return std::vector<std::pair<std::string, std::string>>{{"PEERLINK_TIMEOUT_MS", "2000"}};
      });
  EXPECT_EQ(codes[0], kOk);
  EXPECT_EQ(codes[1], kOk);
}

// An application's watchdog thread polls asyncError() while another thread makes calls (PyTorch's way).
TEST(CommunicatorProcesses, AsyncErrorFromAnotherThreadWhileCalling) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(2, [](Communicator& comm, int rank) {
    std::atomic<bool> done{false};
    std::atomic<int> polls{0};
    std::atomic<bool> sawError{false};
    std::thread watchdog([&] {
      while (!done.load()) {
        if (comm.asyncError()) sawError = true;
        ++polls;
        std::this_thread::sleep_for(1ms);
      }
    });
    Stream stream(comm.device(rank));
    DeviceBuffer buffer(comm.device(rank), 4 << 20);
    for (int i = 0; i < 300; ++i) {
      const std::size_t count = i % 3 == 0 ? (std::size_t{1} << 20) : 1000;  // LL and shared calls
      comm.allReduce(rank, buffer.data(), buffer.data(), count, DataType::F32, ReduceOp::Sum, stream.get());
    }
    const bool finished = finishes(stream.get(), kStreamSeconds);
    done = true;
    watchdog.join();
    if (!finished) return fail(rank, "the calls did not finish");
    if (sawError) return fail(rank, "asyncError reported an error where there was none");
    if (polls.load() == 0) return fail(rank, "the watchdog thread never polled");
    comm.checkHealth();
    return kOk;
  }));
}

TEST(CommunicatorProcesses, CallsForAnotherProcessesRankAreRefused) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(2, [](Communicator& comm, int rank) {
    const int other = 1 - rank;
    Stream stream(comm.device(rank));
    DeviceBuffer buffer(comm.device(rank), 1024);
    const int call = expectsError(rank, ErrorCode::InvalidUsage, "lives in another process", [&] {
      comm.allReduce(other, buffer.data(), buffer.data(), 16, DataType::F32, ReduceOp::Sum, stream.get());
    });
    if (call != kOk) return call;
    return expectsError(rank, ErrorCode::InvalidUsage, "lives in another process", [&] { comm.device(other); });
  }));
}

TEST(CommunicatorProcesses, ProcessesThatDisagreeOnASettingFailAtCreation) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  const std::vector<int> codes = runWorld(
      2, [](Communicator&, int rank) { return fail(rank, "the communicator was created"); },
      [](int rank) {
        return std::vector<std::pair<std::string, std::string>>{{"PEERLINK_PROTO", rank == 0 ? "LL" : "AUTO"}};
      });
  for (std::size_t r = 0; r < codes.size(); ++r) {
    EXPECT_EQ(codes[r], kErrorBase + static_cast<int>(ErrorCode::InvalidUsage)) << "rank " << r;
  }
}

// Waits for rank `rank`'s call on `stream` to end and the communicator to report `culprit`'s loss: the
// survivors' kernels, waiting for a rank that will never come, stop once the watchdog raises the abort word
// (PEERLINK_TIMEOUT_MS is 20 s here: a kernel that ended sooner did not wait for its deadline).
int expectLossReported(Communicator& comm, int rank, cudaStream_t stream, int culprit, const std::string& word) {
  const auto start = RoleClock::now();
  if (!finishes(stream, 10)) return fail(rank, "the collective did not stop within 10 s of the loss");
  const double seconds = std::chrono::duration<double>(RoleClock::now() - start).count();
  std::printf("[rank %d] the collective stopped %.2f s after it was launched\n", rank, seconds);
  if (seconds > 3.0) return fail(rank, "it took longer than 3 s");
  return expectsError(rank, ErrorCode::RemoteError, "rank " + std::to_string(culprit), [&] {
    comm.checkHealth();
    std::printf("[rank %d] checkHealth passed (%s)\n", rank, word.c_str());
  });
}

TEST(CommunicatorProcesses, ARankThatDiesMidCollectiveStopsTheOthers) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  const std::vector<int> codes = runWorld(3, [](Communicator& comm, int rank) {
    Stream stream(comm.device(rank));
    DeviceBuffer buffer(comm.device(rank), 4096);
    if (rank == 2) {
      std::this_thread::sleep_for(300ms);  // the others are waiting in their all-reduce by now
      ::raise(SIGKILL);
    }
    comm.allReduce(rank, buffer.data(), buffer.data(), 1000, DataType::F32, ReduceOp::Sum, stream.get());
    return expectLossReported(comm, rank, stream.get(), 2, "exited");
  });
  EXPECT_EQ(codes[0], kOk);
  EXPECT_EQ(codes[1], kOk);
  EXPECT_EQ(codes[2], 128 + SIGKILL);
}

TEST(CommunicatorProcesses, AbortStopsEveryRank) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(2, [](Communicator& comm, int rank) {
    Stream stream(comm.device(rank));
    DeviceBuffer buffer(comm.device(rank), std::size_t{64} << 20);
    if (rank == 0) {
      std::this_thread::sleep_for(300ms);  // rank 1 waits in its all-reduce
      comm.abort();
      return expectsError(rank, ErrorCode::RemoteError, "aborted", [&] {
        comm.allReduce(rank, buffer.data(), buffer.data(), 16, DataType::F32, ReduceOp::Sum, stream.get());
      });
    }
    // Large enough to share its buffer at the call (or, with sharing off, for the staging windows): rank 1 waits for
    // rank 0 in the exchange of the call's buffers, where the abort reaches it at once, or in a kernel meeting rank 0,
    // whose deadline checks read the abort word.
    try {
      comm.allReduce(rank, buffer.data(), buffer.data(), std::size_t{8} << 20, DataType::F32, ReduceOp::Sum,
                     stream.get());
    } catch (const Error& error) {
      if (error.code() == ErrorCode::RemoteError && std::string(error.what()).find("aborted") != std::string::npos) {
        return kOk;
      }
      return fail(rank, std::string("the call failed otherwise: ") + error.what());
    }
    return expectLossReported(comm, rank, stream.get(), 0, "aborted");
  }));
}

// The staged plans across processes (PEERLINK_COLL_HOST_STAGED=all, as between GPUs without peer access): every
// collective through the shared host stages and the step barriers, eager and captured; a window registered and
// left unused; send/recv groups of every shape pair by pair through the stages, twice; a rank that dies mid-plan
// named by the others.
std::vector<std::pair<std::string, std::string>> everyPairHostStaged(int) {
  return {{"PEERLINK_COLL_HOST_STAGED", "all"}};
}

TEST(CommunicatorProcesses, HostStagedPairsCarryEveryCollective) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes, every pair host-staged");
    expectWorldOk(runWorld(
        n,
        [](Communicator& comm, int rank) {
          const std::string choice = comm.describeChoice(Collective::AllReduce, 1 << 20);
          if (choice.find("staged plan") == std::string::npos) return fail(rank, "not staged: " + choice);
          DeviceBuffer window(comm.device(rank), 4096);
          comm.deregisterWindow(comm.registerWindow({window.data()}, {window.size()}));
          for (const auto& part : {everyCollective, capturedReplays, sendRecvGroups, sendRecvGroups}) {
            const int result = part(comm, rank);
            if (result != kOk) return result;
          }
          return kOk;
        },
        everyPairHostStaged));
  }
}

// Two processes exchanging one message each way through host memory (nccl-tests' sendrecv): in LL lines up to
// 256 KiB, as the host ring's exchange up to 8 MiB of both, pair by pair past it -- each rank choosing from its own
// calls alone, also where one rank sends itself a message in the same group. A small all-reduce (LL lines too, on the
// same areas and call numbers) between the exchanges, and an exchange in lines captured in a graph and replayed, keep
// the ranks' numbering in step; every byte checked.
int twoRankExchanges(Communicator& comm, int rank) {
  const int other = 1 - rank;
  Stream stream(comm.device(rank));
  const auto byteOf = [](int from, std::size_t round, std::size_t i) {
    return static_cast<unsigned char>((static_cast<std::size_t>(from) * 37 + round * 11 + i) % 253);
  };
  const auto exchange = [&](std::size_t bytes, std::size_t round, DeviceBuffer& send, DeviceBuffer& recv) {
    std::vector<unsigned char> data(bytes);
    for (std::size_t b = 0; b < bytes; ++b) data[b] = byteOf(rank, round, b);
    copyToDevice(send.data(), data.data(), bytes);
    PEERLINK_CUDA_CHECK(cudaMemsetAsync(recv.data(), 0, bytes, stream.get()));
  };
  const auto received = [&](std::size_t bytes, std::size_t round, const DeviceBuffer& recv) -> std::string {
    std::vector<unsigned char> got(bytes);
    PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recv.data(), bytes, cudaMemcpyDeviceToHost));
    for (std::size_t b = 0; b < bytes; ++b) {
      if (got[b] != byteOf(other, round, b)) {
        return "exchange " + std::to_string(round) + " of " + std::to_string(bytes) + " bytes: byte " +
               std::to_string(b) + " wrong";
      }
    }
    return "";
  };
  DeviceBuffer small(comm.device(rank), 64 * sizeof(float));
  const std::size_t sizes[] = {8, 4000, 256 << 10, (256 << 10) + 4, 1 << 20, 3 << 20, 5 << 20};
  for (std::size_t round = 0; round < std::size(sizes); ++round) {
    const std::size_t bytes = sizes[round];
    DeviceBuffer send(comm.device(rank), bytes);
    DeviceBuffer recv(comm.device(rank), bytes);
    exchange(bytes, round, send, recv);
    comm.groupStart();
    comm.send(rank, send.data(), bytes / 4, DataType::F32, other, stream.get());
    comm.recv(rank, recv.data(), bytes / 4, DataType::F32, other, stream.get());
    comm.groupEnd();
    std::vector<float> ones(64, 1.0f + static_cast<float>(rank));
    copyToDevice(small.data(), ones.data(), ones.size() * sizeof(float));
    comm.allReduce(rank, small.data(), small.data(), ones.size(), DataType::F32, ReduceOp::Sum, stream.get());
    if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "an exchange did not finish");
    comm.checkHealth();
    const std::string problem = received(bytes, round, recv);
    if (!problem.empty()) return fail(rank, problem);
    PEERLINK_CUDA_CHECK(cudaMemcpy(ones.data(), small.data(), ones.size() * sizeof(float), cudaMemcpyDeviceToHost));
    if (ones[0] != 3.0f || ones[63] != 3.0f) return fail(rank, "the all-reduce between exchanges is wrong");
  }
  // Rank 1 also sends itself a message of another size in the same group, which rank 0 cannot see: both still
  // take the exchange for what passes between them, rank 1 copying its own message beside it.
  for (const std::size_t bytes : {std::size_t{4000}, std::size_t{1} << 20}) {
    const std::size_t round = 50 + bytes % 7;
    DeviceBuffer send(comm.device(rank), bytes);
    DeviceBuffer recv(comm.device(rank), bytes);
    exchange(bytes, round, send, recv);
    const std::size_t ownBytes = 1000;
    DeviceBuffer ownSend(comm.device(rank), ownBytes);
    DeviceBuffer ownRecv(comm.device(rank), ownBytes);
    std::vector<unsigned char> own(ownBytes);
    for (std::size_t b = 0; b < ownBytes; ++b) own[b] = static_cast<unsigned char>(b * 7 + 3);
    copyToDevice(ownSend.data(), own.data(), ownBytes);
    comm.groupStart();
    if (rank == 1) comm.send(rank, ownSend.data(), ownBytes, DataType::U8, rank, stream.get());
    comm.send(rank, send.data(), bytes / 4, DataType::F32, other, stream.get());
    if (rank == 1) comm.recv(rank, ownRecv.data(), ownBytes, DataType::U8, rank, stream.get());
    comm.recv(rank, recv.data(), bytes / 4, DataType::F32, other, stream.get());
    comm.groupEnd();
    if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "an exchange beside a self message did not finish");
    comm.checkHealth();
    const std::string problem = received(bytes, round, recv);
    if (!problem.empty()) return fail(rank, "beside a self message: " + problem);
    if (rank == 1) {
      std::vector<unsigned char> got(ownBytes);
      PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), ownRecv.data(), ownBytes, cudaMemcpyDeviceToHost));
      if (got != own) return fail(rank, "its message to itself is wrong");
    }
  }
  const std::size_t bytes = 4000;
  DeviceBuffer send(comm.device(rank), bytes);
  DeviceBuffer recv(comm.device(rank), bytes);
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  comm.groupStart();
  comm.send(rank, send.data(), bytes / 4, DataType::F32, other, stream.get());
  comm.recv(rank, recv.data(), bytes / 4, DataType::F32, other, stream.get());
  comm.groupEnd();
  PEERLINK_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
  for (std::size_t replay = 0; replay < 3; ++replay) {
    const std::size_t round = 100 + replay;
    exchange(bytes, round, send, recv);
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "a replayed exchange did not finish");
    const std::string problem = received(bytes, round, recv);
    if (!problem.empty()) return fail(rank, "replay: " + problem);
  }
  PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return kOk;
}

TEST(CommunicatorProcesses, HostStagedExchangesOfTwoRanks) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(
      2,
      [](Communicator& comm, int rank) {
        const std::string choice = comm.describeChoice(Collective::SendRecv, 4000);
        if (choice.find("two ranks' exchange") == std::string::npos) return fail(rank, "no exchange: " + choice);
        const int first = twoRankExchanges(comm, rank);
        return first != kOk ? first : twoRankExchanges(comm, rank);
      },
      everyPairHostStaged));
}

// Rank 2 of 3 killed while the others wait for it in an all-reduce of `count` floats through host memory.
void expectKilledStagedRankNamed(std::size_t count) {
  const std::vector<int> codes = runWorld(
      3,
      [count](Communicator& comm, int rank) {
        Stream stream(comm.device(rank));
        DeviceBuffer buffer(comm.device(rank), count * sizeof(float));
        if (rank == 2) {
          std::this_thread::sleep_for(300ms);  // the others wait for it by now
          ::raise(SIGKILL);
        }
        comm.allReduce(rank, buffer.data(), buffer.data(), count, DataType::F32, ReduceOp::Sum, stream.get());
        return expectLossReported(comm, rank, stream.get(), 2, "exited");
      },
      everyPairHostStaged);
  EXPECT_EQ(codes[0], kOk);
  EXPECT_EQ(codes[1], kOk);
  EXPECT_EQ(codes[2], 128 + SIGKILL);
}

TEST(CommunicatorProcesses, HostStagedARankThatDiesIsNamed) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  {
    SCOPED_TRACE("4 MiB: the host ring's slots");
    expectKilledStagedRankNamed(std::size_t{1} << 20);
  }
  {
    SCOPED_TRACE("64 MiB, past the host ring: a staged plan's step barrier");
    expectKilledStagedRankNamed(std::size_t{16} << 20);
  }
}

// The doctor's verdict cache, in a folder of its own, knowing GPU 0 -> GPU 1 BROKEN (as `peerlink doctor` leaves it
// on a machine whose platform drops that pair's peer traffic), written by a child: this process touches no CUDA.
// kOk when it was written.
int cacheBrokenPair(const std::string& directory) {
  Child writer("cache", [&] {
    const Topology topology = discoverTopology(Params::fromEnvironment());
    int src = -1;
    int dst = -1;
    for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
      if (topology.gpus[g].cudaOrdinal == 0) src = static_cast<int>(g);
      if (topology.gpus[g].cudaOrdinal == 1) dst = static_cast<int>(g);
    }
    if (src < 0 || dst < 0) return fail(0, "no GPUs 0 and 1 in the topology");
    PairDecision decision;
    decision.verdict = PairVerdict{src, dst, Verdict::Broken, {"ce_write_dropped"}};
    const VerdictCacheKey key = makeVerdictCacheKey(topology, src, dst, readBootId(), readKernelCommandLine(), "quick");
    return VerdictCache(directory).store(key, topology, decision) ? kOk : fail(0, "the cache entry was not stored");
  });
  return waitAll({&writer}, 60s)[0];
}

// A pair one process's verdict cache knows BROKEN: every rank of the world learns it at creation, and the world runs
// through host memory though the GPUs' P2P works; every collective correct there.
TEST(CommunicatorProcesses, APairTheDoctorFoundBrokenCarriesNoPeerTraffic) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  if (probe().count < 2) GTEST_SKIP() << "needs 2 GPUs: a verdict is about a pair of GPUs";
  char folder[] = "/tmp/peerlink-verdicts-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const std::string directory = folder;
  ASSERT_EQ(cacheBrokenPair(directory), kOk);
  // Only rank 1's process reads that cache; rank 0's reads an empty folder of its own.
  const std::string empty = directory + "/empty";
  expectWorldOk(runWorld(
      2,
      [](Communicator& comm, int rank) {
        const std::string choice = comm.describeChoice(Collective::AllReduce, 1 << 20);
        if (choice.find("staged plan") == std::string::npos) return fail(rank, "not staged: " + choice);
        return everyCollective(comm, rank);
      },
      [&](int rank) {
        return std::vector<std::pair<std::string, std::string>>{
            {"PEERLINK_DOCTOR_CACHE_DIR", rank == 1 ? directory : empty}};
      }));
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace peerlink::testing
