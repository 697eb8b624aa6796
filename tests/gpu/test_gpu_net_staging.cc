// The transport between nodes' staged path on a GPU (src/net/cuda_device_access.cc, gpu_staged_memory.cc): ranks of
// a loopback world in one process, their buffers in GPU memory, pieces copied to pinned host memory on the
// transport's own stream while the previous piece's messages move, and the received pieces reduced by kernels that
// read the pinned memory (PEERLINK_NET_REDUCE=GPU), on the host (HOST), or both in one call (AUTO: the small last
// piece on the host); results checked on the host against the closed forms. The MPI side of the same path runs in CPU
// tests (tests/mpi/, scripts/net-test.sh); this shows the GPU's copies and reductions.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coll/choice_rules.hpp"
#include "coll/host_reduce.hpp"
#include "coll_lists.hpp"
#include "gpu_test_support.hpp"
#include "kernels/async_call.cuh"
#include "net/cuda_device_access.hpp"
#include "net/gpu_staged_memory.hpp"
#include "net/net_world.hpp"
#include "net/queued_computations.hpp"
#include "net_test_data.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::net {
namespace {

using coll::Bytes;

// Runs body(rank, world) for every rank of a loopback world of `n` on GPU 0; returns each rank's error text.
// `gpuReduceMinBytes`: NetOptions' (AUTO's threshold).
std::vector<std::string> onGpuRanks(int n, NetReduce reduce, std::size_t chunkBytes, std::size_t gpuReduceMinBytes,
                                    const std::function<void(int, NetWorld&)>& body) {
  std::vector<std::unique_ptr<PointToPoint>> p2p = loopbackWorld(n);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        NetOptions options;
        options.timeout = std::chrono::milliseconds(20000);
        options.chunkBytes = chunkBytes;
        options.path = NetPath::Staged;
        options.reduce = reduce;
        options.gpuReduceMinBytes = gpuReduceMinBytes;
        NetWorld world(std::move(p2p[static_cast<std::size_t>(r)]), options, cudaDeviceAccess(0),
                       std::make_unique<HostMemory>());
        body(r, world);
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

void toGpu(void* device, const Bytes& host) {
  if (!host.empty() && cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice) != cudaSuccess) {
    throw std::runtime_error("cudaMemcpy to the GPU failed");
  }
}

Bytes fromGpu(const void* device, std::size_t bytes) {
  Bytes host(bytes);
  if (bytes > 0 && cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    throw std::runtime_error("cudaMemcpy from the GPU failed");
  }
  return host;
}

TEST(GpuNetStaging, AllReduceAndAllGatherThroughPinnedMemory) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::size_t count = std::size_t{1} << 20;  // 4 MiB of f32: 16 pieces of 256 KiB
  for (const NetReduce reduce : {NetReduce::Gpu, NetReduce::Host}) {
    std::vector<std::vector<float>> reduced(2), gathered(2);
    const auto errors = onGpuRanks(2, reduce, 256 << 10, kGpuReduceMinBytes, [&](int r, NetWorld& world) {
      const auto i = static_cast<std::size_t>(r);
      auto group = world.group({0, 1}, "two");
      std::vector<float> host(count);
      for (std::size_t k = 0; k < count; ++k) host[k] = static_cast<float>((k % 1000) * (r + 1));
      DeviceBuffer send(0, count * sizeof(float)), recv(0, 2 * count * sizeof(float));
      toGpu(send.data(), Bytes(reinterpret_cast<const std::byte*>(host.data()),
                               reinterpret_cast<const std::byte*>(host.data() + count)));
      group->allReduce(send.data(), recv.data(), count, DataType::F32, ReduceOp::Sum);
      reduced[i].resize(count);
      cudaMemcpy(reduced[i].data(), recv.data(), count * sizeof(float), cudaMemcpyDeviceToHost);
      group->allGather(send.data(), recv.data(), count, DataType::F32);
      gathered[i].resize(2 * count);
      cudaMemcpy(gathered[i].data(), recv.data(), 2 * count * sizeof(float), cudaMemcpyDeviceToHost);
    });
    const char* name = reduce == NetReduce::Gpu ? "reductions on the GPU" : "reductions on the host";
    for (int r = 0; r < 2; ++r) {
      const auto i = static_cast<std::size_t>(r);
      ASSERT_EQ(errors[i], "") << name;
      for (std::size_t k = 0; k < count; k += 997) {
        ASSERT_EQ(reduced[i][k], static_cast<float>((k % 1000) * 3)) << name << ", element " << k;
        ASSERT_EQ(gathered[i][k], static_cast<float>(k % 1000)) << name;
        ASSERT_EQ(gathered[i][count + k], static_cast<float>((k % 1000) * 2)) << name;
      }
    }
  }
}

