// NCCL's API through libpeerlink_nccl.so.2 with one process driving every GPU, as nccl-tests -g N and
// ncclCommInitAll applications do: every collective (ncclGather and ncclScatter too) for every data type and op,
// pre-multiplied sums with host and device scalars, in place and out of place, checked against the host; creation
// in a group, symmetric windows and nccl-tests' teardown order; send/recv rings; CUDA-graph capture; splits; abort.
// Each test runs in a forked child that loads the library after setting what it reads at load (fork before CUDA:
// forked_roles.hpp); with fewer GPUs than ranks, ranks share GPUs (PEERLINK_COLL_SHARE_GPUS, for correctness).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <functional>

#include "forked_roles.hpp"
#include "gpu_test_support.hpp"
#include "nccl_api_support.hpp"

namespace peerlink::testing {
namespace {

constexpr int kRanks = 4;

// Runs `body(api, ranks)` in a child holding `n` ranks of one world created by ncclCommInitAll, rank r on GPU
// r % GPUs, each with a stream of its own.
void inOneProcess(int n, const std::function<int(const NcclApi&, std::vector<NcclRank>&)>& body) {
  Child child("one process, " + std::to_string(n) + " ranks", [&] {
    std::vector<std::pair<std::string, std::string>> settings = {{"PEERLINK_TIMEOUT_MS", "20000"},
                                                                 {"PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000"}};
    if (gpuCount() < n) settings.emplace_back("PEERLINK_COLL_SHARE_GPUS", "1");
    const NcclApi api = loadNccl(settings);
    std::vector<int> devices;
    for (int r = 0; r < n; ++r) devices.push_back(r % gpuCount());
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    api.check(api.commInitAll(comms.data(), n, devices.data()), "ncclCommInitAll");
    std::vector<NcclRank> ranks;
    for (int r = 0; r < n; ++r) {
      NcclRank me{comms[static_cast<std::size_t>(r)], r, devices[static_cast<std::size_t>(r)], nullptr};
      PEERLINK_CUDA_CHECK(cudaSetDevice(me.device));
      PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&me.stream, cudaStreamNonBlocking));
      ranks.push_back(me);
    }
    const int result = body(api, ranks);
    for (const NcclRank& me : ranks) {
      if (me.comm != nullptr) api.check(api.commDestroy(me.comm), "ncclCommDestroy");
    }
    return result;
  });
  expectAllOk({&child});
}

int fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  return kWrong;
}

TEST(NcclApiOneProcess, EveryReductionOfEveryTypeAndOp) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(kRanks, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    for (int t = 0; t < ncclNumTypes; ++t) {
      const auto type = static_cast<ncclDataType_t>(t);
      for (const NcclCall call : {NcclCall::AllReduce, NcclCall::Reduce, NcclCall::ReduceScatter}) {
        for (int op = 0; op < 7; ++op) {  // sum, prod, max, min, avg, premul host, premul device
          for (const std::size_t count : {std::size_t{1001}, (std::size_t{1} << 18) + 3}) {
            for (const bool inPlace : {false, true}) {
              NcclCase c;
              c.call = call;
              c.type = type;
              c.op = op < ncclNumOps ? static_cast<ncclRedOp_t>(op) : ncclSum;
              c.premul = op >= ncclNumOps;
              c.deviceScalar = op == 6;
              c.count = count;
              c.root = 1;
              c.inPlace = inPlace;
              const std::string problem = runNcclCase(api, ranks, kRanks, c);
              if (!problem.empty()) return fail(problem);
            }
          }
        }
      }
    }
    return kOk;
  });
}

TEST(NcclApiOneProcess, EveryCopyCollectiveIncludingGatherAndScatter) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(kRanks, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    for (const ncclDataType_t type : {ncclFloat32, ncclUint8, ncclFloat8e4m3, ncclBfloat16, ncclInt64}) {
      for (const NcclCall call :
           {NcclCall::Broadcast, NcclCall::AllGather, NcclCall::AllToAll, NcclCall::Gather, NcclCall::Scatter}) {
        for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1001}, std::size_t{300000}}) {
          for (const bool inPlace : {false, true}) {
            NcclCase c;
            c.call = call;
            c.type = type;
            c.count = count;
            c.root = 2;
            c.inPlace = inPlace;
            const std::string problem = runNcclCase(api, ranks, kRanks, c);
            if (!problem.empty()) return fail(problem);
          }
        }
      }
    }
    return kOk;
  });
}

