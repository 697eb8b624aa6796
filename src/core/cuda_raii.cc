#include <utility>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "peerlink/cuda.hpp"

namespace peerlink {

DeviceGuard::DeviceGuard(int device) {
  PEERLINK_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) PEERLINK_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  // Going back to a device without a primary context would make one (cudaSetDevice does since CUDA 12): a thread that
  // never used CUDA had device 0 current, and every process would keep a context, and its memory, on GPU 0. Such a
  // thread keeps the guard's device instead.
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_ && primaryContextActive(previous_)) {
    cudaSetDevice(previous_);
  }
  cudaGetLastError();
}

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaMalloc(&data_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  reset();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(std::exchange(other.device_, -1)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (data_ != nullptr) {
    cudaFree(data_);
    cudaGetLastError();
  }
  data_ = nullptr;
  bytes_ = 0;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, unsigned int flags) : bytes_(bytes) {
  if (bytes == 0) return;
  PEERLINK_CUDA_CHECK(cudaHostAlloc(&data_, bytes, flags));
}

PinnedBuffer::~PinnedBuffer() {
  reset();
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PinnedBuffer::reset() noexcept {
  if (data_ != nullptr) {
    cudaFreeHost(data_);
    cudaGetLastError();
  }
  data_ = nullptr;
  bytes_ = 0;
}

Stream::Stream(int device, unsigned int flags) : device_(device) {
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
}

Stream::~Stream() {
  reset();
}

Stream::Stream(Stream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), device_(std::exchange(other.device_, -1)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void Stream::reset() noexcept {
  if (stream_ != nullptr) {
    cudaStreamDestroy(stream_);
    cudaGetLastError();
  }
  stream_ = nullptr;
}

Event::Event(int device, unsigned int flags) {
  DeviceGuard guard(device);
  PEERLINK_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
}

Event::~Event() {
  reset();
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    reset();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::reset() noexcept {
  if (event_ != nullptr) {
    cudaEventDestroy(event_);
    cudaGetLastError();
  }
  event_ = nullptr;
}

}  // namespace peerlink