// Every reducing collective and flat algorithm on 3 ranks, out of place and in place, f32 sum, f16 avg, i32 max,
// pieces of 4 KiB, reduced on the GPU (GPU), and as AUTO chooses with the threshold a full piece's largest reduction:
// a call of several pieces (5000 elements a block, the last piece smaller) on the GPU, a call of one smaller piece
// (1000) on the host, reading and writing pinned pieces of GPU data: against the closed forms.
TEST(GpuNetStaging, EveryReductionOnTheGpuMatchesTheClosedForms) {
  PEERLINK_REQUIRE_GPUS(1);
  const int n = 3;
  const int root = 1;
  int calls = 0;
  for (const Collective collective : {Collective::AllReduce, Collective::ReduceScatter, Collective::Reduce}) {
    for (const Algorithm algorithm : coll::algorithmsOf(collective)) {
      for (const bool inPlace : {false, true}) {
        for (const auto& [type, op] : {std::pair{DataType::F32, ReduceOp::Sum}, std::pair{DataType::F16, ReduceOp::Avg},
                                       std::pair{DataType::I32, ReduceOp::Max}}) {
          for (const auto& [reduce, count] :
               {std::pair{NetReduce::Gpu, std::size_t{5000}}, std::pair{NetReduce::Auto, std::size_t{5000}},
                std::pair{NetReduce::Auto, std::size_t{1000}}}) {
            const std::size_t size = dataTypeSize(type);
            const std::size_t chunk = 4096;
            NetCall shape{collective, count, type, op, 0, root};
            shape.algorithm = algorithm;
            const std::size_t gpuMinBytes = largestReductionBytes(callPlan(shape, n, chunk / size));
            const std::size_t pieces = (count * size + chunk - 1) / chunk;
            const bool onHost = reducesOnHost(callPlan(shape, n, std::min(count, chunk / size)), pieces, gpuMinBytes);
            ASSERT_EQ(onHost, reduce == NetReduce::Auto && pieces == 1)
                << count << " elements: " << pieces << " piece(s) of " << chunk << " B";
            const std::vector<Bytes> sends = testing::everySend(collective, type, n, count, root);
            std::vector<Bytes> got(n);
            const auto errors = onGpuRanks(n, reduce, chunk, gpuMinBytes, [&](int r, NetWorld& world) {
              const auto i = static_cast<std::size_t>(r);
              auto group = world.group({0, 1, 2}, "three");
              const std::size_t recvBytes = recvElementsOf(collective, n, count, r, root) * size;
              DeviceBuffer send(0, std::max<std::size_t>(sends[i].size(), 16));
              DeviceBuffer recv(0, std::max<std::size_t>(recvBytes, 16));
              toGpu(send.data(), sends[i]);
              // The API's in-place forms: reduce-scatter's recv is block r of its send buffer; all-reduce's and the
              // root's reduce one buffer.
              void* in = send.data();
              void* out = recv.data();
              if (inPlace && collective == Collective::ReduceScatter) {
                out = static_cast<std::byte*>(send.data()) + i * count * size;
              } else if (inPlace && recvBytes > 0) {
                out = send.data();
              }
              NetCall call{collective, count, type, op, 0, root, in, out};
              call.algorithm = algorithm;
              group->run(call);
              got[i] = fromGpu(out, recvBytes);
            });
            const std::string what = std::string(collectiveName(collective)) + '/' + algorithmName(algorithm) +
                                     (inPlace ? " in place " : " ") + dataTypeName(type) + " count " +
                                     std::to_string(count) + (onHost ? ", on the host" : ", on the GPU");
            const std::vector<Bytes> want = coll::hostReduceReference(collective, type, op, n, count, root, sends);
            const coll::Tolerance tol = coll::tolerance(type, op, n, 8.0);
            for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
              ASSERT_EQ(errors[r], "") << what;
              if (want[r].empty()) continue;  // reduce off the root
              const auto mismatch = coll::findMismatch(type, tol, want[r], got[r]);
              ASSERT_FALSE(mismatch) << what << " rank " << r << ": " << *mismatch;
            }
            ++calls;
          }
        }
      }
    }
  }
  RecordProperty("calls", calls);
}

