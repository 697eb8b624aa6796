// NCCL's API through libpeerlink_nccl.so.2 with one process per rank, as torchrun and mpirun run it: rank 0's
// ncclGetUniqueId handed to the others, ncclCommInitRankConfig with PyTorch's config, the collectives PyTorch calls
// on the NULL stream for its types and ops (pre-multiplied sums too), gather/scatter, batched send/recv, a split
// where odd ranks join none, symmetric windows, ncclCommGetAsyncError polled from another thread meanwhile,
// finalize then destroy; then a rank that aborts while another waits in a collective, and counts that disagree,
// which fail at the deadline instead of hanging; and ranks of two hosts without a launcher, which the rendezvous
// sends to the real NCCL, or refuses at once where a rank cannot follow. Each rank is a forked child that loads the
// library itself.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "bootstrap/unique_id.hpp"
#include "forked_roles.hpp"
#include "gpu_test_support.hpp"
#include "nccl_api_support.hpp"
#include "peerlink/launch.hpp"

namespace peerlink::testing {
namespace {

int fail(int rank, const std::string& what) {
  std::fprintf(stderr, "[rank %d] %s\n", rank, what.c_str());
  return kWrong;
}

std::string idText(const ncclUniqueId& id) {
  std::string text;
  for (const char byte : id.internal) text += fmt::format("{:02x}", static_cast<unsigned char>(byte));
  return text;
}

ncclUniqueId idFrom(const std::string& text) {
  ncclUniqueId id{};
  for (std::size_t i = 0; i < sizeof id.internal && 2 * i + 1 < text.size(); ++i) {
    id.internal[i] = static_cast<char>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

using RankBody = std::function<int(const NcclApi&, NcclRank&, int nranks)>;

// `n` processes, rank r on GPU r % GPUs with `settings` (GPUs shared where fewer than ranks), each creating its
// rank with PyTorch's config from rank 0's id, running `body`, then finalizing and destroying.
std::vector<int> runRanks(int n, const RankBody& body, std::vector<std::pair<std::string, std::string>> settings = {}) {
  settings.emplace_back("PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000");
  if (gpuCount() < n) settings.emplace_back("PEERLINK_COLL_SHARE_GPUS", "1");
  std::vector<std::unique_ptr<Pipe>> ids;
  for (int r = 0; r < n; ++r) ids.push_back(std::make_unique<Pipe>());
  std::vector<std::unique_ptr<Child>> children;
  for (int rank = 0; rank < n; ++rank) {
    children.push_back(std::make_unique<Child>("rank " + std::to_string(rank), [&, rank] {
      const NcclApi api = loadNccl(settings);
      ncclUniqueId id{};
      if (rank == 0) {
        api.check(api.getUniqueId(&id), "ncclGetUniqueId");
        for (int r = 1; r < n; ++r) ids[static_cast<std::size_t>(r)]->send(idText(id));
      } else {
        id = idFrom(ids[static_cast<std::size_t>(rank)]->receive());
      }
      NcclRank me;
      me.rank = rank;
      me.device = rank % gpuCount();
      PEERLINK_CUDA_CHECK(cudaSetDevice(me.device));
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;  // what PyTorch 2.11 sends
      config.blocking = 1;
      config.commName = "default_pg";
      api.check(api.commInitRankConfig(&me.comm, n, id, rank, &config), "ncclCommInitRankConfig");
      int version = 0;
      api.check(api.getVersion(&version), "ncclGetVersion");
      if (version != 22809) return fail(rank, fmt::format("version {}", version));
      const int result = body(api, me, n);
      if (me.comm != nullptr) {
        api.check(api.commFinalize(me.comm), "ncclCommFinalize");
        api.check(api.commDestroy(me.comm), "ncclCommDestroy");
      }
      return result;
    }));
  }
  std::vector<Child*> raw;
  for (auto& child : children) raw.push_back(child.get());
  return waitAll(raw);
}

void expectRanksOk(const std::vector<int>& codes) {
  for (std::size_t r = 0; r < codes.size(); ++r) {
    EXPECT_EQ(codes[r], kOk) << "rank " << r << " (1 wrong result, 99 exception, 100 + ErrorCode, -1 killed)";
  }
}

// What PyTorch's ProcessGroupNCCL calls, checked, while a thread polls ncclCommGetAsyncError as its watchdog does.
int whatPyTorchCalls(const NcclApi& api, NcclRank& me, int n) {
  std::atomic<bool> done{false};
  std::atomic<int> watchdogProblem{0};
  std::thread watchdog([&] {
    while (!done) {
      ncclResult_t async = ncclSuccess;
      if (api.commGetAsyncError(me.comm, &async) != ncclSuccess || async != ncclSuccess) watchdogProblem = 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  // A failed call throws: the watchdog is stopped and joined on the way out too (a joinable thread's destructor
  // would end the process without saying why).
  struct StopWatchdog {
    std::atomic<bool>& done;
    std::thread& thread;
    ~StopWatchdog() {
      done = true;
      if (thread.joinable()) thread.join();
    }
  } stopWatchdog{done, watchdog};
  std::string problem;
  for (const ncclDataType_t type : {ncclFloat32, ncclBfloat16, ncclFloat16, ncclInt64}) {
    for (int op = 0; op < 6 && problem.empty(); ++op) {
      if (op == ncclProd || op == ncclMin) continue;  // PyTorch's test set: sum, max, avg, premul
      NcclCase c;
      c.type = type;
      c.op = op < ncclNumOps ? static_cast<ncclRedOp_t>(op) : ncclSum;
      c.premul = op == ncclNumOps;
      for (const std::size_t count : {std::size_t{1000}, (std::size_t{3} << 20) + 1}) {
        c.count = count;
        if (problem.empty()) problem = runNcclCase(api, {me}, n, c);
      }
    }
  }
  for (const NcclCall call : {NcclCall::Broadcast, NcclCall::Reduce, NcclCall::AllGather, NcclCall::ReduceScatter,
                              NcclCall::AllToAll, NcclCall::Gather, NcclCall::Scatter}) {
    for (const bool inPlace : {false, true}) {
      NcclCase c;
      c.call = call;
      c.count = 100003;
      c.root = n - 1;
      c.inPlace = inPlace;
      if (problem.empty()) problem = runNcclCase(api, {me}, n, c);
    }
  }
  done = true;
  watchdog.join();
  if (!problem.empty()) return fail(me.rank, problem);
  if (watchdogProblem != 0) return fail(me.rank, "the watchdog thread saw an asynchronous error");
  return kOk;
}

TEST(NcclApiProcesses, WhatPyTorchCallsOnTwoAndFourProcesses) {
  PEERLINK_REQUIRE_ONE_GPU();
  for (const int n : {2, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    expectRanksOk(runRanks(n, whatPyTorchCalls, {{"PEERLINK_TIMEOUT_MS", "20000"}}));
  }
}

// batch_isend_irecv's way: every rank sends every other rank a message and receives one from each, in one group.
TEST(NcclApiProcesses, BatchedSendRecv) {
  PEERLINK_REQUIRE_ONE_GPU();
  expectRanksOk(runRanks(
      4,
      [](const NcclApi& api, NcclRank& me, int n) {
        const std::size_t count = 70000;
        std::vector<void*> out(static_cast<std::size_t>(n));
        std::vector<void*> in(static_cast<std::size_t>(n));
        api.check(api.groupStart(), "ncclGroupStart");
        for (int peer = 0; peer < n; ++peer) {
          if (peer == me.rank) continue;
          api.check(api.memAlloc(&out[static_cast<std::size_t>(peer)], count * 8), "ncclMemAlloc");
          api.check(api.memAlloc(&in[static_cast<std::size_t>(peer)], count * 8), "ncclMemAlloc");
          std::vector<std::int64_t> values(count, me.rank * 100 + peer);
          PEERLINK_CUDA_CHECK(
              cudaMemcpy(out[static_cast<std::size_t>(peer)], values.data(), count * 8, cudaMemcpyHostToDevice));
          api.check(api.send(out[static_cast<std::size_t>(peer)], count, ncclInt64, peer, me.comm, nullptr), "send");
          api.check(api.recv(in[static_cast<std::size_t>(peer)], count, ncclInt64, peer, me.comm, nullptr), "recv");
        }
        api.check(api.groupEnd(), "ncclGroupEnd");
        if (!finishes(nullptr, kNcclStreamSeconds)) return fail(me.rank, "the group did not finish");
        for (int peer = 0; peer < n; ++peer) {
          if (peer == me.rank) continue;
          std::vector<std::int64_t> got(count);
          PEERLINK_CUDA_CHECK(
              cudaMemcpy(got.data(), in[static_cast<std::size_t>(peer)], count * 8, cudaMemcpyDeviceToHost));
          if (got.front() != peer * 100 + me.rank || got.back() != peer * 100 + me.rank) {
            return fail(me.rank, fmt::format("from rank {}: {}", peer, got.front()));
          }
          api.check(api.memFree(out[static_cast<std::size_t>(peer)]), "ncclMemFree");
          api.check(api.memFree(in[static_cast<std::size_t>(peer)]), "ncclMemFree");
        }
        return kOk;
      },
      {{"PEERLINK_TIMEOUT_MS", "20000"}}));
}

// new_group with device_id: ncclCommSplit, odd ranks passing NCCL_SPLIT_NOCOLOR and getting NULL.
TEST(NcclApiProcesses, SplitWhereOddRanksJoinNone) {
  PEERLINK_REQUIRE_ONE_GPU();
  expectRanksOk(runRanks(4,
                         [](const NcclApi& api, NcclRank& me, int) {
                           ncclComm_t made = nullptr;
                           const int color = me.rank % 2 == 0 ? 0 : NCCL_SPLIT_NOCOLOR;
                           api.check(api.commSplit(me.comm, color, me.rank, &made, nullptr), "ncclCommSplit");
                           if (color == NCCL_SPLIT_NOCOLOR)
                             return made == nullptr ? kOk : fail(me.rank, "no color, yet a communicator");
                           if (made == nullptr) return fail(me.rank, "no communicator for color 0");
                           NcclRank child = me;
                           child.comm = made;
                           api.check(api.commUserRank(made, &child.rank), "ncclCommUserRank");
                           NcclCase c;
                           c.op = ncclMax;
                           const std::string problem = runNcclCase(api, {child}, 2, c);
                           api.check(api.commDestroy(made), "ncclCommDestroy");
                           return problem.empty() ? kOk : fail(me.rank, "in the split: " + problem);
                         },
                         {{"PEERLINK_TIMEOUT_MS", "20000"}}));
}

// nccl-tests -R 2 under mpirun: symmetric windows on ncclMemAlloc buffers, an all-reduce on them, deregistered.
TEST(NcclApiProcesses, SymmetricWindows) {
  PEERLINK_REQUIRE_ONE_GPU();
  expectRanksOk(runRanks(
      4,
      [](const NcclApi& api, NcclRank& me, int n) {
        const std::size_t count = (std::size_t{8} << 20) + 3;
        void* send = nullptr;
        void* recv = nullptr;
        ncclWindow_t windows[2] = {};
        api.check(api.memAlloc(&send, count * 4), "ncclMemAlloc");
        api.check(api.memAlloc(&recv, count * 4), "ncclMemAlloc");
        api.check(api.commWindowRegister(me.comm, send, count * 4, &windows[0], NCCL_WIN_COLL_SYMMETRIC), "register");
        api.check(api.commWindowRegister(me.comm, recv, count * 4, &windows[1], NCCL_WIN_COLL_SYMMETRIC), "register");
        NcclCase c;
        c.count = count;
        std::vector<float> input(count);
        for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<float>(inputValue(c, me.rank, i));
        PEERLINK_CUDA_CHECK(cudaMemcpy(send, input.data(), count * 4, cudaMemcpyHostToDevice));
        api.check(api.allReduce(send, recv, count, ncclFloat32, ncclSum, me.comm, nullptr), "ncclAllReduce");
        if (!finishes(nullptr, kNcclStreamSeconds)) return fail(me.rank, "did not finish");
        std::vector<float> output(count);
        PEERLINK_CUDA_CHECK(cudaMemcpy(output.data(), recv, count * 4, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < count; ++i) {
          if (output[i] != static_cast<float>(reduced(c, n, i))) return fail(me.rank, fmt::format("element {}", i));
        }
        api.check(api.commWindowDeregister(me.comm, windows[0]), "deregister");
        api.check(api.commWindowDeregister(me.comm, windows[1]), "deregister");
        api.check(api.memFree(send), "ncclMemFree");
        api.check(api.memFree(recv), "ncclMemFree");
        return kOk;
      },
      {{"PEERLINK_TIMEOUT_MS", "20000"}}));
}

// PyTorch's watchdog way: a rank gives up (ncclCommAbort) while the other waits inside a collective; the waiting
// rank's kernel stops within seconds, ncclCommGetAsyncError says ncclRemoteError, and it aborts too. The device
// deadline is the NCCL API's hour: only the abort can have stopped the wait.
TEST(NcclApiProcesses, AnAbortStopsTheOtherRanksWaitWithinSeconds) {
  PEERLINK_REQUIRE_ONE_GPU();
  expectRanksOk(runRanks(2, [](const NcclApi& api, NcclRank& me, int) {
    void* buffer = nullptr;
    api.check(api.memAlloc(&buffer, 4096), "ncclMemAlloc");
    if (me.rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      api.check(api.commAbort(me.comm), "ncclCommAbort");
      me.comm = nullptr;
      return kOk;
    }
    api.check(api.allReduce(buffer, buffer, 16, ncclFloat32, ncclSum, me.comm, nullptr), "ncclAllReduce");
    const auto start = Clock::now();
    ncclResult_t async = ncclSuccess;
    while (async == ncclSuccess && secondsSince(start) < 30) {
      api.check(api.commGetAsyncError(me.comm, &async), "ncclCommGetAsyncError");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (async != ncclRemoteError) return fail(0, fmt::format("async error {} after 30 s", static_cast<int>(async)));
    if (!finishes(nullptr, 10)) return fail(0, "the kernel did not stop after the peer's abort");
    api.check(api.commAbort(me.comm), "ncclCommAbort");
    me.comm = nullptr;
    return kOk;
  }));
}

// PyTorch's watchdog on a timeout: ncclCommAbort on every communicator from one thread, in any order. Two
// communicators over the same two processes; rank 0's all-reduce on A waits for rank 1, which never calls it, under
// the NCCL API's hour; ncclCommAbort on B meanwhile must return within seconds and leave A's kernel waiting (before,
// it synchronized the device and so waited for A's kernel), and ncclCommAbort on A then stops A's kernel and
// returns within seconds too.
TEST(NcclApiProcesses, AbortingOneCommunicatorBesideAStalledOneReturnsAtOnce) {
  PEERLINK_REQUIRE_ONE_GPU();
  Pipe idsB;
  Pipe done;  // rank 0 -> rank 1: rank 1 keeps its ranks of A and B until rank 0 is through
  expectRanksOk(runRanks(
      2,
      [&](const NcclApi& api, NcclRank& me, int n) {
        ncclUniqueId idB{};
        if (me.rank == 0) {
          api.check(api.getUniqueId(&idB), "ncclGetUniqueId");
          idsB.send(idText(idB));
        } else {
          idB = idFrom(idsB.receive());
        }
        ncclComm_t b = nullptr;
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;
        api.check(api.commInitRankConfig(&b, n, idB, me.rank, &config), "ncclCommInitRankConfig (B)");
        void* buffer = nullptr;
        api.check(api.memAlloc(&buffer, 4096), "ncclMemAlloc");
        cudaStream_t streamA = nullptr;
        cudaStream_t streamB = nullptr;
        PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&streamA, cudaStreamNonBlocking));
        PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&streamB, cudaStreamNonBlocking));
        api.check(api.allReduce(buffer, buffer, 16, ncclFloat32, ncclSum, b, streamB), "ncclAllReduce (B)");
        if (!finishes(streamB, 30)) return fail(me.rank, "B's all-reduce did not finish");
        if (me.rank == 1) {
          done.expect("done");  // never calls on A
          api.check(api.commAbort(b), "ncclCommAbort (B)");
          return kOk;
        }
        const auto check = [&]() -> int {
          api.check(api.allReduce(buffer, buffer, 16, ncclFloat32, ncclSum, me.comm, streamA), "ncclAllReduce (A)");
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          if (cudaStreamQuery(streamA) != cudaErrorNotReady) return fail(0, "A's all-reduce did not wait for rank 1");
          auto start = Clock::now();
          api.check(api.commAbort(b), "ncclCommAbort (B)");
          const double bSeconds = secondsSince(start);
          std::fprintf(stderr, "[rank 0] ncclCommAbort (B) returned in %.2f s while A's kernel waits\n", bSeconds);
          if (bSeconds > 5)
            return fail(0, fmt::format("ncclCommAbort (B) took {:.1f} s: it waited for A's kernel", bSeconds));
          if (cudaStreamQuery(streamA) != cudaErrorNotReady) return fail(0, "A's kernel stopped when B was aborted");
          ncclResult_t async = ncclSuccess;
          api.check(api.commGetAsyncError(me.comm, &async), "ncclCommGetAsyncError (A)");
          if (async != ncclSuccess) return fail(0, fmt::format("A reports error {}", static_cast<int>(async)));
          start = Clock::now();
          api.check(api.commAbort(me.comm), "ncclCommAbort (A)");
          me.comm = nullptr;
          const double aSeconds = secondsSince(start);
          std::fprintf(stderr, "[rank 0] ncclCommAbort (A) returned in %.2f s\n", aSeconds);
          if (aSeconds > 5) return fail(0, fmt::format("ncclCommAbort (A) took {:.1f} s", aSeconds));
          if (!finishes(streamA, 5)) return fail(0, "A's kernel did not stop after its abort");
          return kOk;
        };
        const int result = check();
        done.send("done");
        api.check(api.memFree(buffer), "ncclMemFree");
        PEERLINK_CUDA_CHECK(cudaStreamDestroy(streamA));
        PEERLINK_CUDA_CHECK(cudaStreamDestroy(streamB));
        return result;
      },
      {{"PEERLINK_TIMEOUT_MS", "60000"}}));
}

// Counts that disagree across processes cannot be seen by either process alone: the waits end at the deadline
// (3 s here) with an error, and nothing hangs.
TEST(NcclApiProcesses, CountsThatDisagreeEndAtTheDeadline) {
  PEERLINK_REQUIRE_ONE_GPU();
  const std::vector<int> codes = runRanks(
      2,
      [](const NcclApi& api, NcclRank& me, int) {
        const std::size_t count = me.rank == 0 ? 1000 : 50000;
        void* buffer = nullptr;
        api.check(api.memAlloc(&buffer, count * 4), "ncclMemAlloc");
        api.check(api.allReduce(buffer, buffer, count, ncclFloat32, ncclSum, me.comm, nullptr), "ncclAllReduce");
        if (!finishes(nullptr, 30)) return fail(me.rank, "the stream is still waiting after 30 s");
        ncclResult_t async = ncclSuccess;
        api.check(api.commGetAsyncError(me.comm, &async), "ncclCommGetAsyncError");
        std::fprintf(stderr, "[rank %d] asynchronous error %d: %s\n", me.rank, static_cast<int>(async),
                     api.getLastError(me.comm));
        api.check(api.commAbort(me.comm), "ncclCommAbort");
        me.comm = nullptr;
        return async == ncclSuccess ? kRefused : kOk;  // kRefused: this rank saw no error
      },
      {{"PEERLINK_TIMEOUT_MS", "3000"}});
  ASSERT_EQ(codes.size(), 2u);
  for (const int code : codes) EXPECT_TRUE(code == kOk || code == kRefused) << code;
  EXPECT_TRUE(codes[0] == kOk || codes[1] == kOk) << "neither rank saw the mismatch as an error";
}

// What each of two ranks said of its ncclCommInitRank ("<result> <last error>"), and how its process ended; or why
// the run could not say anything (the real NCCL not loaded beside this library).
struct TwoHostRun {
  std::string said[2];
  std::vector<int> codes;
  std::string skip;
};

// Two processes made two hosts by PEERLINK_HOSTID, no launcher's variable set (Ray, a user's own script): rank 0's
// ncclGetUniqueId makes an id whose rendezvous root decides, and both create their rank with it on GPU 0. `fallback`
// is each rank's PEERLINK_NCCL_FALLBACK.
TwoHostRun createOnTwoHosts(const std::string (&fallback)[2]) {
  Pipe idPipe;
  Pipe reports[2];
  std::vector<std::unique_ptr<Child>> children;
  for (int rank = 0; rank < 2; ++rank) {
    children.push_back(std::make_unique<Child>("rank " + std::to_string(rank), [&, rank] {
      for (const std::string& name : launchVariableNames()) ::unsetenv(name.c_str());
      const NcclApi api = loadNccl({{"PEERLINK_HOSTID", rank == 0 ? "host-a" : "host-b"},
                                    {"PEERLINK_NCCL_FALLBACK", fallback[rank]},
                                    {"PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000"},
                                    {"PEERLINK_DEBUG", "INFO"},
                                    {"PEERLINK_DEBUG_SUBSYS", "INIT"}});
      ncclUniqueId id{};
      if (rank == 0) {
        api.check(api.getUniqueId(&id), "ncclGetUniqueId");
        UniqueId carrier;
        std::memcpy(carrier.bytes, id.internal, kUniqueIdBytes);
        if (!bootstrap::decodeUniqueId(carrier).mayForward) {
          idPipe.send("none");
          reports[0].send("no real NCCL");
          return kRefused;
        }
        idPipe.send(idText(id));
      } else {
        const std::string text = idPipe.receive();
        if (text == "none") return kRefused;
        id = idFrom(text);
      }
      PEERLINK_CUDA_CHECK(cudaSetDevice(0));
      ncclComm_t comm = nullptr;
      const ncclResult_t result = api.commInitRank(&comm, 2, id, rank);
      reports[rank].send(fmt::format("{} {}", static_cast<int>(result), api.getLastError(nullptr)));
      return kOk;
    }));
  }
  TwoHostRun run;
  for (int rank = 0; rank < 2; ++rank) {
    try {
      run.said[rank] = reports[rank].receive(kChildLimit);
    } catch (const Error& error) {
      run.said[rank] = std::string("no report: ") + error.what();
    }
  }
  std::vector<Child*> raw;
  for (auto& child : children) raw.push_back(child.get());
  run.codes = waitAll(raw);
  if (run.said[0] == "no real NCCL")
    run.skip = "the real NCCL is not loaded beside libpeerlink_nccl.so.2 (set PEERLINK_NCCL_LIBRARY)";
  return run;
}

// The root asks the real NCCL for an id then, in rank 0's process, and sends both ranks there with it; the real
// NCCL, which sees one machine, refuses two ranks on one GPU with its own error -- the proof that both creations were
// forwarded with one id of the real NCCL.
TEST(NcclApiProcesses, RanksOnTwoHostsWithoutALauncherGoToTheRealNccl) {
  PEERLINK_REQUIRE_ONE_GPU();
  const TwoHostRun run = createOnTwoHosts({"AUTO", "AUTO"});
  if (!run.skip.empty()) GTEST_SKIP() << run.skip;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ": " + run.said[rank]);
    EXPECT_EQ(run.codes[static_cast<std::size_t>(rank)], kOk);
    EXPECT_EQ(run.said[rank].rfind(std::to_string(static_cast<int>(ncclInvalidUsage)) + " ", 0), 0u);
    EXPECT_NE(run.said[rank].find("the real NCCL failed it: Duplicate GPU detected"), std::string::npos);
    EXPECT_NE(run.said[rank].find("the bootstrap root sent every rank to the real NCCL: ranks on 2 hosts"),
              std::string::npos);
  }
}

// Rank 1 may not use the real NCCL (PEERLINK_NCCL_FALLBACK=NONE) and says so in its hello: the root refuses the world
// for both, at once, naming rank 1 and why -- rank 0 does not enter the real NCCL's creation, which would wait for
// rank 1 without a deadline.
TEST(NcclApiProcesses, ARankThatCannotFollowTheRootToTheRealNcclFailsEveryRankAtOnce) {
  PEERLINK_REQUIRE_ONE_GPU();
  const auto start = std::chrono::steady_clock::now();
  const TwoHostRun run = createOnTwoHosts({"AUTO", "NONE"});
  if (!run.skip.empty()) GTEST_SKIP() << run.skip;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(25));  // before the 30 s deadline
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ": " + run.said[rank]);
    EXPECT_EQ(run.codes[static_cast<std::size_t>(rank)], kOk);
    EXPECT_EQ(run.said[rank].rfind(std::to_string(static_cast<int>(ncclInvalidUsage)) + " ", 0), 0u);
    EXPECT_NE(run.said[rank].find("refuses the world: ranks on 2 hosts"), std::string::npos);
    EXPECT_NE(run.said[rank].find("has no real NCCL to forward to: PEERLINK_NCCL_FALLBACK=NONE"), std::string::npos);
    EXPECT_EQ(run.said[rank].find("the real NCCL failed it"), std::string::npos);  // neither went there
  }
}

}  // namespace
}  // namespace peerlink::testing
