// Bad calls to the communicator: each throws Error(InvalidUsage) before anything is launched, names the
// call and the rank, and leaves the communicator usable (a correct all-reduce afterwards matches the host
// reference).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

class CommunicatorErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    PEERLINK_REQUIRE_COMMUNICATOR(devices_);
    comm_ = std::make_unique<Communicator>(devices_, paramsWith({}));
    n_ = comm_->size();
    streams_ = rankStreams(*comm_);
    for (int r = 0; r < n_; ++r) buffers_.push_back(filled(comm_->device(r), kBytes, 0));
  }

  // `call` throws Error(InvalidUsage) whose message contains `words`; then the communicator still works.
  void expectInvalid(const std::function<void()>& call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning \"" << words << "\"";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
      EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    }
    CollCase c;
    c.count = 777;
    c.seed = ++seed_;
    EXPECT_EQ(runCase(*comm_, c), "") << "after the error about \"" << words << "\"";
  }

  void* buffer(int rank, std::size_t offset = 0) {
    return static_cast<unsigned char*>(buffers_[static_cast<std::size_t>(rank)].data()) + offset;
  }
  cudaStream_t stream(int rank) { return streams_[static_cast<std::size_t>(rank)].get(); }

  static constexpr std::size_t kBytes = 1 << 20;
  std::vector<int> devices_;
  std::unique_ptr<Communicator> comm_;
  int n_ = 0;
  std::vector<Stream> streams_;
  std::vector<DeviceBuffer> buffers_;
  std::uint64_t seed_ = 0;
};

