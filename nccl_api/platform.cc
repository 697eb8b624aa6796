#include "nccl_api/platform.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bootstrap/unique_id.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/gpu_work.hpp"
#include "nccl_api/transform_kernels.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink::nccl {
namespace {

class CommunicatorBackend final : public WorldBackend {
 public:
  explicit CommunicatorBackend(std::shared_ptr<Communicator> communicator) : comm_(std::move(communicator)) {}

  int size() const override { return comm_->size(); }
  std::vector<int> localRanks() const override { return comm_->localRanks(); }
  int device(int rank) const override { return comm_->device(rank); }

  void allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 cudaStream_t stream) override {
    comm_->allReduce(rank, send, recv, count, type, op, stream);
  }
  void broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                 cudaStream_t stream) override {
    comm_->broadcast(rank, send, recv, count, type, root, stream);
  }
  void reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              cudaStream_t stream) override {
    comm_->reduce(rank, send, recv, count, type, op, root, stream);
  }
  void allGather(int rank, const void* send, void* recv, std::size_t count, DataType type,
                 cudaStream_t stream) override {
    comm_->allGather(rank, send, recv, count, type, stream);
  }
  void reduceScatter(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     cudaStream_t stream) override {
    comm_->reduceScatter(rank, send, recv, count, type, op, stream);
  }
  void allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type,
                cudaStream_t stream) override {
    comm_->allToAll(rank, send, recv, count, type, stream);
  }
  void send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) override {
    comm_->send(rank, buffer, count, type, peer, stream);
  }
  void recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) override {
    comm_->recv(rank, buffer, count, type, peer, stream);
  }
  void groupStart() override { comm_->groupStart(); }
  void groupEnd() override { comm_->groupEnd(); }
  int registerWindow(const std::vector<void*>& buffers, const std::vector<std::size_t>& bytes) override {
    return comm_->registerWindow(buffers, bytes);
  }
  void deregisterWindow(int window) override { comm_->deregisterWindow(window); }
  std::optional<Error> asyncError() override { return comm_->asyncError(); }
  std::vector<std::shared_ptr<WorldBackend>> split(const std::vector<int>& colors,
                                                   const std::vector<int>& keys) override {
    // Local ranks of one color share a Communicator, and so one backend.
    std::map<Communicator*, std::shared_ptr<WorldBackend>> made;
    std::vector<std::shared_ptr<WorldBackend>> result;
    for (const std::shared_ptr<Communicator>& part : comm_->split(colors, keys)) {
      if (part == nullptr) {
        result.push_back(nullptr);
        continue;
      }
      std::shared_ptr<WorldBackend>& backend = made[part.get()];
      if (backend == nullptr) backend = std::make_shared<CommunicatorBackend>(part);
      result.push_back(backend);
    }
    return result;
  }
  void abort() noexcept override { comm_->abort(); }

 private:
  std::shared_ptr<Communicator> comm_;
};

class CudaPlatform final : public Platform {
 public:
  std::shared_ptr<WorldBackend> createWorld(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                                            const std::vector<int>& devices, const Params& params,
                                            ForwardAbility forwarding) override {
    BootstrapOptions bootstrap = BootstrapOptions::fromParams(params);
    bootstrap.forwarding = forwarding;
    return std::make_shared<CommunicatorBackend>(
        std::make_shared<Communicator>(id, nranks, ranks, devices, params, bootstrap));
  }
  std::shared_ptr<WorldBackend> createLocalWorld(const std::vector<int>& devices, const Params& params) override {
    return std::make_shared<CommunicatorBackend>(std::make_shared<Communicator>(devices, params));
  }
  UniqueId makeId(const Params& params, bootstrap::ForwardIdSource forwardId) override {
    return forwardId != nullptr ? bootstrap::makeForwardableUniqueId(params, std::move(forwardId))
                                : makeUniqueId(params);
  }
  void retireId(const UniqueId& id) noexcept override {
    try {
      bootstrap::retireRoot(bootstrap::decodeUniqueId(id).token);
    } catch (...) {  // not a peerlink id: no root of ours
    }
  }

