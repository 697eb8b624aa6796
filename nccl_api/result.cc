#include "nccl_api/result.hpp"

#include <new>

#include <fmt/format.h>

namespace peerlink::nccl {

ncclResult_t resultOf(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidUsage:
    case ErrorCode::Unsupported: return ncclInvalidUsage;
    case ErrorCode::InvalidInput: return ncclInvalidArgument;
    case ErrorCode::NoDevice:
    case ErrorCode::CudaError: return ncclUnhandledCudaError;
    case ErrorCode::NvmlError:
    case ErrorCode::SystemError: return ncclSystemError;
    case ErrorCode::RemoteError: return ncclRemoteError;
    case ErrorCode::Timeout:
    case ErrorCode::DataMismatch:
    case ErrorCode::Internal: return ncclInternalError;
  }
  return ncclInternalError;
}

const char* resultString(ncclResult_t result) noexcept {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "a CUDA call failed (ncclGetLastError names it)";
    case ncclSystemError: return "a system call failed (ncclGetLastError names it)";
    case ncclInternalError: return "internal error or a wait past its deadline (ncclGetLastError says which)";
    case ncclInvalidArgument: return "invalid argument (ncclGetLastError names it)";
    case ncclInvalidUsage: return "invalid usage (ncclGetLastError says what; PEERLINK_DEBUG=WARN logs it)";
    case ncclRemoteError: return "a remote rank exited, aborted or failed (ncclGetLastError names it)";
    case ncclInProgress: return "operation in progress";
    case ncclNumResults: break;
  }
  return "unknown result code";
}

std::string resultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    case ncclNumResults: break;
  }
  return fmt::format("ncclResult {}", static_cast<int>(result));
}

Failure failureOf(const std::exception& error, const char* call) {
  if (const auto* api = dynamic_cast<const ApiError*>(&error)) {
    return {api->result(), fmt::format("{}: {}", call, api->what())};
  }
  if (const auto* own = dynamic_cast<const Error*>(&error)) {
    return {resultOf(own->code()), fmt::format("{}: {}", call, own->what())};
  }
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return {ncclSystemError, fmt::format("{}: out of host memory", call)};
  }
  return {ncclInternalError, fmt::format("{}: unexpected exception: {}", call, error.what())};
}

}  // namespace peerlink::nccl