TEST(NcclApiOneProcess, TheNullStreamServesCalls) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(2, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    for (NcclRank& me : ranks) me.stream = nullptr;
    if (ranks[0].device == ranks[1].device) {
      // Two ranks on one GPU cannot share its null stream (their kernels would wait for each other): refused at
      // once with the reason, not left to the deadline.
      void* buffer = nullptr;
      PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[0].device));
      api.check(api.memAlloc(&buffer, 4096), "ncclMemAlloc");
      const auto started = std::chrono::steady_clock::now();
      // The set is launched (here: refused) when its last rank calls, inside that call or at ncclGroupEnd.
      api.check(api.groupStart(), "ncclGroupStart");
      ncclResult_t result = ncclSuccess;
      for (const NcclRank& me : ranks) {
        const ncclResult_t called = api.allReduce(buffer, buffer, 1, ncclFloat32, ncclSum, me.comm, nullptr);
        if (result == ncclSuccess) result = called;
      }
      const ncclResult_t ended = api.groupEnd();
      if (result == ncclSuccess) result = ended;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const std::string why = api.getLastError(nullptr);
      api.check(api.memFree(buffer), "ncclMemFree");
      if (result != ncclInvalidUsage || why.find("same stream") == std::string::npos || seconds > 5) {
        return fail(fmt::format("two ranks on GPU {} on the null stream: result {} after {:.1f} s: {}", ranks[0].device,
                                static_cast<int>(result), seconds, why));
      }
      return kOk;
    }
    NcclCase c;
    c.type = ncclBfloat16;
    c.op = ncclAvg;
    const std::string problem = runNcclCase(api, ranks, 2, c);
    return problem.empty() ? kOk : fail(problem);
  });
}

// nccl-tests' way: an id, every rank created in one group from one thread with a config, buffers from
// ncclMemAlloc registered as symmetric windows in a group, collectives on them, then for each rank in turn its
// windows deregistered and the rank destroyed.
TEST(NcclApiOneProcess, CreationInAGroupWindowsAndNcclTestsTeardown) {
  PEERLINK_REQUIRE_ONE_GPU();
  Child child("nccl-tests' way", [&] {
    std::vector<std::pair<std::string, std::string>> settings = {{"PEERLINK_TIMEOUT_MS", "20000"}};
    if (gpuCount() < kRanks) settings.emplace_back("PEERLINK_COLL_SHARE_GPUS", "1");
    const NcclApi api = loadNccl(settings);
    ncclUniqueId id;
    api.check(api.getUniqueId(&id), "ncclGetUniqueId");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.nvlinkCentricSched = 1;
    std::vector<NcclRank> ranks(kRanks);
    api.check(api.groupStart(), "ncclGroupStart");
    for (int r = 0; r < kRanks; ++r) {
      ranks[static_cast<std::size_t>(r)].rank = r;
      ranks[static_cast<std::size_t>(r)].device = r % gpuCount();
      PEERLINK_CUDA_CHECK(cudaSetDevice(r % gpuCount()));
      api.check(api.commInitRankConfig(&ranks[static_cast<std::size_t>(r)].comm, kRanks, id, r, &config),
                "ncclCommInitRankConfig");
    }
    api.check(api.groupEnd(), "ncclGroupEnd");
    const std::size_t count = (std::size_t{4} << 20) + 5;  // past the LL sizes: peers' windows read directly
    std::vector<void*> send(kRanks);
    std::vector<void*> recv(kRanks);
    std::vector<ncclWindow_t> windows(2 * kRanks);
    api.check(api.groupStart(), "ncclGroupStart");
    for (int r = 0; r < kRanks; ++r) {
      NcclRank& me = ranks[static_cast<std::size_t>(r)];
      PEERLINK_CUDA_CHECK(cudaSetDevice(me.device));
      PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&me.stream, cudaStreamNonBlocking));
      api.check(api.memAlloc(&send[static_cast<std::size_t>(r)], count * 4), "ncclMemAlloc");
      api.check(api.memAlloc(&recv[static_cast<std::size_t>(r)], count * 4), "ncclMemAlloc");
      api.check(api.commWindowRegister(me.comm, send[static_cast<std::size_t>(r)], count * 4,
                                       &windows[static_cast<std::size_t>(2 * r)], NCCL_WIN_COLL_SYMMETRIC),
                "ncclCommWindowRegister");
      api.check(api.commWindowRegister(me.comm, recv[static_cast<std::size_t>(r)], count * 4,
                                       &windows[static_cast<std::size_t>(2 * r + 1)], NCCL_WIN_COLL_SYMMETRIC),
                "ncclCommWindowRegister");
    }
    api.check(api.groupEnd(), "ncclGroupEnd");
    NcclCase c;
    c.count = count;
    for (int r = 0; r < kRanks; ++r) {
      std::vector<float> input(count);
      for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<float>(inputValue(c, r, i));
      PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
      PEERLINK_CUDA_CHECK(
          cudaMemcpy(send[static_cast<std::size_t>(r)], input.data(), count * 4, cudaMemcpyHostToDevice));
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // landed before the non-blocking stream reads it
    }
    for (int iteration = 0; iteration < 3; ++iteration) {
      api.check(api.groupStart(), "ncclGroupStart");
      for (int r = 0; r < kRanks; ++r) {
        const NcclRank& me = ranks[static_cast<std::size_t>(r)];
        api.check(api.allReduce(send[static_cast<std::size_t>(r)], recv[static_cast<std::size_t>(r)], count,
                                ncclFloat32, ncclSum, me.comm, me.stream),
                  "ncclAllReduce");
      }
      api.check(api.groupEnd(), "ncclGroupEnd");
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        if (!finishes(ranks[static_cast<std::size_t>(r)].stream, kNcclStreamSeconds)) return fail("did not finish");
        std::vector<float> output(count);
        PEERLINK_CUDA_CHECK(
            cudaMemcpy(output.data(), recv[static_cast<std::size_t>(r)], count * 4, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < count; ++i) {
          if (output[i] != static_cast<float>(reduced(c, kRanks, i))) {
            return fail(fmt::format("rank {} element {}: {}", r, i, output[i]));
          }
        }
      }
    }
    for (int r = 0; r < kRanks; ++r) {
      const NcclRank& me = ranks[static_cast<std::size_t>(r)];
      api.check(api.commWindowDeregister(me.comm, windows[static_cast<std::size_t>(2 * r)]), "deregister");
      api.check(api.commWindowDeregister(me.comm, windows[static_cast<std::size_t>(2 * r + 1)]), "deregister");
      api.check(api.commDestroy(me.comm), "ncclCommDestroy");
    }
    for (int r = 0; r < kRanks; ++r) {
      api.check(api.memFree(send[static_cast<std::size_t>(r)]), "ncclMemFree");
      api.check(api.memFree(recv[static_cast<std::size_t>(r)]), "ncclMemFree");
    }
    return kOk;
  });
  expectAllOk({&child});
}

