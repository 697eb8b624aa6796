// Development tool, not a test: what an eager collective costs the host. Times, on this machine's host:
// the CUDA queries a call's checks make (pointer attributes, capture status, a stream's device), by the
// runtime and by the driver, on GPU 0's buffer and stream and on another GPU's with GPU 0 current (as for
// the calls of ranks other than 0); whole eager Communicator::allReduce calls of 8 bytes on one GPU and on
// every GPU, the last rank's call (which launches the set) apart from the others', so the eager path's time
// can be split between peerlink's checks, its launch and the driver; eager send/recv groups (a ring shift
// of 8 bytes), whole and split between their calls and groupEnd; launches of a kept one-node graph on
// every GPU, by one thread in turn and by one thread per GPU at once, to say whether the driver lets
// launches to different GPUs proceed side by side; with `nccl`, the eager calls again while NCCL's
// communicators on every GPU are alive (loaded at run time as `peerlink coll` loads it), to say what they
// cost peerlink's calls in one process. Usage: peerlink_host_cost [calls] [nccl]
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "coll_bench/reference_nccl.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/pointer_kind.hpp"
#include "kernels/copy_kernels.cuh"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "tool_main.hpp"

namespace peerlink {
namespace {

constexpr int kSyncEvery = 64;  // calls between synchronizations, so the launch queue never fills

// Nanoseconds per call of `call`, timing only the calls (not the synchronizations between batches).
double nsPerCall(int calls, const std::function<void()>& call, const std::function<void()>& sync) {
  for (int i = 0; i < kSyncEvery; ++i) call();  // warm-up
  sync();
  std::chrono::steady_clock::duration spent{};
  for (int done = 0; done < calls; done += kSyncEvery) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSyncEvery; ++i) call();
    spent += std::chrono::steady_clock::now() - start;
    sync();
  }
  const int timed = (calls + kSyncEvery - 1) / kSyncEvery * kSyncEvery;
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()) / timed;
}

