#include "core/stream_wait.hpp"

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/idle_wait.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

void waitForStream(cudaStream_t stream, std::chrono::milliseconds timeout, const std::string& what,
                   const std::string& hint, const std::function<void()>& check) {
  constexpr auto kCheckEvery = std::chrono::milliseconds(10);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  auto nextCheck = start + kCheckEvery;
  IdleWait idle;
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) PEERLINK_CUDA_CHECK(status);
    const auto now = std::chrono::steady_clock::now();
    if (check && now >= nextCheck) {
      check();
      nextCheck = now + kCheckEvery;
    }
    if (now > deadline) {
      throw Error(ErrorCode::Timeout, fmt::format("{} did not finish within {} ms{}", what, timeout.count(),
                                                  hint.empty() ? std::string() : " (" + hint + ")"));
    }
    idle.idle();
  }
}

}  // namespace peerlink
