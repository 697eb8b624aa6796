#include "core/driver_api.hpp"

#include <cuda_runtime_api.h>

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
  resolve("cuDevicePrimaryCtxGetState", api.devicePrimaryCtxGetState);
  resolve("cuStreamGetCtx", api.streamGetCtx);
  resolve("cuStreamIsCapturing", api.streamIsCapturing);
  return api;
}

}  // namespace

const DriverApi& driverApi() {
  static const DriverApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

bool primaryContextActive(int ordinal) noexcept {
  try {
    const DriverApi& api = driverApi();
    CUdevice device = 0;
    if (api.deviceGet(&device, ordinal) != CUDA_SUCCESS) return true;
    unsigned int flags = 0;
    int active = 0;
    if (api.devicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS) return true;
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
