// The CUDA driver API functions peerlink uses, resolved at run time through the runtime's entry-point
// lookup (cudaGetDriverEntryPointByVersion). peerlink never links libcuda, so it starts on machines
// without a driver and reports "no GPU" instead of failing to load.
#pragma once

#include <cuda.h>

namespace peerlink {

/// Function pointers with the ABI of CUDA 12.0 (the version requested from the driver).
struct DriverApi {
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuMemCreate) memCreate = nullptr;
  decltype(&::cuMemRelease) memRelease = nullptr;
  decltype(&::cuMemExportToShareableHandle) memExportToShareableHandle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) memImportFromShareableHandle = nullptr;
  decltype(&::cuMemAddressReserve) memAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) memAddressFree = nullptr;
  decltype(&::cuMemMap) memMap = nullptr;
  decltype(&::cuMemUnmap) memUnmap = nullptr;
  decltype(&::cuMemSetAccess) memSetAccess = nullptr;
  decltype(&::cuMemGetAllocationGranularity) memGetAllocationGranularity = nullptr;
  decltype(&::cuPointerGetAttributes) pointerGetAttributes = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuCtxGetId) ctxGetId = nullptr;
  decltype(&::cuDevicePrimaryCtxGetState) devicePrimaryCtxGetState = nullptr;
  decltype(&::cuStreamGetCtx) streamGetCtx = nullptr;
  decltype(&::cuStreamIsCapturing) streamIsCapturing = nullptr;
  decltype(&::cuStreamWaitValue64) streamWaitValue64 = nullptr;
  decltype(&::cuStreamWriteValue64) streamWriteValue64 = nullptr;
};

/// The driver functions, resolved once. Throws Error(NoDevice) when there is no driver, and
/// Error(Unsupported) naming the function when the driver is too old to have one.
const DriverApi& driverApi();

/// Whether the primary context of CUDA ordinal `ordinal` exists (cuDevicePrimaryCtxGetState). True where that cannot
/// be told (no driver, an older one, a failed query): the caller then acts as if it did.
bool primaryContextActive(int ordinal) noexcept;

/// cuDeviceGetAttribute for a CUDA ordinal (runtime and driver ordinals agree in one process).
int driverDeviceAttribute(CUdevice_attribute attribute, int ordinal);

}  // namespace peerlink
