// CudaDeviceAccess (cuda_device_access.hpp).
#include "net/cuda_device_access.hpp"

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "net/gpu_staged_memory.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

CudaDeviceAccess::CudaDeviceAccess(int device)
    : device_(device),
      stream_(device),
      markers_(device, stream_.get()),
      copied_(device, cudaEventDisableTiming),
      computeStream_(device),
      computed_(device, cudaEventDisableTiming) {}

void CudaDeviceAccess::copyAsync(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
}

void* CudaDeviceAccess::allocateHost(std::size_t bytes) {
  DeviceGuard guard(device_);
  void* memory = nullptr;
  PEERLINK_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
  return memory;
}

std::unique_ptr<LocalMemory> CudaDeviceAccess::stagedMemory() {
  return gpuStagedMemory(device_);
}

// A stream waits for the event as last recorded when it is told to; recording it again later changes nothing for it.
void CudaDeviceAccess::orderAfterCopies(cudaStream_t stream) {
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaEventRecord(copied_.get(), stream_.get()));
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, copied_.get(), 0));
}

void CudaDeviceAccess::orderCopiesAfter(cudaEvent_t event) {
  DeviceGuard guard(device_);
  PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), event, 0));
}

void CudaDeviceAccess::queue(const std::vector<QueuedDeviceOp>& ops, std::atomic<std::uint64_t>& copied,
                             const std::atomic<std::uint64_t>& ready, AskedComputations& asked,
                             const AskedKernel& kernel) {
  DeviceGuard guard(device_);
  const DriverApi& api = driverApi();
  // Unified addressing: the words' host addresses are their device addresses.
  const auto at = [](const std::atomic<std::uint64_t>& word) { return reinterpret_cast<CUdeviceptr>(&word); };
  const auto check = [](CUresult result, const char* what) {
    if (result != CUDA_SUCCESS) {
      throw Error(ErrorCode::CudaError, std::string("net: ") + what + " on the copy stream failed (CUDA driver error " +
                                            std::to_string(static_cast<int>(result)) + ")");
    }
  };
  bool computes = false;
  // What waits for the copy stream (a caller's stream, the slots' growth, the world's end) waits for the computations
  // too, also where queuing them failed part-way.
  const auto join = [&] {
    PEERLINK_CUDA_CHECK(cudaEventRecord(computed_.get(), computeStream_.get()));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), computed_.get(), 0));
  };
  try {
    for (const QueuedDeviceOp& op : ops) {
      switch (op.kind) {
        case QueuedDeviceOp::Kind::Copy:
          if (op.copy.bytes > 0) {
            PEERLINK_CUDA_CHECK(
                cudaMemcpyAsync(op.copy.dst, op.copy.src, op.copy.bytes, cudaMemcpyDefault, stream_.get()));
          }
          break;
        case QueuedDeviceOp::Kind::AwaitReady:
          check(api.streamWaitValue64(stream_.get(), at(ready), op.ticket, CU_STREAM_WAIT_VALUE_GEQ),
                "cuStreamWaitValue64");
          break;
        case QueuedDeviceOp::Kind::Copied:
          check(api.streamWriteValue64(stream_.get(), at(copied), op.ticket, CU_STREAM_WRITE_VALUE_DEFAULT),
                "cuStreamWriteValue64");
          break;
        case QueuedDeviceOp::Kind::Compute:
          computes = true;
          check(api.streamWaitValue64(computeStream_.get(), at(asked.asked.value), op.ticket, CU_STREAM_WAIT_VALUE_GEQ),
                "cuStreamWaitValue64");
          kernels::launchAskedPlanReduce(
              &asked.ring[op.ticket % kAskedRing], static_cast<kernels::CollType>(static_cast<int>(kernel.type)),
              static_cast<kernels::CollOp>(static_cast<int>(kernel.op)), kernel.blocks, computeStream_.get());
          // The default write waits for the kernel's writes to reach memory: the transport then sends what it wrote.
          check(api.streamWriteValue64(computeStream_.get(), at(asked.computed.value), op.ticket,
                                       CU_STREAM_WRITE_VALUE_DEFAULT),
                "cuStreamWriteValue64");
          break;
        case QueuedDeviceOp::Kind::Reduce: {
          const SlotReduction& reduction = op.reduction;
          if (reduction.count == 0) break;
          if (reduction.srcs.size() > static_cast<std::size_t>(kernels::kCollMaxRanks)) {
            throw Error(ErrorCode::Internal, "net: a copy out's reduction of more sources than its kernel takes");
          }
          kernels::launchPlanReduce(
              kernels::planReduceArgs(reduction.dst, reduction.srcs.data(), static_cast<int>(reduction.srcs.size()),
                                      reduction.count, op.divisor, true),
              static_cast<kernels::CollType>(static_cast<int>(kernel.type)),
              static_cast<kernels::CollOp>(static_cast<int>(kernel.op)),
              kernels::planReduceBlocksOverHostMemory(reduction.count), stream_.get());
          break;
        }
      }
    }
  } catch (...) {
    if (computes) {
      try {
        join();
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
  if (computes) join();
}

std::unique_ptr<CudaDeviceAccess> cudaDeviceAccess(int device) {
  return std::make_unique<CudaDeviceAccess>(device);
}

}  // namespace peerlink::net