// The memory itself: reductions queued on the GPU over its pinned buffers, in order, done once reached() says so;
// more sources than a kernel takes (in several launches), the destination one of them.
TEST(GpuNetStaging, ReductionsQueuedOnTheGpuOverPinnedMemory) {
  PEERLINK_REQUIRE_GPUS(1);
  std::unique_ptr<LocalMemory> memory = gpuStagedMemory(0);
  ASSERT_TRUE(memory->queues());
  EXPECT_TRUE(memory->reached(0));
  const std::size_t count = 300000;
  std::vector<float*> sources;
  for (int s = 0; s < 10; ++s) {
    auto* pinned = static_cast<float*>(memory->temporary(0, count * sizeof(float)));
    for (std::size_t k = 0; k < count; ++k) pinned[k] = static_cast<float>(s + 1);
    sources.push_back(pinned);
  }
  auto* sum = static_cast<float*>(memory->temporary(1, count * sizeof(float)));
  auto* avg = static_cast<float*>(memory->temporary(1, count * sizeof(float)));
  auto* wide = static_cast<float*>(memory->temporary(1, count * sizeof(float)));
  memory->reduce(DataType::F32, ReduceOp::Sum, sum, {sources[0], sources[1]}, count, 2, false);
  memory->reduce(DataType::F32, ReduceOp::Avg, avg, {sources[0], sources[2], sum}, count, 4, true);
  memory->reduce(DataType::F32, ReduceOp::Sum, wide, std::vector<const void*>(sources.begin(), sources.end()), count,
                 10, false);
  // In place over 10 sources, the destination the last of them, after the launches above (which read it).
  memory->reduce(DataType::F32, ReduceOp::Avg, sources[9], std::vector<const void*>(sources.begin(), sources.end()),
                 count, 5, true);
  const std::uint64_t marker = memory->mark();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!memory->reached(marker)) ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  for (std::size_t k = 0; k < count; k += 1009) {
    ASSERT_EQ(sum[k], 3.0f) << k;
    ASSERT_EQ(avg[k], (1.0f + 3.0f + 3.0f) / 4) << k;
    ASSERT_EQ(wide[k], 55.0f) << k;
    ASSERT_EQ(sources[9][k], 11.0f) << k;
  }
  // Buffers grow without freeing what may be in use.
  void* first = memory->temporary(2, 64);
  memory->release(2);
  void* grown = memory->temporary(2, 1 << 20);
  EXPECT_NE(first, grown);
}

