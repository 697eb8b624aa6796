#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/cuda_check.hpp"
#include "kernels/device_status.cuh"
#include "peerlink/error.hpp"
#include "peerlink/status.h"

namespace peerlink {
namespace {

TEST(Errors, CodesMapOneToOneOntoCStatuses) {
  for (int raw = PEERLINK_STATUS_INVALID_USAGE; raw <= PEERLINK_STATUS_INTERNAL; ++raw) {
    const auto status = static_cast<peerlink_status_t>(raw);
    const ErrorCode code = toErrorCode(status);
    EXPECT_EQ(toStatus(code), status);
    EXPECT_STRNE(errorCodeName(code), "Unknown");
    EXPECT_STRNE(peerlink_status_name(status), "UNKNOWN");
  }
  EXPECT_STREQ(peerlink_status_name(PEERLINK_STATUS_OK), "OK");
  EXPECT_EQ(toErrorCode(PEERLINK_STATUS_OK), ErrorCode::Internal);
  EXPECT_EQ(toErrorCode(static_cast<peerlink_status_t>(15)), ErrorCode::Internal);
}

// Numbers from outside (a message, device memory) become codes only when they are one.
TEST(Errors, ValuesAreCheckedBeforeTheyBecomeCodes) {
  for (std::int64_t value = PEERLINK_STATUS_INVALID_USAGE; value <= PEERLINK_STATUS_INTERNAL; ++value) {
    ASSERT_TRUE(errorCodeFromValue(value).has_value()) << value;
    EXPECT_EQ(static_cast<std::int64_t>(toStatus(*errorCodeFromValue(value))), value);
  }
  for (const std::int64_t value : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{12}, std::int64_t{1} << 40}) {
    EXPECT_FALSE(errorCodeFromValue(value).has_value()) << value;
  }
}

// A status word read back from device memory is a number like any other from outside: a value that is no
// status becomes an Internal error naming the number, not an enum out of its range.
TEST(Errors, DeviceStatusesAreCheckedBeforeTheyBecomeCodes) {
  const auto thrown = [](int status) -> Error {
    try {
      kernels::throwIfDeviceFailed(kernels::DeviceStatus{status, 3, 7}, "put-signal 0 -> 1");
    } catch (const Error& error) {
      return error;
    }
    return Error(ErrorCode::Internal, "nothing thrown");
  };
  const Error timeout = thrown(PEERLINK_STATUS_TIMEOUT);
  EXPECT_EQ(timeout.code(), ErrorCode::Timeout);
  EXPECT_STREQ(timeout.what(), "put-signal 0 -> 1: device reported TIMEOUT at step 3 (flag observed 7)");
  const Error garbage = thrown(0x5eed);
  EXPECT_EQ(garbage.code(), ErrorCode::Internal);
  EXPECT_STREQ(garbage.what(),
               "put-signal 0 -> 1: device reported status 24301 (not a status) at step 3 (flag observed 7)");
  EXPECT_NO_THROW(kernels::throwIfDeviceFailed(kernels::DeviceStatus{PEERLINK_STATUS_OK, 0, 0}, "ok"));
}

TEST(Errors, ErrorCarriesCodeAndMessage) {
  const Error error(ErrorCode::Timeout, "GPU 0 -> GPU 1 write: no flag after 10000 ms");
  EXPECT_EQ(error.code(), ErrorCode::Timeout);
  EXPECT_STREQ(error.what(), "GPU 0 -> GPU 1 write: no flag after 10000 ms");
}

TEST(CudaCheck, RuntimeFailureNamesCallFileLineAndErrorName) {
  try {
    PEERLINK_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::CudaError);
    const std::string message = error.what();
    EXPECT_NE(message.find("cudaErrorInvalidValue failed"), std::string::npos) << message;
    EXPECT_NE(message.find("cudaErrorInvalidValue (invalid argument)"), std::string::npos) << message;
    EXPECT_NE(message.find("test_errors.cc:"), std::string::npos) << message;
  }
}

TEST(CudaCheck, NoDeviceAndMissingDriverBecomeNoDevice) {
  for (cudaError_t status : {cudaErrorNoDevice, cudaErrorInsufficientDriver}) {
    try {
      PEERLINK_CUDA_CHECK(status);
      FAIL() << "no throw";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::NoDevice);
    }
  }
}

TEST(CudaCheck, DriverFailureNamesTheCall) {
  try {
    PEERLINK_CU_CHECK(CUDA_ERROR_INVALID_VALUE);
    FAIL() << "no throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::CudaError);
    const std::string message = error.what();
    EXPECT_NE(message.find("CUDA_ERROR_INVALID_VALUE failed"), std::string::npos) << message;
    // With a driver the name comes from cuGetErrorName, without one the number is shown.
    EXPECT_TRUE(message.find(": CUDA_ERROR_INVALID_VALUE") != std::string::npos ||
                message.find("CUresult 1") != std::string::npos)
        << message;
  }
}

TEST(CudaCheck, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(PEERLINK_CUDA_CHECK(cudaSuccess));
  EXPECT_NO_THROW(PEERLINK_CU_CHECK(CUDA_SUCCESS));
}

}  // namespace
}  // namespace peerlink