TEST_F(CommunicatorErrors, RankOutOfRange) {
  expectInvalid([&] { comm_->allReduce(n_, buffer(0), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "out of range");
  expectInvalid([&] { comm_->allReduce(-1, buffer(0), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "out of range");
}

TEST_F(CommunicatorErrors, NullHostAndForeignBuffers) {
  expectInvalid([&] { comm_->allReduce(0, nullptr, buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); }, "null");
  std::vector<float> host(16);
  expectInvalid([&] { comm_->allReduce(0, host.data(), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "not CUDA memory");
  expectInvalid([&] { comm_->allReduce(0, buffer(1), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "belongs to GPU");
  expectInvalid([&] { comm_->allReduce(0, buffer(0, 2), buffer(0, 64), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "aligned");
}

// Pinned host memory and a freed allocation are refused as what they are.
TEST_F(CommunicatorErrors, PinnedAndFreedBuffers) {
  PinnedBuffer pinned(kBytes);
  expectInvalid([&] { comm_->allReduce(0, pinned.data(), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "pinned host memory");
  void* freed = nullptr;
  {
    DeviceBuffer gone(comm_->device(0), kBytes);
    freed = gone.data();
  }
  expectInvalid([&] { comm_->allReduce(0, freed, buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "not CUDA memory");
}

// The buffer checks ask the driver first, which may answer differently on a thread that has never made a
// GPU current: the same errors from such a thread.
TEST_F(CommunicatorErrors, BufferChecksFromAFreshThread) {
  std::vector<float> host(16);
  std::string foreign;
  std::string plain;
  std::thread fresh([&] {
    const auto message = [](const std::function<void()>& call) -> std::string {
      try {
        call();
      } catch (const Error& error) {
        return error.what();
      }
      return "no error";
    };
    foreign = message([&] { comm_->allReduce(0, buffer(1), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); });
    plain = message([&] { comm_->allReduce(0, host.data(), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(0)); });
  });
  fresh.join();
  EXPECT_NE(foreign.find("belongs to GPU"), std::string::npos) << foreign;
  EXPECT_NE(plain.find("not CUDA memory"), std::string::npos) << plain;
  CollCase c;
  c.count = 777;
  EXPECT_EQ(runCase(*comm_, c), "");
}

TEST_F(CommunicatorErrors, StreamOfAnotherGpu) {
  expectInvalid([&] { comm_->allReduce(0, buffer(0), buffer(0), 16, DataType::F32, ReduceOp::Sum, stream(1)); },
                "stream belongs to GPU");
}

TEST_F(CommunicatorErrors, UnsupportedOpRootAndAliasing) {
  expectInvalid([&] { comm_->allReduce(0, buffer(0), buffer(0), 16, DataType::I32, ReduceOp::Avg, stream(0)); }, "avg");
  expectInvalid([&] { comm_->broadcast(0, buffer(0), buffer(0), 16, DataType::F32, n_, stream(0)); }, "root");
  expectInvalid([&] { comm_->reduce(0, buffer(0), buffer(0), 16, DataType::F32, ReduceOp::Sum, -1, stream(0)); },
                "root");
  expectInvalid([&] { comm_->allToAll(0, buffer(0), buffer(0, 64), 16, DataType::F32, stream(0)); }, "overlap");
  expectInvalid([&] { comm_->allReduce(0, buffer(0), buffer(0, 16), 16, DataType::F32, ReduceOp::Sum, stream(0)); },
                "overlap");
  expectInvalid([&] { comm_->allGather(0, buffer(0, 4), buffer(0), 16, DataType::F32, stream(0)); }, "in-place");
}

// A set whose calls disagree: the call that completes the set throws naming the difference; nothing runs.
TEST_F(CommunicatorErrors, MismatchedCallsAcrossRanks) {
  const auto mismatch = [&](const std::function<void(int)>& odd, const std::string& words) {
    expectInvalid(
        [&] {
          for (int r = 0; r < n_; ++r) {
            if (r == n_ - 1) {
              odd(r);
            } else {
              comm_->allReduce(r, buffer(r), buffer(r, 4096), 100, DataType::F32, ReduceOp::Sum, stream(r));
            }
          }
        },
        words);
  };
  mismatch(
      [&](int r) { comm_->allReduce(r, buffer(r), buffer(r, 4096), 101, DataType::F32, ReduceOp::Sum, stream(r)); },
      "count");
  mismatch(
      [&](int r) { comm_->allReduce(r, buffer(r), buffer(r, 4096), 100, DataType::I32, ReduceOp::Sum, stream(r)); },
      "data type");
  mismatch(
      [&](int r) { comm_->allReduce(r, buffer(r), buffer(r, 4096), 100, DataType::F32, ReduceOp::Max, stream(r)); },
      "op");
  mismatch([&](int r) { comm_->broadcast(r, buffer(r), buffer(r, 4096), 100, DataType::F32, 0, stream(r)); },
           "collective");
}

TEST_F(CommunicatorErrors, UnmatchedSendRecvAndGroups) {
  expectInvalid([&] { comm_->groupEnd(); }, "no group");
  expectInvalid(
      [&] {
        comm_->groupStart();
        comm_->send(0, buffer(0), 16, DataType::F32, 1, stream(0));
        comm_->groupEnd();
      },
      "no matching recv");
  expectInvalid(
      [&] {
        comm_->groupStart();
        comm_->send(0, buffer(0), 16, DataType::F32, 1, stream(0));
        comm_->recv(1, buffer(1), 17, DataType::F32, 0, stream(1));
        comm_->groupEnd();
      },
      "expects");
  expectInvalid([&] { comm_->send(0, buffer(0), 16, DataType::F32, n_, stream(0)); }, "peer");
}

// One rank's stream captured into a graph, the others' not: the set (a collective) or the group (send/recv)
// throws naming the rank before anything is launched, and the capture holds nothing of it.
TEST_F(CommunicatorErrors, CaptureOfSomeStreamsOnly) {
  const int captured = n_ - 1;
  const auto withCapture = [&](const std::function<void()>& calls, const std::string& words) {
    expectInvalid(
        [&] {
          PEERLINK_CUDA_CHECK(cudaSetDevice(comm_->device(captured)));
          PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(stream(captured), cudaStreamCaptureModeRelaxed));
          std::string thrown;
          try {
            calls();
          } catch (const Error&) {
            cudaGraph_t graph = nullptr;
            PEERLINK_CUDA_CHECK(cudaStreamEndCapture(stream(captured), &graph));
            std::size_t nodes = 1;
            PEERLINK_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
            EXPECT_EQ(nodes, 0u) << "a launch reached the capture";
            PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
            throw;
          }
          cudaGraph_t graph = nullptr;
          PEERLINK_CUDA_CHECK(cudaStreamEndCapture(stream(captured), &graph));
          PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
        },
        words);
  };
  withCapture(
      [&] {
        for (int r = 0; r < n_; ++r) {
          comm_->allReduce(r, buffer(r), buffer(r, 4096), 100, DataType::F32, ReduceOp::Sum, stream(r));
        }
      },
      "being captured into a graph while rank 0's is not");
  withCapture(
      [&] {
        comm_->groupStart();
        for (int r = 0; r < n_; ++r) {
          const int next = (r + 1) % n_;
          const int previous = (r + n_ - 1) % n_;
          comm_->send(r, buffer(r), 100, DataType::F32, next, stream(r));
          comm_->recv(r, buffer(r, 4096), 100, DataType::F32, previous, stream(r));
        }
        comm_->groupEnd();
      },
      "capture the streams of every rank in a send/recv group or none");
}

// Send/recv outside a group: launched when the partner's call arrives.
TEST_F(CommunicatorErrors, LooseSendRecvPairs) {
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  copyToDevice(buffer(0), values.data(), values.size() * sizeof(float));
  comm_->recv(1, buffer(1), values.size(), DataType::F32, 0, stream(1));
  comm_->send(0, buffer(0), values.size(), DataType::F32, 1, stream(0));
  ASSERT_EQ(finishAll(*comm_, streams_), "");
  std::vector<float> got(values.size());
  PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), buffer(1), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, values);
}

}  // namespace
}  // namespace peerlink::testing
