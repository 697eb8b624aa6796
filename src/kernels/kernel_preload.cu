#include "kernels/kernel_preload.cuh"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "core/cuda_check.hpp"
#include "kernels/kernel_graph.hpp"
#include "peerlink/error.hpp"

namespace peerlink::kernels {
namespace {

// A loaded mark per device of this process, sized at the first call (the device count does not change).
// Not std::call_once: libstdc++'s call_once can hang after an exception (GCC bug 66146), and a failed
// load must be retried.
struct PerDevice {
  explicit PerDevice(int devices)
      : count(devices), loaded(std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(devices))) {}
  int count;
  std::unique_ptr<std::atomic<bool>[]> loaded;  // value-initialized: false
  std::mutex loading;
};

int deviceCount() {
  int count = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

PerDevice& perDevice() {
  static PerDevice devices(deviceCount());
  return devices;
}

// What a KernelGraph is readied with: its node is re-aimed at the real kernels at their launches.
__global__ void idleKernel() {}

}  // namespace

void readyKernelGraph(KernelGraph& graph, cudaStream_t stream) {
  // cudaGraphInstantiate and the first cudaGraphLaunch ready the graph on the device (no arguments: the kernel takes
  // none).
  const cudaError_t status =
      graph.launch(reinterpret_cast<const void*>(idleKernel), 1, 32, nullptr, nullptr, 0, stream);
  if (status != cudaSuccess) return;  // the graph turned itself off: its owner launches directly
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace detail {

void loadKernel(const void* kernel, const char* name) {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (status != cudaSuccess) {
    cudaGetLastError();
    int device = -1;
    cudaGetDevice(&device);
    throw Error(ErrorCode::CudaError, std::string("loading kernel ") + name + " on GPU " + std::to_string(device) +
                                          ": cudaFuncGetAttributes returned " + cudaErrorText(status));
  }
}

}  // namespace detail

void ensureKernelsLoaded() {
  int device = 0;
  PEERLINK_CUDA_CHECK(cudaGetDevice(&device));
  PerDevice& devices = perDevice();
  if (device < 0 || device >= devices.count) {
    throw Error(ErrorCode::InvalidUsage, "ensureKernelsLoaded: current device " + std::to_string(device) +
                                             " is not one of the " + std::to_string(devices.count) + " devices");
  }
  std::atomic<bool>& loaded = devices.loaded[static_cast<std::size_t>(device)];
  if (loaded.load(std::memory_order_acquire)) return;
  const std::lock_guard<std::mutex> lock(devices.loading);
  if (loaded.load(std::memory_order_relaxed)) return;
  detail::preloadCopyKernels();
  detail::preloadBulkCopyKernels();
  detail::preloadPutSignalKernels();
  detail::preloadLatchKernels();
  detail::preloadPatternKernels();
  detail::preloadLlKernels();
  detail::preloadAsyncCallKernels();
  loaded.store(true, std::memory_order_release);  // not reached when a load throws: the next call retries
}

}  // namespace peerlink::kernels