TEST(NcclApiOneProcess, SendRecvRingsBothWays) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(kRanks, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    for (const std::size_t count : {std::size_t{7}, std::size_t{1} << 20}) {
      std::vector<void*> out(kRanks);
      std::vector<void*> in(kRanks * 2);
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        api.check(api.memAlloc(&out[static_cast<std::size_t>(r)], count * 4), "ncclMemAlloc");
        api.check(api.memAlloc(&in[static_cast<std::size_t>(2 * r)], count * 4), "ncclMemAlloc");
        api.check(api.memAlloc(&in[static_cast<std::size_t>(2 * r + 1)], count * 4), "ncclMemAlloc");
        std::vector<std::int32_t> values(count, r + 1);
        PEERLINK_CUDA_CHECK(
            cudaMemcpy(out[static_cast<std::size_t>(r)], values.data(), count * 4, cudaMemcpyHostToDevice));
        PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // landed before the non-blocking stream reads it
      }
      api.check(api.groupStart(), "ncclGroupStart");
      for (int r = 0; r < kRanks; ++r) {
        const NcclRank& me = ranks[static_cast<std::size_t>(r)];
        const int next = (r + 1) % kRanks;
        const int previous = (r + kRanks - 1) % kRanks;
        api.check(api.send(out[static_cast<std::size_t>(r)], count, ncclInt32, next, me.comm, me.stream), "send");
        api.check(api.send(out[static_cast<std::size_t>(r)], count, ncclInt32, previous, me.comm, me.stream), "send");
        api.check(api.recv(in[static_cast<std::size_t>(2 * r)], count, ncclInt32, previous, me.comm, me.stream),
                  "recv");
        api.check(api.recv(in[static_cast<std::size_t>(2 * r + 1)], count, ncclInt32, next, me.comm, me.stream),
                  "recv");
      }
      api.check(api.groupEnd(), "ncclGroupEnd");
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        if (!finishes(ranks[static_cast<std::size_t>(r)].stream, kNcclStreamSeconds)) return fail("ring stuck");
        for (int side = 0; side < 2; ++side) {
          std::vector<std::int32_t> got(count);
          PEERLINK_CUDA_CHECK(
              cudaMemcpy(got.data(), in[static_cast<std::size_t>(2 * r + side)], count * 4, cudaMemcpyDeviceToHost));
          const int from = side == 0 ? (r + kRanks - 1) % kRanks : (r + 1) % kRanks;
          for (const std::int32_t value : got) {
            if (value != from + 1) return fail(fmt::format("rank {} got {} from rank {}", r, value, from));
          }
        }
        api.check(api.memFree(out[static_cast<std::size_t>(r)]), "ncclMemFree");
        api.check(api.memFree(in[static_cast<std::size_t>(2 * r)]), "ncclMemFree");
        api.check(api.memFree(in[static_cast<std::size_t>(2 * r + 1)]), "ncclMemFree");
      }
    }
    return kOk;
  });
}

