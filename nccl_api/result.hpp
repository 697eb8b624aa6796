// NCCL's error model over peerlink's: an ncclResult_t for every peerlink::ErrorCode, NCCL's strings for the
// codes, and the failure a shim call returns (its code and the one line ncclGetLastError gives back).
#pragma once

#include <nccl.h>

#include <stdexcept>
#include <string>

#include "peerlink/error.hpp"

namespace peerlink::nccl {

/// The ncclResult_t an Error of `code` becomes: InvalidUsage and Unsupported -> ncclInvalidUsage, InvalidInput
/// -> ncclInvalidArgument, NoDevice and CudaError -> ncclUnhandledCudaError, NvmlError and SystemError ->
/// ncclSystemError, RemoteError -> ncclRemoteError, Timeout, DataMismatch and Internal -> ncclInternalError.
ncclResult_t resultOf(ErrorCode code) noexcept;

/// ncclGetErrorString's text for a result: what the code means and where the details are. Never null.
const char* resultString(ncclResult_t result) noexcept;

/// "ncclInvalidUsage" for a result; "ncclResult 42" for a value that is none.
std::string resultName(ncclResult_t result);

/// A failed call: the code the function returns and the line ncclGetLastError returns after it.
struct Failure {
  ncclResult_t result = ncclInternalError;
  std::string message;
};

/// Thrown inside the shim for a failure whose NCCL code it knows (ncclInvalidArgument for a bad pointer...).
class ApiError : public std::runtime_error {
 public:
  ApiError(ncclResult_t result, const std::string& message) : std::runtime_error(message), result_(result) {}
  explicit ApiError(const Failure& failure) : ApiError(failure.result, failure.message) {}
  ncclResult_t result() const noexcept { return result_; }

 private:
  ncclResult_t result_;
};

/// The failure an exception thrown inside a call becomes: "call: message", with an ApiError's code, an Error's
/// code mapped by resultOf, ncclSystemError for exhausted memory and ncclInternalError for anything else.
Failure failureOf(const std::exception& error, const char* call);

}  // namespace peerlink::nccl
