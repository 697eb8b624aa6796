// LL128 lines under load (coll_ll128.cu): hundreds of all-reduces back to back, LL128-sized and LL-sized
// calls interleaved, each with its own random inputs, captured in one graph (replayed) and eagerly. A
// receiver that took a line whose flag had arrived before the rest of its 128 bytes -- the ordering LL128
// trusts NVLink with -- would reduce the bytes of the call two before (the same scratch slot, other data)
// and fail the comparison; so would LL reading LL128's area or the other way round.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

struct StressCall {
  std::size_t count = 0;
  ReduceOp op = ReduceOp::Sum;
  std::vector<DeviceBuffer> inputs;   // per rank
  std::vector<DeviceBuffer> outputs;  // per rank
  std::vector<std::int32_t> expected;
};

// Call k's shape: 2 KiB (LL), 64 KiB, 12 KiB, 160 KiB (LL128 where the GPUs may carry it), sum or max.
StressCall makeCall(const Communicator& comm, int k, std::mt19937_64& random) {
  constexpr std::size_t kCounts[] = {512, 16384, 3001, 40000};
  StressCall call;
  call.count = kCounts[k % 4];
  call.op = (k / 4) % 2 == 0 ? ReduceOp::Sum : ReduceOp::Max;
  call.expected.assign(call.count, call.op == ReduceOp::Sum ? 0 : INT32_MIN);
  for (int r = 0; r < comm.size(); ++r) {
    std::vector<std::int32_t> input(call.count);
    for (std::size_t i = 0; i < call.count; ++i) {
      input[i] = static_cast<std::int32_t>(random() % 2000001) - 1000000;
      call.expected[i] = call.op == ReduceOp::Sum ? call.expected[i] + input[i] : std::max(call.expected[i], input[i]);
    }
    call.inputs.push_back(DeviceBuffer(comm.device(r), call.count * sizeof(std::int32_t)));
    call.outputs.push_back(filled(comm.device(r), call.count * sizeof(std::int32_t), 0));
    copyToDevice(call.inputs.back().data(), input.data(), call.count * sizeof(std::int32_t));
  }
  return call;
}

void issue(Communicator& comm, std::vector<StressCall>& calls, const std::vector<Stream>& streams) {
  for (StressCall& call : calls) {
    for (int r = 0; r < comm.size(); ++r) {
      const auto rank = static_cast<std::size_t>(r);
      comm.allReduce(r, call.inputs[rank].data(), call.outputs[rank].data(), call.count, DataType::I32, call.op,
                     streams[rank].get());
    }
  }
}

// "" or the first wrong element; clears the outputs for the next run.
std::string checkAndClear(const Communicator& comm, std::vector<StressCall>& calls) {
  for (std::size_t k = 0; k < calls.size(); ++k) {
    StressCall& call = calls[k];
    for (int r = 0; r < comm.size(); ++r) {
      DeviceBuffer& output = call.outputs[static_cast<std::size_t>(r)];
      const std::vector<unsigned char> bytes = downloaded(output);
      const auto* got = reinterpret_cast<const std::int32_t*>(bytes.data());
      for (std::size_t i = 0; i < call.count; ++i) {
        if (got[i] != call.expected[i]) {
          return "call " + std::to_string(k) + " (" + std::to_string(call.count) + " elements), rank " +
                 std::to_string(r) + ", element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", expected " +
                 std::to_string(call.expected[i]);
        }
      }
      on(comm.device(r), [&] {
        PEERLINK_CUDA_CHECK(cudaMemset(output.data(), 0, output.size()));
        PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
      });
    }
  }
  return "";
}

TEST(CommunicatorLl128, InterleavedWithLlBackToBack) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({}));
  const std::string choice = comm.describeChoice(Collective::AllReduce, 64 * 1024);
  if (choice.find("LL128") == std::string::npos) {
    GTEST_SKIP() << "these GPUs do not carry LL128 lines (64 KiB all-reduce: " << choice << ")";
  }
  constexpr int kCalls = 240;
  std::mt19937_64 random(7);
  std::vector<StressCall> calls;
  for (int k = 0; k < kCalls; ++k) calls.push_back(makeCall(comm, k, random));
  const std::vector<Stream> streams = rankStreams(comm);

  for (int round = 0; round < 3; ++round) {
    issue(comm, calls, streams);
    ASSERT_EQ(finishAll(comm, streams), "") << "eager round " << round;
    ASSERT_EQ(checkAndClear(comm, calls), "") << "eager round " << round;
  }
  cudaGraphExec_t exec = captureAll(comm, streams, [&] { issue(comm, calls, streams); });
  for (int replay = 0; replay < 5; ++replay) {
    PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[0].get()));
    ASSERT_EQ(finishAll(comm, streams), "") << "replay " << replay;
    ASSERT_EQ(checkAndClear(comm, calls), "") << "replay " << replay;
  }
  PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
  std::printf("%d all-reduces x 8 runs passed (64 KiB: %s)\n", kCalls, choice.c_str());
}

}  // namespace
}  // namespace peerlink::testing