// `count` elements of `value` as bytes of `type`: f32, or FP8 e4m3 for a small whole value (1.0 .. 15.0, each
// exact in e4m3's 3 mantissa bits).
std::vector<unsigned char> filled(ncclDataType_t type, std::size_t count, int value) {
  if (type == ncclFloat32) {
    std::vector<unsigned char> bytes(count * sizeof(float));
    const auto element = static_cast<float>(value);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(bytes.data() + i * sizeof(float), &element, sizeof(float));
    return bytes;
  }
  int exponent = 0;
  while ((value >> (exponent + 1)) != 0) ++exponent;
  const int mantissa = ((value << 3) >> exponent) & 7;  // exact for 1..15
  return std::vector<unsigned char>(count, static_cast<unsigned char>(((exponent + 7) << 3) | mantissa));
}

// One all-reduce of each rank captured into a graph on its stream, inside one group, replayed: in f32, and in FP8,
// whose calls run the shim's own widening kernels on scratch the capture must keep.
TEST(NcclApiOneProcess, CallsCapturedInGraphsReplay) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(kRanks, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    const std::size_t count = 100000;
    for (const ncclDataType_t type : {ncclFloat32, ncclFloat8e4m3}) {
      const char* typeName = type == ncclFloat32 ? "f32" : "fp8 e4m3";
      const std::size_t bytes = filled(type, count, 1).size();
      std::vector<void*> buffers(kRanks);
      std::vector<cudaGraph_t> graphs(kRanks);
      std::vector<cudaGraphExec_t> execs(kRanks);
      // Every allocation before the first capture begins: while a stream captures in global mode, cudaMalloc fails
      // on every thread of the process.
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        api.check(api.memAlloc(&buffers[static_cast<std::size_t>(r)], bytes), "ncclMemAlloc");
      }
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        PEERLINK_CUDA_CHECK(
            cudaStreamBeginCapture(ranks[static_cast<std::size_t>(r)].stream, cudaStreamCaptureModeGlobal));
      }
      api.check(api.groupStart(), "ncclGroupStart");
      for (int r = 0; r < kRanks; ++r) {
        const NcclRank& me = ranks[static_cast<std::size_t>(r)];
        api.check(api.allReduce(buffers[static_cast<std::size_t>(r)], buffers[static_cast<std::size_t>(r)], count, type,
                                ncclSum, me.comm, me.stream),
                  "captured ncclAllReduce");
      }
      api.check(api.groupEnd(), "ncclGroupEnd");
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        PEERLINK_CUDA_CHECK(
            cudaStreamEndCapture(ranks[static_cast<std::size_t>(r)].stream, &graphs[static_cast<std::size_t>(r)]));
      }
      for (int r = 0; r < kRanks; ++r) {  // once no stream captures (instantiating is not allowed during one)
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        PEERLINK_CUDA_CHECK(
            cudaGraphInstantiate(&execs[static_cast<std::size_t>(r)], graphs[static_cast<std::size_t>(r)], 0));
      }
      for (int replay = 1; replay <= 3; ++replay) {
        // f32: rank r adds replay * (r + 1); FP8: every rank adds replay, so every partial sum stays exact.
        const auto input = [&](int r) { return type == ncclFloat32 ? replay * (r + 1) : replay; };
        int sum = 0;
        for (int r = 0; r < kRanks; ++r) {
          PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
          const std::vector<unsigned char> values = filled(type, count, input(r));
          sum += input(r);
          PEERLINK_CUDA_CHECK(
              cudaMemcpy(buffers[static_cast<std::size_t>(r)], values.data(), bytes, cudaMemcpyHostToDevice));
          PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // landed before the non-blocking stream reads it
        }
        for (int r = 0; r < kRanks; ++r) {
          PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
          PEERLINK_CUDA_CHECK(
              cudaGraphLaunch(execs[static_cast<std::size_t>(r)], ranks[static_cast<std::size_t>(r)].stream));
        }
        const std::vector<unsigned char> want = filled(type, count, sum);
        for (int r = 0; r < kRanks; ++r) {
          PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
          if (!finishes(ranks[static_cast<std::size_t>(r)].stream, kNcclStreamSeconds)) {
            return fail(fmt::format("{} replay stuck", typeName));
          }
          std::vector<unsigned char> got(bytes);
          PEERLINK_CUDA_CHECK(
              cudaMemcpy(got.data(), buffers[static_cast<std::size_t>(r)], bytes, cudaMemcpyDeviceToHost));
          const auto wrong = std::mismatch(got.begin(), got.end(), want.begin());
          if (wrong.first != got.end()) {
            return fail(fmt::format("{} replay {} rank {}: byte {} is 0x{:02x}, 0x{:02x} due (a sum of {})", typeName,
                                    replay, r, wrong.first - got.begin(), *wrong.first, *wrong.second, sum));
          }
        }
      }
      for (int r = 0; r < kRanks; ++r) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(r)].device));
        PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(execs[static_cast<std::size_t>(r)]));
        PEERLINK_CUDA_CHECK(cudaGraphDestroy(graphs[static_cast<std::size_t>(r)]));
        api.check(api.memFree(buffers[static_cast<std::size_t>(r)]), "ncclMemFree");
      }
    }
    return kOk;
  });
}