// The queries a call's checks make, on a buffer and a stream of GPU `device` while GPU 0 is current, by the
// runtime and by the driver.
void queryCosts(int calls, int device, void* buffer, cudaStream_t stream) {
  const auto none = [] {};
  std::printf("  queries on GPU %d's buffer and stream, GPU 0 current:\n", device);
  cudaPointerAttributes attributes{};
  std::printf("    cudaPointerGetAttributes       %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaPointerGetAttributes(&attributes, buffer); }, none));
  PointerKind kind;
  std::printf("    peerlink's buffer query (cuPointerGetAttributes: type, ordinal, managed)  %8.0f\n",
              nsPerCall(
                  calls, [&] { kind = pointerKind(buffer); }, none));
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  std::printf("    cudaStreamIsCapturing          %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaStreamIsCapturing(stream, &capture); }, none));
  const auto isCapturing = driverApi().streamIsCapturing;
  CUstreamCaptureStatus driverCapture = CU_STREAM_CAPTURE_STATUS_NONE;
  std::printf("    cuStreamIsCapturing            %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)isCapturing(reinterpret_cast<CUstream>(stream), &driverCapture); }, none));
  int streamDevice = -1;
  std::printf("    cudaStreamGetDevice            %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)cudaStreamGetDevice(stream, &streamDevice); }, none));
  const auto getCtx = driverApi().streamGetCtx;
  CUcontext context = nullptr;
  std::printf("    cuStreamGetCtx                 %8.0f\n",
              nsPerCall(
                  calls, [&] { (void)getCtx(reinterpret_cast<CUstream>(stream), &context); }, none));
}

// A set's calls timed one by one: the ranks' calls before the last (each checks its call and queues it) apart
// from the last one's (which also matches the set and launches every rank's kernel).
void splitCalls(int calls, int ranks, const std::function<void(int)>& call, const std::function<void()>& sync) {
  using Clock = std::chrono::steady_clock;
  Clock::duration queued{};
  Clock::duration last{};
  int sets = 0;
  for (int done = 0; done < calls + kSyncEvery; done += kSyncEvery) {  // the first batch warms up
    for (int i = 0; i < kSyncEvery; ++i) {
      for (int r = 0; r < ranks; ++r) {
        const auto start = Clock::now();
        call(r);
        (r + 1 < ranks ? queued : last) += done < kSyncEvery ? Clock::duration{} : Clock::now() - start;
      }
      if (done >= kSyncEvery) ++sets;
    }
    sync();
  }
  const auto ns = [](Clock::duration d) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
  std::printf("  allReduce, %d GPUs, 8 B, out of place: ranks 0..%d's calls, each   %8.0f\n", ranks, ranks - 2,
              ranks > 1 ? ns(queued) / (static_cast<double>(sets) * (ranks - 1)) : 0.0);
  std::printf("  allReduce, %d GPUs, 8 B, out of place: rank %d's call (launches the set)  %8.0f\n", ranks, ranks - 1,
              ns(last) / sets);
}

// Eager send/recv groups of nccl-tests' ring shift (rank r sends 8 bytes to r + 1, receives from r - 1):
// the whole group, and its 2n calls (each checks its call and queues it) apart from groupEnd (which pairs
// them and launches every rank's kernel).
void sendRecvGroups(int calls, Communicator& comm, std::vector<DeviceBuffer>& buffers,
                    const std::vector<Stream>& streams, const std::function<void()>& sync) {
  using Clock = std::chrono::steady_clock;
  const int n = comm.size();
  const auto queueCalls = [&] {
    comm.groupStart();
    for (int r = 0; r < n; ++r) {
      auto* base = static_cast<char*>(buffers[static_cast<std::size_t>(r)].data());
      const cudaStream_t stream = streams[static_cast<std::size_t>(r)].get();
      comm.send(r, base, 2, DataType::F32, (r + 1) % n, stream);
      comm.recv(r, base + 2048, 2, DataType::F32, (r + n - 1) % n, stream);
    }
  };
  std::printf("  send/recv group, %d GPUs, 8 B a rank (ring shift), per group  %8.0f\n", n,
              nsPerCall(
                  calls,
                  [&] {
                    queueCalls();
                    comm.groupEnd();
                  },
                  sync));
  Clock::duration queued{};
  Clock::duration ended{};
  int groups = 0;
  for (int done = 0; done < calls + kSyncEvery; done += kSyncEvery) {  // the first batch warms up
    for (int i = 0; i < kSyncEvery; ++i) {
      const auto start = Clock::now();
      queueCalls();
      const auto middle = Clock::now();
      comm.groupEnd();
      if (done >= kSyncEvery) {
        queued += middle - start;
        ended += Clock::now() - middle;
        ++groups;
      }
    }
    sync();
  }
  const auto ns = [](Clock::duration d) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
  std::printf("  send/recv group: groupStart and the %d calls  %8.0f, groupEnd (launches)  %8.0f\n", 2 * n,
              ns(queued) / groups, ns(ended) / groups);
}

// A one-node graph on `device` (an SM copy of 16 bytes within `buffer`), instantiated.
cudaGraphExec_t copyGraph(int device, void* buffer, cudaStream_t stream) {
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  kernels::launchSmCopy(static_cast<char*>(buffer) + 16, buffer, 16, 1, stream);
  cudaGraph_t graph = nullptr;
  PEERLINK_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  PEERLINK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PEERLINK_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// One set = one launch of each GPU's graph. In turn: this thread switches device and launches each. Side by
// side: thread d > 0 spins until set i is released, launches GPU d's graph and reports; this thread launches
// GPU 0's and spins until every other has reported, as a launcher that hands launches to threads would.
void rawLaunches(int calls, const std::vector<DeviceBuffer>& buffers, const std::vector<Stream>& streams,
                 const std::function<void()>& syncAll) {
  const int gpus = static_cast<int>(buffers.size());
  std::vector<cudaGraphExec_t> execs;
  for (int d = 0; d < gpus; ++d) {
    execs.push_back(copyGraph(d, const_cast<void*>(buffers[static_cast<std::size_t>(d)].data()),
                              streams[static_cast<std::size_t>(d)].get()));
  }
  const auto launch = [&](int d) {
    PEERLINK_CUDA_CHECK(
        cudaGraphLaunch(execs[static_cast<std::size_t>(d)], streams[static_cast<std::size_t>(d)].get()));
  };
  std::printf("  graph launch, GPU 0 only                          %8.0f\n", nsPerCall(
                                                                                 calls, [&] { launch(0); }, syncAll));
  std::printf("  graph launch on %d GPUs in turn (with cudaSetDevice), per set  %8.0f\n", gpus,
              nsPerCall(
                  calls,
                  [&] {
                    for (int d = 0; d < gpus; ++d) {
                      PEERLINK_CUDA_CHECK(cudaSetDevice(d));
                      launch(d);
                    }
                    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
                  },
                  syncAll));
  std::atomic<long> released{0};
  std::atomic<long> reported{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int d = 1; d < gpus; ++d) {
    threads.emplace_back([&, d] {
      PEERLINK_CUDA_CHECK(cudaSetDevice(d));
      long seen = 0;
      while (!stop.load(std::memory_order_acquire)) {
        if (released.load(std::memory_order_acquire) == seen) continue;
        ++seen;
        launch(d);
        reported.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  long set = 0;
  PEERLINK_CUDA_CHECK(cudaSetDevice(0));
  std::printf("  graph launch on %d GPUs by a thread each, per set  %8.0f\n", gpus,
              nsPerCall(
                  calls,
                  [&] {
                    ++set;
                    released.store(set, std::memory_order_release);
                    launch(0);
                    while (reported.load(std::memory_order_acquire) < set * (gpus - 1)) {
                    }
                  },
                  syncAll));
  std::printf("  hand-off only (threads report without launching)  ");
  stop.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  std::atomic<long> echoed{0};
  std::atomic<bool> done{false};
  long round = 0;
  std::thread echo([&] {
    long seen = 0;
    while (!done.load(std::memory_order_acquire)) {
      if (released.load(std::memory_order_acquire) == seen + set) continue;
      ++seen;
      echoed.fetch_add(1, std::memory_order_acq_rel);
    }
  });
  std::printf("%8.0f\n", nsPerCall(
                             calls,
                             [&] {
                               ++round;
                               released.store(set + round, std::memory_order_release);
                               while (echoed.load(std::memory_order_acquire) < round) {
                               }
                             },
                             [] {}));
  done.store(true, std::memory_order_release);
  echo.join();
  for (cudaGraphExec_t exec : execs) PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
}

// NCCL's communicators on every GPU, each having run a few all-reduces (so its proxy threads are up), alive
// while `measure` runs.
void withNcclAlive(std::vector<DeviceBuffer>& buffers, const std::vector<Stream>& streams,
                   const std::function<void()>& measure) {
  const coll::ReferenceNccl nccl = coll::loadReferenceNccl(
      std::getenv("PEERLINK_NCCL_LIBRARY") != nullptr ? std::getenv("PEERLINK_NCCL_LIBRARY") : "");
  if (!nccl.loaded) {
    std::printf("  NCCL not loaded: %s\n", nccl.reason.c_str());
    return;
  }
  std::printf("  %s\n", coll::ensureNvlsDisabled().c_str());
  const int gpus = static_cast<int>(buffers.size());
  std::vector<coll::ncclComm_t> comms(static_cast<std::size_t>(gpus), nullptr);
  std::vector<int> devices;
  for (int d = 0; d < gpus; ++d) devices.push_back(d);
  if (nccl.api.commInitAll(comms.data(), gpus, devices.data()) != 0) {
    std::printf("  ncclCommInitAll failed\n");
    return;
  }
  for (int k = 0; k < 10; ++k) {
    nccl.api.groupStart();
    for (int d = 0; d < gpus; ++d) {
      void* data = buffers[static_cast<std::size_t>(d)].data();
      nccl.api.allReduce(data, data, 2, coll::ncclDataTypeOf(DataType::F32), 0, comms[static_cast<std::size_t>(d)],
                         streams[static_cast<std::size_t>(d)].get());
    }
    nccl.api.groupEnd();
  }
  for (const Stream& s : streams) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  std::printf("  NCCL %s: %d communicators alive\n", coll::ncclVersionString(nccl.versionCode).c_str(), gpus);
  measure();
  for (coll::ncclComm_t comm : comms) nccl.api.commDestroy(comm);
}

void run(int calls, bool nccl) {
  int gpus = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  DeviceGuard guard(0);
  DeviceBuffer buffer(0, 4096);
  Stream stream(0);
  const auto none = [] {};
  std::printf("host cost per call, ns (%d calls each)\n", calls);
  std::chrono::steady_clock::time_point now{};
  std::printf("  std::chrono::steady_clock::now  %8.0f\n",
              nsPerCall(
                  calls, [&] { now = std::chrono::steady_clock::now(); }, none));
  std::atomic<long> atomic{0};
  std::printf("  an uncontended atomic add       %8.0f\n",
              nsPerCall(
                  calls, [&] { atomic.fetch_add(1, std::memory_order_acq_rel); }, none));
  queryCosts(calls, 0, buffer.data(), stream.get());
  if (gpus > 1) {  // the calls of ranks other than 0 query another GPU's buffers and streams
    DeviceBuffer other(gpus - 1, 4096);
    Stream otherStream(gpus - 1);
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    queryCosts(calls, gpus - 1, other.data(), otherStream.get());
  }
  const auto syncOne = [&] { PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream.get())); };
  {
    Communicator one({0});
    std::printf(
        "  allReduce, 1 GPU, 8 B          %8.0f\n",
        nsPerCall(
            calls,
            [&] { one.allReduce(0, buffer.data(), buffer.data(), 2, DataType::F32, ReduceOp::Sum, stream.get()); },
            syncOne));
  }
  std::vector<int> devices;
  std::vector<DeviceBuffer> buffers;
  std::vector<Stream> streams;
  for (int d = 0; d < gpus; ++d) {
    devices.push_back(d);
    buffers.emplace_back(d, 4096);
    streams.emplace_back(d);
  }
  Communicator all(devices);
  const auto syncAll = [&] {
    for (Stream& s : streams) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  };
  const auto everyRankCall = [&](int r, bool inPlace) {
    void* recv = buffers[static_cast<std::size_t>(r)].data();
    const void* send = inPlace ? recv : static_cast<const char*>(recv) + 2048;
    all.allReduce(r, send, recv, 2, DataType::F32, ReduceOp::Sum, streams[static_cast<std::size_t>(r)].get());
  };
  const auto everyRank = [&](bool inPlace) {
    for (int r = 0; r < gpus; ++r) everyRankCall(r, inPlace);
  };
  std::printf("  allReduce, %d GPUs, 8 B, in place, per rank      %8.0f\n", gpus,
              nsPerCall(
                  calls, [&] { everyRank(true); }, syncAll) /
                  gpus);
  std::printf("  allReduce, %d GPUs, 8 B, out of place, per rank  %8.0f\n", gpus,
              nsPerCall(
                  calls, [&] { everyRank(false); }, syncAll) /
                  gpus);
  splitCalls(
      calls, gpus, [&](int r) { everyRankCall(r, false); }, syncAll);
  if (gpus > 1) sendRecvGroups(calls, all, buffers, streams, syncAll);
  rawLaunches(calls, buffers, streams, syncAll);
  if (nccl) {
    withNcclAlive(buffers, streams, [&] {
      std::printf("  allReduce, %d GPUs, 8 B, out of place, per rank, NCCL alive  %8.0f\n", gpus,
                  nsPerCall(
                      calls, [&] { everyRank(false); }, syncAll) /
                      gpus);
      rawLaunches(calls, buffers, streams, syncAll);
    });
  }
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  const bool nccl = argc > 2 && std::strcmp(argv[2], "nccl") == 0;
  return peerlink::tools::runTool("peerlink_host_cost", [&] {
    peerlink::run(calls > 0 ? calls : 20000, nccl);
    return 0;
  });
}
