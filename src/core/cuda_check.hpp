// The CUDA check family: runtime (PEERLINK_CUDA_CHECK), driver (PEERLINK_CU_CHECK) and kernel launches
// (PEERLINK_CUDA_CHECK_LAUNCH). A failure throws peerlink::Error naming the call, file:line and the error
// name, after clearing the runtime's last-error slot so the failure does not leak into the next call.
// (NVML has its own member of the family inside core/nvml.cc, where its loader lives.)
// These are macros only because they need __FILE__ and __LINE__.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

namespace peerlink {

/// "cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string cudaErrorText(cudaError_t status);
/// "CUDA_ERROR_INVALID_VALUE (invalid argument)"; works without linking libcuda.
std::string driverErrorText(CUresult status);

namespace detail {
void throwCudaError(cudaError_t status, const char* call, const char* file, int line);
void throwDriverError(CUresult status, const char* call, const char* file, int line);
}  // namespace detail

}  // namespace peerlink

#define PEERLINK_CUDA_CHECK(call)                                                      \
  do {                                                                                 \
    const cudaError_t peerlink_status_ = (call);                                       \
    if (peerlink_status_ != cudaSuccess) {                                             \
      ::peerlink::detail::throwCudaError(peerlink_status_, #call, __FILE__, __LINE__); \
    }                                                                                  \
  } while (0)

#define PEERLINK_CU_CHECK(call)                                                          \
  do {                                                                                   \
    const CUresult peerlink_status_ = (call);                                            \
    if (peerlink_status_ != CUDA_SUCCESS) {                                              \
      ::peerlink::detail::throwDriverError(peerlink_status_, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (0)

#define PEERLINK_CUDA_CHECK_LAUNCH() PEERLINK_CUDA_CHECK(cudaGetLastError())
