#include "core/cuda_check.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/process_limits.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

const char* baseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

using GetErrorStringFn = CUresult (*)(CUresult, const char**);

// peerlink never links libcuda (it must run where no driver is installed), so the driver's error-name
// functions come from the runtime's entry-point lookup, which loads the driver itself when present.
GetErrorStringFn driverFunction(const char* symbol) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<GetErrorStringFn>(function);
}

}  // namespace

std::string cudaErrorText(cudaError_t status) {
  return fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
}

std::string driverErrorText(CUresult status) {
  static const GetErrorStringFn getName = driverFunction("cuGetErrorName");
  static const GetErrorStringFn getString = driverFunction("cuGetErrorString");
  const char* name = nullptr;
  const char* text = nullptr;
  if (getName == nullptr || getName(status, &name) != CUDA_SUCCESS || name == nullptr) {
    return fmt::format("CUresult {}", static_cast<int>(status));
  }
  if (getString == nullptr || getString(status, &text) != CUDA_SUCCESS || text == nullptr) return name;
  return fmt::format("{} ({})", name, text);
}

namespace detail {

void throwCudaError(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear the last-error slot (a sticky error stays: the context is lost then)
  const ErrorCode code = (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) ? ErrorCode::NoDevice
                                                                                                : ErrorCode::CudaError;
  // Errors the driver also gives when the process ran out of descriptors or address space: say which it is.
  const bool unspecific = status == cudaErrorMemoryAllocation || status == cudaErrorOperatingSystem ||
                          status == cudaErrorInitializationError || status == cudaErrorUnknown;
  throw Error(code, fmt::format("{} failed: {} at {}:{}{}", call, cudaErrorText(status), baseName(file), line,
                                unspecific ? processShortageNote() : std::string()));
}

void throwDriverError(CUresult status, const char* call, const char* file, int line) {
  cudaGetLastError();
  const bool unspecific = status == CUDA_ERROR_OUT_OF_MEMORY || status == CUDA_ERROR_OPERATING_SYSTEM ||
                          status == CUDA_ERROR_NOT_INITIALIZED || status == CUDA_ERROR_UNKNOWN;
  throw Error(ErrorCode::CudaError,
              fmt::format("{} failed: {} at {}:{}{}", call, driverErrorText(status), baseName(file), line,
                          unspecific ? processShortageNote() : std::string()));
}

}  // namespace detail
}  // namespace peerlink