// A queued call's computations (net/queued_computations.hpp) on the copy stream: kernels queued before their
// arguments exist, each behind a wait for its ticket, run only once AskedMemory asked them, on what it asked; the
// rest of a failed call asked as nothing lets the stream end without touching memory.
TEST(GpuNetStaging, ComputationsQueuedBeforeTheirArgumentsRunOnceAsked) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::unique_ptr<CudaDeviceAccess> device = cudaDeviceAccess(0);
  auto* flags = new (device->allocateHost(sizeof(AsyncFlags))) AsyncFlags();
  const std::size_t count = 200000;
  const std::size_t bytes = count * sizeof(float);
  auto* a = static_cast<float*>(device->allocateHost(bytes));
  auto* b = static_cast<float*>(device->allocateHost(bytes));
  auto* landing = static_cast<std::byte*>(device->allocateHost(bytes));
  for (std::size_t k = 0; k < count; ++k) {
    a[k] = static_cast<float>(k % 1000);
    b[k] = -1.0f;
  }
  const AskedKernel kernel = askedKernel(DataType::F32, ReduceOp::Sum, count);
  std::vector<QueuedDeviceOp> ops;
  for (std::uint64_t ticket = 1; ticket <= 4; ++ticket) {
    QueuedDeviceOp op;
    op.kind = QueuedDeviceOp::Kind::Compute;
    op.ticket = ticket;
    ops.push_back(op);
  }
  device->queue(ops, flags->pieceCopied.value, flags->pieceReady.value, flags->computations, kernel);
  const auto computed = [&] { return flags->computations.computed.value.load(std::memory_order_acquire); };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(computed(), 0u) << "a computation ran before it was asked";
  AskedTickets tickets(flags->computations);
  AskedMemory memory(tickets, kernel, 1, 2, landing, bytes);
  const auto wait = [&](std::uint64_t marker) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!memory.reached(marker)) ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  };
  auto* sum = static_cast<float*>(memory.temporary(0, bytes));
  memory.reduce(DataType::F32, ReduceOp::Sum, sum, {a, a}, count, 2, false);
  wait(memory.mark());
  EXPECT_EQ(computed(), 1u);
  memory.copy(b, sum, bytes);
  wait(memory.mark());
  for (std::size_t k = 0; k < count; k += 997) {
    ASSERT_EQ(sum[k], 2.0f * static_cast<float>(k % 1000)) << k;
    ASSERT_EQ(b[k], sum[k]) << k;
  }
  b[0] = -5.0f;
  tickets.skipTo(4);
  const std::uint64_t mark = device->mark();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!device->reached(mark)) ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  EXPECT_EQ(computed(), 4u);
  EXPECT_EQ(b[0], -5.0f) << "a computation asked as nothing wrote";
  for (void* pinned :
       {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(landing), static_cast<void*>(flags)}) {
    device->freeHost(pinned);
  }
}

// A queued call's copy out that reduces (QueuedDeviceOp::Reduce, on the copy stream): once its piece is ready, the
// caller's own input (device memory) and a peer's that landed in pinned memory, averaged as bf16 into the caller's
// output, in rank order; not before the ready word reaches the piece's ticket.
TEST(GpuNetStaging, AQueuedCopyOutReducesOnceItsPieceIsReady) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::unique_ptr<CudaDeviceAccess> device = cudaDeviceAccess(0);
  auto* flags = new (device->allocateHost(sizeof(AsyncFlags))) AsyncFlags();
  const std::size_t count = 300001;
  const std::size_t bytes = count * 2;
  Bytes own(bytes), peer(bytes);
  for (std::size_t k = 0; k < count; ++k) {
    coll::storeElement(DataType::BF16, own.data(), k, static_cast<double>(k % 200) / 8);
    coll::storeElement(DataType::BF16, peer.data(), k, -static_cast<double>(k % 50) / 4);
  }
  auto* landed = static_cast<std::byte*>(device->allocateHost(bytes));
  std::memcpy(landed, peer.data(), bytes);
  void* input = nullptr;
  void* output = nullptr;
  ASSERT_EQ(cudaMalloc(&input, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&output, bytes), cudaSuccess);
  toGpu(input, own);
  ASSERT_EQ(cudaMemset(output, 0, bytes), cudaSuccess);
  std::vector<QueuedDeviceOp> ops(2);
  ops[0].kind = QueuedDeviceOp::Kind::AwaitReady;
  ops[0].ticket = 7;
  ops[1].kind = QueuedDeviceOp::Kind::Reduce;
  ops[1].reduction = {output, {input, landed}, count};
  ops[1].divisor = 2;
  AskedKernel kernel;
  kernel.type = DataType::BF16;
  kernel.op = ReduceOp::Avg;
  device->queue(ops, flags->pieceCopied.value, flags->pieceReady.value, flags->computations, kernel);
  const std::uint64_t mark = device->mark();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(device->reached(mark)) << "the copy out reduced before its piece was ready";
  flags->pieceReady.value.store(7, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!device->reached(mark)) ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  Bytes want(bytes);
  coll::hostReduce(DataType::BF16, ReduceOp::Avg, want.data(), {own.data(), peer.data()}, count, 2, true);
  const auto mismatch = coll::findMismatch(DataType::BF16, coll::tolerance(DataType::BF16, ReduceOp::Avg, 2, 32.0),
                                           want, fromGpu(output, bytes));
  EXPECT_FALSE(mismatch) << *mismatch;
  cudaFree(input);
  cudaFree(output);
  device->freeHost(landed);
  device->freeHost(flags);
}

