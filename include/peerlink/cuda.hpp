// RAII owners for CUDA resources: device memory, pinned host memory, streams, events, and a scoped
// device guard. Move-only; constructors throw peerlink::Error; destructors are noexcept and ignore
// errors (a destructor cannot report them, and a lost context must not turn into std::terminate).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace peerlink {

/// Makes `device` current for the guard's lifetime, then restores the previous device -- unless that device has no
/// primary context (a thread that had not used CUDA), which restoring would create: then `device` stays current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

/// `bytes` of device memory on `device` (cudaMalloc). A zero-byte buffer holds no allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  int device() const noexcept { return device_; }

 private:
  void reset() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

/// `bytes` of page-locked host memory (cudaHostAlloc with `flags`, portable by default).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes, unsigned int flags = cudaHostAllocPortable);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }

 private:
  void reset() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A non-blocking stream on `device`.
class Stream {
 public:
  Stream() = default;
  explicit Stream(int device, unsigned int flags = cudaStreamNonBlocking);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  int device() const noexcept { return device_; }

 private:
  void reset() noexcept;
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
};

/// An event on `device` (timing enabled unless `flags` says otherwise).
class Event {
 public:
  Event() = default;
  explicit Event(int device, unsigned int flags = cudaEventDefault);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }

 private:
  void reset() noexcept;
  cudaEvent_t event_ = nullptr;
};

}  // namespace peerlink
