#include "peerlink/error.hpp"

namespace peerlink {

const char* errorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidUsage: return "InvalidUsage";
    case ErrorCode::InvalidInput: return "InvalidInput";
    case ErrorCode::NoDevice: return "NoDevice";
    case ErrorCode::CudaError: return "CudaError";
    case ErrorCode::NvmlError: return "NvmlError";
    case ErrorCode::SystemError: return "SystemError";
    case ErrorCode::Timeout: return "Timeout";
    case ErrorCode::RemoteError: return "RemoteError";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::DataMismatch: return "DataMismatch";
    case ErrorCode::Internal: return "Internal";
  }
  return "Unknown";
}

peerlink_status_t toStatus(ErrorCode code) noexcept {
  return static_cast<peerlink_status_t>(code);
}

ErrorCode toErrorCode(peerlink_status_t status) noexcept {
  return errorCodeFromValue(static_cast<std::int64_t>(status)).value_or(ErrorCode::Internal);
}

std::optional<ErrorCode> errorCodeFromValue(std::int64_t value) noexcept {
  if (value <= PEERLINK_STATUS_OK || value > PEERLINK_STATUS_INTERNAL) return std::nullopt;
  return static_cast<ErrorCode>(value);
}

}  // namespace peerlink

extern "C" const char* peerlink_status_name(peerlink_status_t status) {
  switch (status) {
    case PEERLINK_STATUS_OK: return "OK";
    case PEERLINK_STATUS_INVALID_USAGE: return "INVALID_USAGE";
    case PEERLINK_STATUS_INVALID_INPUT: return "INVALID_INPUT";
    case PEERLINK_STATUS_NO_DEVICE: return "NO_DEVICE";
    case PEERLINK_STATUS_CUDA_ERROR: return "CUDA_ERROR";
    case PEERLINK_STATUS_NVML_ERROR: return "NVML_ERROR";
    case PEERLINK_STATUS_SYSTEM_ERROR: return "SYSTEM_ERROR";
    case PEERLINK_STATUS_TIMEOUT: return "TIMEOUT";
    case PEERLINK_STATUS_REMOTE_ERROR: return "REMOTE_ERROR";
    case PEERLINK_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case PEERLINK_STATUS_DATA_MISMATCH: return "DATA_MISMATCH";
    case PEERLINK_STATUS_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}
