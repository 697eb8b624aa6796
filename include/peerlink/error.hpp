// peerlink::Error — the one exception type of the C++ API.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "peerlink/status.h"

namespace peerlink {

/// What kind of failure an Error reports. Values match peerlink_status_t (status.h).
enum class ErrorCode : int {
  InvalidUsage = PEERLINK_STATUS_INVALID_USAGE,  ///< bad argument, flag or PEERLINK_* value
  InvalidInput = PEERLINK_STATUS_INVALID_INPUT,  ///< malformed file or data (e.g. a topology file)
  NoDevice = PEERLINK_STATUS_NO_DEVICE,          ///< no usable CUDA GPU in this process
  CudaError = PEERLINK_STATUS_CUDA_ERROR,        ///< a CUDA runtime or driver call failed
  NvmlError = PEERLINK_STATUS_NVML_ERROR,        ///< an NVML call failed
  SystemError = PEERLINK_STATUS_SYSTEM_ERROR,    ///< an OS call failed
  Timeout = PEERLINK_STATUS_TIMEOUT,             ///< a wait passed its deadline
  RemoteError = PEERLINK_STATUS_REMOTE_ERROR,    ///< the peer reported a failure
  Unsupported = PEERLINK_STATUS_UNSUPPORTED,     ///< the platform cannot do this
  DataMismatch = PEERLINK_STATUS_DATA_MISMATCH,  ///< verification found wrong bytes
  Internal = PEERLINK_STATUS_INTERNAL,           ///< a bug in peerlink
};

/// Short constant name of a code, e.g. "Timeout".
const char* errorCodeName(ErrorCode code) noexcept;

/// The C status for a code, and back (PEERLINK_STATUS_OK maps to Internal: an Error is never OK).
peerlink_status_t toStatus(ErrorCode code) noexcept;
ErrorCode toErrorCode(peerlink_status_t status) noexcept;
/// The code whose status value is `value` (a number read from a message, a file or device memory), checked
/// before any conversion to an enum; nullopt for PEERLINK_STATUS_OK and every value that is no status.
std::optional<ErrorCode> errorCodeFromValue(std::int64_t value) noexcept;

/// Thrown by every peerlink C++ API on failure. what() is one line naming what failed
/// (the call, file:line and error name for CUDA/NVML failures, the devices involved).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

  /// The kind of failure.
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace peerlink
