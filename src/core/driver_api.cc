#include "core/driver_api.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

constexpr int kDriverAbiVersion = 12000;

template <typename Function>
void resolve(const char* symbol, Function& function) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &address, kDriverAbiVersion, cudaEnableDefault, &found);
  if (status != cudaSuccess) {
    cudaGetLastError();
    const ErrorCode code = (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice)
                               ? ErrorCode::NoDevice
                               : ErrorCode::CudaError;
    throw Error(code, fmt::format("cannot resolve the driver function {}: {}", symbol, cudaErrorText(status)));
  }
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    throw Error(ErrorCode::Unsupported,
                fmt::format("the installed NVIDIA driver has no {} (version {} ABI); update the driver", symbol,
                            kDriverAbiVersion));
  }
  function = reinterpret_cast<Function>(address);
}

DriverApi load() {
  DriverApi api;
  resolve("cuDeviceGet", api.deviceGet);
  resolve("cuDeviceGetAttribute", api.deviceGetAttribute);
  resolve("cuMemCreate", api.memCreate);
  resolve("cuMemRelease", api.memRelease);
  resolve("cuMemExportToShareableHandle", api.memExportToShareableHandle);
  resolve("cuMemImportFromShareableHandle", api.memImportFromShareableHandle);
  resolve("cuMemAddressReserve", api.memAddressReserve);
  resolve("cuMemAddressFree", api.memAddressFree);
  resolve("cuMemMap", api.memMap);
  resolve("cuMemUnmap", api.memUnmap);
  resolve("cuMemSetAccess", api.memSetAccess);
  resolve("cuMemGetAllocationGranularity", api.memGetAllocationGranularity);
  resolve("cuPointerGetAttributes", api.pointerGetAttributes);
  resolve("cuCtxGetCurrent", api.ctxGetCurrent);
  resolve("cuCtxGetId", api.ctxGetId);
  resolve("cuDevicePrimaryCtxGetState", api.devicePrimaryCtxGetState);
  resolve("cuStreamGetCtx", api.streamGetCtx);
  resolve("cuStreamIsCapturing", api.streamIsCapturing);
  resolve("cuStreamWaitValue64", api.streamWaitValue64);
  resolve("cuStreamWriteValue64", api.streamWriteValue64);
  return api;
}

}  // namespace

const DriverApi& driverApi() {
  static const DriverApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

bool primaryContextActive(int ordinal) noexcept {
  // A primary context, once made, stays for the process (but for cudaDeviceReset): the answer is kept, so that a
  // guard's restore on the launch path asks the driver once per device.
  static std::atomic<std::uint64_t> knownActive{0};
  const std::uint64_t bit = ordinal >= 0 && ordinal < 64 ? std::uint64_t{1} << ordinal : 0;
  if ((knownActive.load(std::memory_order_relaxed) & bit) != 0) return true;
  try {
    const DriverApi& api = driverApi();
    CUdevice device = 0;
    if (api.deviceGet(&device, ordinal) != CUDA_SUCCESS) return true;
    unsigned int flags = 0;
    int active = 0;
    if (api.devicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS) return true;
    if (active != 0) knownActive.fetch_or(bit, std::memory_order_relaxed);
    return active != 0;
  } catch (...) {
    return true;
  }
}

int driverDeviceAttribute(CUdevice_attribute attribute, int ordinal) {
  const DriverApi& api = driverApi();
  CUdevice device = 0;
  PEERLINK_CU_CHECK(api.deviceGet(&device, ordinal));
  int value = 0;
  PEERLINK_CU_CHECK(api.deviceGetAttribute(&value, attribute, device));
  return value;
}

}  // namespace peerlink