  int currentDevice() override {
    int device = -1;
    PEERLINK_CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
  void setCurrentDevice(int device) override { PEERLINK_CUDA_CHECK(cudaSetDevice(device)); }
  int deviceCount() override {
    int count = 0;
    PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
    return count;
  }
  void* memAlloc(std::size_t bytes) override {
    void* pointer = nullptr;
    if (bytes > 0) PEERLINK_CUDA_CHECK(cudaMalloc(&pointer, bytes));
    return pointer;
  }
  void memFree(void* pointer) override { PEERLINK_CUDA_CHECK(cudaFree(pointer)); }
  void* allocate(int device, std::size_t bytes) override {
    const DeviceGuard guard(device);
    // A scratch block may be made while the caller captures a graph, where cudaMalloc would invalidate the capture
    // (a call outside the stream's order): this thread relaxes its capture mode for the call, as NCCL's own
    // allocations do. The block is not part of the graph; it lives until the communicator ends.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    PEERLINK_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (status != cudaSuccess) detail::throwCudaError(status, "cudaMalloc(&pointer, bytes)", __FILE__, __LINE__);
    return pointer;
  }
  // A scratch block goes once no GPU work of the process runs: the passes that used it (tracked in `passes_`) and the
  // communicator's kernels that read it, but cudaFree may wait for the whole device, where another communicator's
  // kernel may be stalled (gpu_work.hpp). Held back otherwise, for a later release.
  void release(int device, void* pointer) noexcept override {
    std::size_t bytes = 0;
    try {
      CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_RANGE_SIZE;
      void* value = &bytes;
      if (driverApi().pointerGetAttributes(1, &attribute, &value, reinterpret_cast<CUdeviceptr>(pointer)) !=
          CUDA_SUCCESS) {
        bytes = 0;
      }
    } catch (...) {  // no driver: the size only goes to the log
    }
    HeldResources block;
    block.bytes = bytes;
    try {
      block.what = "a scratch block of the NCCL API on GPU " + std::to_string(device);
      block.held = std::shared_ptr<void>(pointer, [device](void* memory) {
        int current = -1;
        const bool known = cudaGetDevice(&current) == cudaSuccess;
        if (cudaSetDevice(device) == cudaSuccess) cudaFree(memory);
        if (known) cudaSetDevice(current);
        cudaGetLastError();
      });
    } catch (...) {  // no memory to hold it (shared_ptr freed it already when it could not allocate): nothing left
      return;
    }
    if (!passes_.tracksAll()) {
      holdUntilExit(std::move(block), "a pass that used it could not be tracked, so its end is unknown");
      return;
    }
    releaseWhenIdle(std::move(block), WorkClock::now());
  }
  void transform(int device, const TransformArgs& args, cudaStream_t stream) override {
    const DeviceGuard guard(device);
    launchTransform(args, stream);
    trackPass(device, stream);
  }
  void copy(int device, void* destination, const void* source, std::size_t bytes, cudaStream_t stream) override {
    const DeviceGuard guard(device);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream));
    trackPass(device, stream);
  }
  void orderAfter(int device, cudaStream_t later, cudaStream_t earlier) override {
    // Inside a capture the graph's edges are the application's to make (an event of a stream outside the capture
    // cannot be waited on there).
    if (capturing(later) || capturing(earlier)) return;
    const DeviceGuard guard(device);
    const Event event(device, cudaEventDisableTiming);  // released once the wait is queued; CUDA keeps what it needs
    PEERLINK_CUDA_CHECK(cudaEventRecord(event.get(), earlier));
    PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(later, event.get(), 0));
  }
  bool capturing(cudaStream_t stream) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    PEERLINK_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    return status != cudaStreamCaptureStatusNone;
  }

 private:
  // Tracks the pass just queued on `stream` (a graph's replays are the application's to finish). Once a pass could
  // not be tracked, scratch blocks are held until the process exits rather than freed under it.
  void trackPass(int device, cudaStream_t stream) {
    try {
      if (!capturing(stream)) passes_.recordAfter(device, stream);
    } catch (...) {
      passes_.lostTrack();
      throw;
    }
  }

  WorkTracker passes_;  // the passes' kernels and copies around peerlink's calls, on the callers' streams
};

}  // namespace

std::unique_ptr<Platform> makeCudaPlatform() {
  return std::make_unique<CudaPlatform>();
}

}  // namespace peerlink::nccl