// The async call's kernel (kernels/async_call.cuh) for a rank whose results are its own data (awaitRelease off):
// every byte of several copies in, of sizes 1 B to a whole slot (1 MiB) and alignments of 16, 4 and 1 bytes, goes into
// pinned memory and back out to other device memory without the transport; the copied-in and copied-out flags get the
// ticket and the release flag is never read.
TEST(GpuNetStaging, AnAsyncKernelWhoseResultsAreItsOwnDataCopiesThemOutAtOnce) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::unique_ptr<CudaDeviceAccess> device = cudaDeviceAccess(0);
  auto* flags = new (device->allocateHost(sizeof(AsyncFlags))) AsyncFlags();
  const std::size_t slotBytes = kAsyncSlotBytes + 64;
  auto* slot = static_cast<std::byte*>(device->allocateHost(slotBytes));
  void* src = nullptr;
  void* dst = nullptr;
  ASSERT_EQ(cudaMalloc(&src, slotBytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dst, slotBytes), cudaSuccess);
  Bytes data(slotBytes);
  for (std::size_t k = 0; k < data.size(); ++k) data[k] = static_cast<std::byte>((k * 131 + 7) & 0xff);
  toGpu(src, data);
  std::uint64_t ticket = 0;
  struct Case {
    std::size_t offset;
    std::vector<std::size_t> bytes;  // one copy in and out each, one after the other in the slot
  };
  for (const Case& c : {Case{0, {1}}, Case{0, {16, 4096}}, Case{4, {65540}}, Case{0, {131072 + 3, 7}},
                        Case{0, {kAsyncSlotBytes}}, Case{1, {100001, 999, 2}}}) {
    ASSERT_EQ(cudaMemset(dst, 0, slotBytes), cudaSuccess);
    kernels::AsyncCallArgs args;
    std::size_t at = c.offset;
    for (const std::size_t bytes : c.bytes) {
      args.in[args.ins++] = {static_cast<const std::byte*>(src) + at, slot + at, bytes};
      args.out[args.outs++] = {slot + at, static_cast<std::byte*>(dst) + at, bytes};
      at += bytes;
    }
    args.copiedIn = reinterpret_cast<std::uint64_t*>(&flags->copiedIn[0].value);
    args.copiedOut = reinterpret_cast<std::uint64_t*>(&flags->copiedOut[0].value);
    args.awaitRelease = false;
    args.release = nullptr;  // never read
    args.failedFrom = nullptr;
    args.gaveUp = reinterpret_cast<std::uint64_t*>(&flags->gaveUp.value);
    args.ticket = ++ticket;
    args.timeoutNs = 1;
    kernels::launchAsyncCall(args, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const Bytes got = fromGpu(dst, slotBytes);
    for (std::size_t k = 0; k < slotBytes; ++k) {
      const bool copied = k >= c.offset && k < at;
      ASSERT_EQ(got[k], copied ? data[k] : std::byte{0}) << "byte " << k << " of the case at offset " << c.offset;
    }
    EXPECT_EQ(flags->copiedIn[0].value.load(), ticket);
    EXPECT_EQ(flags->copiedOut[0].value.load(), ticket);
    EXPECT_EQ(flags->gaveUp.value.load(), 0u);
  }
  cudaFree(src);
  cudaFree(dst);
  device->freeHost(slot);
  device->freeHost(flags);
}