// ncclCommSplit by parity in one group: two worlds of two ranks each, each reducing on its own.
TEST(NcclApiOneProcess, SplitByParityMakesTwoWorlds) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(kRanks, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    std::vector<ncclComm_t> made(kRanks);
    api.check(api.groupStart(), "ncclGroupStart");
    for (int r = 0; r < kRanks; ++r) {
      api.check(
          api.commSplit(ranks[static_cast<std::size_t>(r)].comm, r % 2, r, &made[static_cast<std::size_t>(r)], nullptr),
          "ncclCommSplit");
    }
    api.check(api.groupEnd(), "ncclGroupEnd");
    for (int color = 0; color < 2; ++color) {
      std::vector<NcclRank> members;
      for (int r = color; r < kRanks; r += 2) {
        NcclRank me = ranks[static_cast<std::size_t>(r)];
        me.comm = made[static_cast<std::size_t>(r)];
        int count = 0;
        api.check(api.commCount(me.comm, &count), "ncclCommCount");
        api.check(api.commUserRank(me.comm, &me.rank), "ncclCommUserRank");
        if (count != 2 || me.rank != r / 2) return fail(fmt::format("rank {}: {} of {}", r, me.rank, count));
        members.push_back(me);
      }
      NcclCase c;
      c.type = ncclInt32;
      c.op = ncclMax;
      const std::string problem = runNcclCase(api, members, 2, c);
      if (!problem.empty()) return fail("after the split: " + problem);
    }
    for (ncclComm_t comm : made) api.check(api.commDestroy(comm), "ncclCommDestroy");
    return kOk;
  });
}

TEST(NcclApiOneProcess, AbortFailsTheOtherRanksCallsAtOnce) {
  PEERLINK_REQUIRE_ONE_GPU();
  inOneProcess(2, [](const NcclApi& api, std::vector<NcclRank>& ranks) {
    api.check(api.commAbort(ranks[0].comm), "ncclCommAbort");
    ranks[0].comm = nullptr;
    void* buffer = nullptr;
    api.check(api.memAlloc(&buffer, 1024), "ncclMemAlloc");
    const ncclResult_t result = api.allReduce(buffer, buffer, 16, ncclFloat32, ncclSum, ranks[1].comm, ranks[1].stream);
    api.check(api.memFree(buffer), "ncclMemFree");
    if (result != ncclRemoteError) return fail(fmt::format("after abort: {}", static_cast<int>(result)));
    return kOk;
  });
}

}  // namespace
}  // namespace peerlink::testing
