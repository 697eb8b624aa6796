#include "peerlink/shared_memory.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/unix_socket.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "transport/share_protocol.hpp"

namespace peerlink {
namespace {

using Clock = std::chrono::steady_clock;

static_assert(sizeof(cudaIpcMemHandle_t) == kShareIpcHandleBytes, "the offer carries a whole cudaIpcMemHandle_t");

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string visibleDevicesText() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr ? fmt::format("CUDA_VISIBLE_DEVICES={}", visible) : "CUDA_VISIBLE_DEVICES unset";
}

void checkDevice(int device, const char* role) {
  int count = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("{} GPU {} does not exist: this process sees {} GPU(s) ({})", role,
                                                     device, count, visibleDevicesText()));
  }
}

std::string busIdOf(int device) {
  char busId[kShareBusIdBytes] = {};
  PEERLINK_CUDA_CHECK(cudaDeviceGetPCIBusId(busId, sizeof(busId), device));
  return busId;
}

// Makes `device` current without throwing; for destructors.
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (device >= 0 && device != previous_) cudaSetDevice(device);
    cudaGetLastError();
  }
  ~QuietDeviceGuard() {
    int current = -1;
    if (previous_ >= 0 && cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
    cudaGetLastError();
  }
  QuietDeviceGuard(const QuietDeviceGuard&) = delete;
  QuietDeviceGuard& operator=(const QuietDeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A cuMem mapping: the physical handle, the reserved range, and whether the handle is mapped into it.
// Released in the reverse order of creation; cuMemUnmap is synchronous (the driver's \note_sync).
struct CumemMapping {
  CUmemGenericAllocationHandle handle = 0;
  bool hasHandle = false;
  CUdeviceptr address = 0;
  std::size_t bytes = 0;
  bool mapped = false;

  void release() noexcept {
    try {
      const DriverApi& api = driverApi();
      if (mapped) api.memUnmap(address, bytes);
      if (address != 0) api.memAddressFree(address, bytes);
      if (hasHandle) api.memRelease(handle);
    } catch (...) {
    }
    *this = CumemMapping();
  }

  // Reserves `bytes` of address space, maps the handle there and grants read/write to `devices`.
  void mapFor(const int* devices, int count, std::size_t alignment) {
    const DriverApi& api = driverApi();
    PEERLINK_CU_CHECK(api.memAddressReserve(&address, bytes, alignment, 0, 0));
    PEERLINK_CU_CHECK(api.memMap(address, bytes, 0, handle, 0));
    mapped = true;
    CUmemAccessDesc access[2] = {};
    for (int i = 0; i < count; ++i) {
      access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access[i].location.id = devices[i];
      access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    PEERLINK_CU_CHECK(api.memSetAccess(address, bytes, access, static_cast<std::size_t>(count)));
  }
};

// Read/write access to a mapping for one more GPU of this process.
void grantAccess(const CumemMapping& mapping, int device) {
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  PEERLINK_CU_CHECK(driverApi().memSetAccess(mapping.address, mapping.bytes, &access, 1));
}

CUmemAllocationProp posixFdProperties(int device) {
  CUmemAllocationProp properties = {};
  properties.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  properties.location.id = device;
  properties.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return properties;
}

std::string uniqueSocketName() {
  static std::atomic<unsigned> counter{0};
  // The random part keeps a socket left by a crashed process whose pid was reused from blocking bind().
  std::random_device entropy;
  return fmt::format("peerlink-share-{}-{}-{:08x}.sock", ::getpid(), counter.fetch_add(1), entropy());
}

}  // namespace

// ---- ExportableBuffer -----------------------------------------------------------------------------

struct ExportableBuffer::Impl {
  int device = -1;
  std::size_t size = 0;
  std::size_t allocated = 0;
  ShareKind kind = ShareKind::Ipc;
  std::string busId;
  void* ipcMemory = nullptr;
  CumemMapping cumem;
  std::optional<UnixListener> listener;

  ~Impl() {
    if (ipcMemory == nullptr && !cumem.hasHandle) return;
    QuietDeviceGuard guard(device);
    if (ipcMemory != nullptr) cudaFree(ipcMemory);
    cudaGetLastError();
    cumem.release();
  }

  void* data() const noexcept {
    return kind == ShareKind::Ipc ? ipcMemory : reinterpret_cast<void*>(static_cast<std::uintptr_t>(cumem.address));
  }

  void allocateCumem() {
    if (driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) == 0 ||
        driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device) == 0) {
      throw Error(ErrorCode::Unsupported,
                  fmt::format("GPU {} ({}) cannot export cuMem allocations as POSIX file descriptors (no virtual "
                              "memory management or POSIX-fd handle support); use the IPC route",
                              device, busId));
    }
    const DriverApi& api = driverApi();
    const CUmemAllocationProp properties = posixFdProperties(device);
    std::size_t granularity = 0;
    PEERLINK_CU_CHECK(api.memGetAllocationGranularity(&granularity, &properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    if (granularity == 0) granularity = 1;
    allocated = (size + granularity - 1) / granularity * granularity;
    cumem.bytes = allocated;
    PEERLINK_CU_CHECK(api.memCreate(&cumem.handle, allocated, &properties, 0));
    cumem.hasHandle = true;
    cumem.mapFor(&device, 1, granularity);
  }

  ExportedHandle exportHandle() {
    DeviceGuard guard(device);
    ExportedHandle exported;
    exported.offer.kind = kind;
    exported.offer.size = size;
    exported.offer.allocatedSize = allocated;
    exported.offer.ownerBusId = busId;
    if (kind == ShareKind::Ipc) {
      cudaIpcMemHandle_t handle;
      PEERLINK_CUDA_CHECK(cudaIpcGetMemHandle(&handle, ipcMemory));
      std::memcpy(exported.offer.ipcHandle.data(), &handle, sizeof(handle));
    } else {
      int fd = -1;
      PEERLINK_CU_CHECK(
          driverApi().memExportToShareableHandle(&fd, cumem.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      exported.fd.reset(fd);
      // The driver does not promise close-on-exec; a program we exec must not inherit the memory.
      const int flags = ::fcntl(fd, F_GETFD);
      if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
    return exported;
  }
};

ExportableBuffer::ExportableBuffer(int device, std::size_t bytes, ShareKind kind, const ShareOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (bytes == 0) throw Error(ErrorCode::InvalidUsage, "an exportable buffer needs at least one byte");
  checkDevice(device, "exporting");
  Impl& impl = *impl_;
  impl.device = device;
  impl.size = bytes;
  impl.kind = kind;
  DeviceGuard guard(device);
  impl.busId = busIdOf(device);
  if (kind == ShareKind::Ipc) {
    PEERLINK_CUDA_CHECK(cudaMalloc(&impl.ipcMemory, bytes));
    impl.allocated = bytes;
  } else {
    impl.allocateCumem();
  }
  UnixListenerOptions listenerOptions;
  listenerOptions.directory = options.socketDirectory;
  impl.listener.emplace(uniqueSocketName(), listenerOptions);
}

ExportableBuffer::~ExportableBuffer() = default;
ExportableBuffer::ExportableBuffer(ExportableBuffer&& other) noexcept = default;
ExportableBuffer& ExportableBuffer::operator=(ExportableBuffer&& other) noexcept = default;

void* ExportableBuffer::data() const noexcept {
  return impl_ ? impl_->data() : nullptr;
}
std::size_t ExportableBuffer::size() const noexcept {
  return impl_ ? impl_->size : 0;
}
void ExportableBuffer::allowAccess(int device) {
  if (!impl_ || impl_->kind != ShareKind::Cumem || device == impl_->device) return;
  checkDevice(device, "accessing");
  grantAccess(impl_->cumem, device);
}

std::size_t ExportableBuffer::allocatedSize() const noexcept {
  return impl_ ? impl_->allocated : 0;
}
int ExportableBuffer::device() const noexcept {
  return impl_ ? impl_->device : -1;
}
ShareKind ExportableBuffer::kind() const noexcept {
  return impl_ ? impl_->kind : ShareKind::Ipc;
}
const std::string& ExportableBuffer::busId() const noexcept {
  static const std::string kNone;
  return impl_ ? impl_->busId : kNone;
}
const std::string& ExportableBuffer::socketPath() const noexcept {
  static const std::string kNone;
  return impl_ && impl_->listener ? impl_->listener->path() : kNone;
}

ShareTimings ExportableBuffer::serveOne(std::chrono::milliseconds timeout) {
  if (!impl_ || !impl_->listener) throw Error(ErrorCode::InvalidUsage, "serveOne on a moved-from ExportableBuffer");
  return serveShareOnce(
      *impl_->listener, [this] { return impl_->exportHandle(); }, timeout);
}

// ---- ImportedBuffer -------------------------------------------------------------------------------

struct ImportedBuffer::Impl {
  ShareKind kind = ShareKind::Ipc;
  std::size_t size = 0;
  std::size_t allocated = 0;
  int localDevice = -1;
  int ownerDevice = -1;
  std::string ownerBusId;
  void* ipcPointer = nullptr;
  CumemMapping cumem;
  ShareTimings timings;

  ~Impl() {
    if (ipcPointer == nullptr && !cumem.hasHandle) return;
    QuietDeviceGuard guard(localDevice);
    if (ipcPointer != nullptr) cudaIpcCloseMemHandle(ipcPointer);
    cudaGetLastError();
    cumem.release();
  }

  void* data() const noexcept {
    return kind == ShareKind::Ipc ? ipcPointer : reinterpret_cast<void*>(static_cast<std::uintptr_t>(cumem.address));
  }

  // The GPU is hidden from this process: CUDA documents that it can still map such memory (NCCL relies on
  // it since CUDA 10.1), so we try, and only a refusal becomes Unsupported.
  [[noreturn]] void throwHiddenOwner(const std::string& failure) const {
    throw Error(ErrorCode::Unsupported,
                fmt::format("the exporting GPU {} is not visible in this process ({}) and the driver refused to map "
                            "its memory for GPU {}: {}; make both GPUs visible to both processes",
                            ownerBusId, visibleDevicesText(), localDevice, failure));
  }

  ImportCosts import(ReceivedOffer& received) {
    const ShareOffer& offer = received.offer;
    kind = offer.kind;
    size = offer.size;
    allocated = offer.allocatedSize;
    ownerBusId = offer.ownerBusId;
    DeviceGuard guard(localDevice);

    const cudaError_t found = cudaDeviceGetByPCIBusId(&ownerDevice, ownerBusId.c_str());
    if (found != cudaSuccess) {
      cudaGetLastError();
      ownerDevice = -1;
      if (found != cudaErrorInvalidDevice && found != cudaErrorInvalidValue) {
        PEERLINK_CUDA_CHECK(found);
      }
    }
    if (ownerDevice >= 0 && ownerDevice != localDevice) {
      int canAccess = 0;
      PEERLINK_CUDA_CHECK(cudaDeviceCanAccessPeer(&canAccess, localDevice, ownerDevice));
      if (canAccess == 0) {
        throw Error(ErrorCode::Unsupported,
                    fmt::format("GPU {} ({}) cannot access the memory of GPU {} ({}): no peer-to-peer path "
                                "(cudaDeviceCanAccessPeer is 0); share through host memory instead",
                                localDevice, busIdOf(localDevice), ownerDevice, ownerBusId));
      }
    }

    ImportCosts costs;
    if (kind == ShareKind::Ipc) {
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, offer.ipcHandle.data(), sizeof(handle));
      const auto start = Clock::now();
      const cudaError_t opened = cudaIpcOpenMemHandle(&ipcPointer, handle, cudaIpcMemLazyEnablePeerAccess);
      costs.importMs = msSince(start);
      if (opened != cudaSuccess) {
        ipcPointer = nullptr;
        cudaGetLastError();
        if (ownerDevice < 0) throwHiddenOwner(cudaErrorText(opened));
        PEERLINK_CUDA_CHECK(opened);
      }
      return costs;
    }

    const DriverApi& api = driverApi();
    try {
      auto start = Clock::now();
      // For POSIX descriptors the "OS handle" argument is the descriptor number itself.
      PEERLINK_CU_CHECK(api.memImportFromShareableHandle(
          &cumem.handle, reinterpret_cast<void*>(static_cast<std::uintptr_t>(received.fd.get())),
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      cumem.hasHandle = true;
      costs.importMs = msSince(start);
      received.fd.reset();  // the imported handle keeps the memory; the descriptor is no longer needed

      start = Clock::now();
      cumem.bytes = allocated;
      int devices[2] = {localDevice, ownerDevice};
      const int count = ownerDevice >= 0 && ownerDevice != localDevice ? 2 : 1;
      cumem.mapFor(devices, count, 0);
      costs.mapMs = msSince(start);
    } catch (const Error& error) {
      if (ownerDevice < 0 && error.code() == ErrorCode::CudaError) throwHiddenOwner(error.what());
      throw;
    }
    return costs;
  }
};

ImportedBuffer::ImportedBuffer(const std::string& socketPath, int localDevice, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  checkDevice(localDevice, "importing");
  impl_->localDevice = localDevice;
  {
    // Context creation costs far more than the share itself; keep it out of the timings and the timeout.
    DeviceGuard guard(localDevice);
    PEERLINK_CUDA_CHECK(cudaFree(nullptr));
  }
  impl_->timings = importShareOnce(
      socketPath, [this](ReceivedOffer& received) { return impl_->import(received); }, timeout);
}

ImportedBuffer::~ImportedBuffer() = default;
ImportedBuffer::ImportedBuffer(ImportedBuffer&& other) noexcept = default;
ImportedBuffer& ImportedBuffer::operator=(ImportedBuffer&& other) noexcept = default;

void* ImportedBuffer::data() const noexcept {
  return impl_ ? impl_->data() : nullptr;
}
void ImportedBuffer::allowAccess(int device) {
  if (!impl_ || device == impl_->localDevice) return;
  if (impl_->kind != ShareKind::Cumem) {
    throw Error(ErrorCode::Unsupported,
                fmt::format("memory of GPU {} imported through legacy IPC is mapped for GPU {} only, not for GPU {}",
                            impl_->ownerBusId, impl_->localDevice, device));
  }
  checkDevice(device, "accessing");
  grantAccess(impl_->cumem, device);
}

std::size_t ImportedBuffer::size() const noexcept {
  return impl_ ? impl_->size : 0;
}
std::size_t ImportedBuffer::allocatedSize() const noexcept {
  return impl_ ? impl_->allocated : 0;
}
ShareKind ImportedBuffer::kind() const noexcept {
  return impl_ ? impl_->kind : ShareKind::Ipc;
}
int ImportedBuffer::localDevice() const noexcept {
  return impl_ ? impl_->localDevice : -1;
}
int ImportedBuffer::ownerDevice() const noexcept {
  return impl_ ? impl_->ownerDevice : -1;
}
const std::string& ImportedBuffer::ownerBusId() const noexcept {
  static const std::string kNone;
  return impl_ ? impl_->ownerBusId : kNone;
}
const ShareTimings& ImportedBuffer::timings() const noexcept {
  static const ShareTimings kNone;
  return impl_ ? impl_->timings : kNone;
}

}  // namespace peerlink