// An async call's copy out that reduces, eager (NodeWorld::runAsync) and captured (the replayed kernel,
// coll/captured_calls.cc), of each type and op: three sources, the first in device memory (the caller's own input),
// two in pinned host memory (where peers' inputs landed), reduced in rank order into device memory; odd counts (a
// tail after the 16-byte words), a destination or the caller's own input off the 16-byte boundary, in place, against
// the host's reduction. A call failed before its release leaves the destination as it was.
TEST(GpuNetStaging, AnAsyncCopyOutReducesEveryTypeAndOpFromDeviceAndPinnedMemory) {
  PEERLINK_REQUIRE_GPUS(1);
  const std::unique_ptr<CudaDeviceAccess> device = cudaDeviceAccess(0);
  auto* flags = new (device->allocateHost(sizeof(AsyncFlags))) AsyncFlags();
  auto* record = static_cast<std::uint64_t*>(device->allocateHost(2 * sizeof(std::uint64_t)));
  const std::size_t most = 300007 * 8 + 64;
  auto* pinned = static_cast<std::byte*>(device->allocateHost(2 * most));
  void* own = nullptr;
  void* out = nullptr;
  ASSERT_EQ(cudaMalloc(&own, most), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, most), cudaSuccess);
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uint64_t ticket = 0;
  int checked = 0;
  struct Shape {
    std::size_t count;
    std::size_t dstOffset;  // elements past a 16-byte boundary
    std::size_t ownOffset;  // the same for the caller's own input
    bool inPlace;           // the destination is the caller's own input (an in-place all-reduce)
    bool failed;
  };
  for (const bool replayed : {true, false}) {
    for (const DataType type : kEveryDataType) {
      for (const ReduceOp op : kEveryReduceOp) {
        if (!reduceOpSupported(type, op)) continue;
        for (const Shape shape :
             {Shape{1, 0, 0, false, false}, Shape{300007, 0, 0, false, false}, Shape{1001, 1, 0, false, false},
              Shape{100003, 0, 1, false, false}, Shape{100003, 1, 1, true, false}, Shape{4096, 0, 0, false, true}}) {
          const std::size_t size = dataTypeSize(type);
          const std::size_t bytes = shape.count * size;
          std::vector<Bytes> sources(3, Bytes(bytes));
          for (Bytes& source : sources) {
            for (std::size_t i = 0; i < shape.count; ++i) {
              if (isFloatingPoint(type)) {
                coll::storeElement(type, source.data(), i, unit(random));
              } else {
                const std::uint64_t bits = random();
                std::memcpy(source.data() + i * size, &bits, size);
              }
            }
          }
          Bytes ownBytes(shape.ownOffset * size, std::byte{0x3c});
          ownBytes.insert(ownBytes.end(), sources[0].begin(), sources[0].end());
          toGpu(own, ownBytes);
          std::memcpy(pinned, sources[1].data(), bytes);
          std::memcpy(pinned + most, sources[2].data(), bytes);
          const Bytes before(bytes + shape.dstOffset * size, std::byte{0x3c});
          toGpu(out, before);
          void* ownData = static_cast<std::byte*>(own) + shape.ownOffset * size;
          void* dst = shape.inPlace ? ownData : static_cast<std::byte*>(out) + shape.dstOffset * size;
          void* written = shape.inPlace ? own : out;  // what the check reads back, from its start

          kernels::AsyncReduceRange range;
          range.dst = dst;
          range.srcs[0] = ownData;
          range.srcs[1] = pinned;
          range.srcs[2] = pinned + most;
          range.nsrcs = 3;
          range.count = shape.count;
          const auto flag = [](AsyncFlags::Word& word) { return reinterpret_cast<std::uint64_t*>(&word.value); };
          const auto* release = reinterpret_cast<const volatile std::uint64_t*>(&flags->release.value);
          const auto* failedFrom = reinterpret_cast<const volatile std::uint64_t*>(&flags->failedFrom.value);
          const std::uint64_t timeoutNs = 10'000'000'000ULL;
          // The graph's start and the transport, done before the launch: the run's ticket, the call ended (or failed).
          ++ticket;
          record[0] = ticket;
          flags->failedFrom.value.store(shape.failed ? ticket : 0);
          flags->release.value.store(ticket);
          if (replayed) {
            kernels::ReplayedAsyncCallArgs args;
            args.part = kernels::ReplayedAsyncCallArgs::kWhole;
            args.sets = 1;
            args.reductions = 1;
            args.type = static_cast<int>(type);
            args.op = static_cast<int>(op);
            args.divisor = 3;
            args.reduce[0][0] = range;
            args.copiedIn[0] = flag(flags->copiedIn[0]);
            args.copiedOut[0] = flag(flags->copiedOut[0]);
            args.release = release;
            args.failedFrom = failedFrom;
            args.gaveUp = flag(flags->gaveUp);
            args.ticketOf = record;
            args.handedOn = record + 1;
            args.timeoutNs = timeoutNs;
            kernels::launchReplayedAsyncCall(args, nullptr);
          } else {
            kernels::AsyncCallArgs args;
            args.reductions = 1;
            args.type = static_cast<int>(type);
            args.op = static_cast<int>(op);
            args.divisor = 3;
            args.reduce[0] = range;
            args.copiedIn = flag(flags->copiedIn[0]);
            args.copiedOut = flag(flags->copiedOut[0]);
            args.release = release;
            args.failedFrom = failedFrom;
            args.gaveUp = flag(flags->gaveUp);
            args.ticket = ticket;
            args.timeoutNs = timeoutNs;
            kernels::launchAsyncCall(args, nullptr);
          }
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const std::string what = std::string(replayed ? "replayed " : "eager ") + dataTypeName(type) + " " +
                                   reduceOpName(op) + " of " + std::to_string(shape.count) + " at element " +
                                   std::to_string(shape.dstOffset) + ", own input at " +
                                   std::to_string(shape.ownOffset) + (shape.inPlace ? ", in place" : "");
          ASSERT_EQ(flags->copiedOut[0].value.load(), ticket) << what;
          ASSERT_EQ(flags->gaveUp.value.load(), 0u) << what;
          const Bytes got = fromGpu(written, before.size());
          if (shape.failed) {
            ASSERT_EQ(got, before) << what << ": a failed call's destination written";
            continue;
          }
          Bytes want(bytes);
          coll::hostReduce(type, op, want.data(), {sources[0].data(), sources[1].data(), sources[2].data()},
                           shape.count, 3, true);
          const Bytes result(got.begin() + static_cast<std::ptrdiff_t>(shape.dstOffset * size), got.end());
          const auto mismatch = coll::findMismatch(type, coll::tolerance(type, op, 3, 8.0), want, result);
          ASSERT_FALSE(mismatch) << what << ": " << *mismatch;
          ASSERT_TRUE(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(shape.dstOffset * size),
                                 shape.inPlace ? ownBytes.begin() : before.begin()))
              << what << ": written before the destination";
          ++checked;
        }
      }
    }
  }
  RecordProperty("checked", checked);
  EXPECT_EQ(checked, 2 * 44 * 5);
  cudaFree(own);
  cudaFree(out);
  device->freeHost(pinned);
  device->freeHost(record);
  device->freeHost(flags);
}

}  // namespace
}  // namespace peerlink::net
