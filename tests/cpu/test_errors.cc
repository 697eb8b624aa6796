#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/cuda_check.hpp"
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
