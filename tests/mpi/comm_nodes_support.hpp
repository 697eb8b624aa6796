// What the communicator's end-to-end test across nodes (comm_nodes_e2e.cc) shares with its cases in other files
// (comm_nodes_captured.cc): buffers, data, checks.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "coll/host_reduce.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink::comm_nodes {

using coll::Bytes;

/// This process's MPI rank: its rank in the communicator.
extern int worldRank;

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::CudaError, std::string(what) + ": " + cudaGetErrorName(status));
}

// Small integers (exact in every type and in sums of a few ranks): rank r's element i of a buffer tagged `salt`.
inline Bytes dataOf(DataType type, std::size_t elements, int rank, int salt) {
  Bytes bytes(elements * dataTypeSize(type));
  for (std::size_t i = 0; i < elements; ++i) {
    const auto value = static_cast<double>(
        static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 31 + static_cast<std::size_t>(salt) * 13) % 17) - 8);
    coll::storeElement(type, bytes.data(), i, value);
  }
  return bytes;
}

struct Device {
  DeviceBuffer buffer;
  Device(int gpu, const Bytes& bytes, std::size_t size) : buffer(gpu, std::max<std::size_t>(size, 1)) {
    check(cudaMemset(buffer.data(), 0x5a, buffer.size()), "cudaMemset");
    if (!bytes.empty()) check(cudaMemcpy(buffer.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "copy in");
    // The memset and a copy from pageable memory may still be in flight on the legacy stream, which the test's
    // non-blocking stream does not wait for.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  std::byte* at(std::size_t byte) const { return static_cast<std::byte*>(buffer.data()) + byte; }
};

inline Bytes readBack(const void* from, std::size_t bytes) {
  Bytes out(bytes);
  if (bytes > 0) check(cudaMemcpy(out.data(), from, bytes, cudaMemcpyDeviceToHost), "copy out");
  return out;
}

// Pinned host memory for the cases' copies.
struct Pinned {
  void* data = nullptr;
  explicit Pinned(std::size_t bytes) {
    check(cudaMallocHost(&data, std::max<std::size_t>(bytes, 1)), "cudaMallocHost");
  }
  ~Pinned() { cudaFreeHost(data); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};

/// One collective on this rank with the API's pointers, in place or not; "" or what differs from the closed form.
std::string runCollective(Communicator& comm, int gpu, cudaStream_t stream, Collective collective, DataType type,
                          ReduceOp op, std::size_t count, bool inPlace);

/// Calls captured into a CUDA graph and run many times between eager calls (comm_nodes_captured.cc); "" or what
/// went wrong; `timing`: the graph's runs against the same calls made eagerly.
std::string runCaptured(Communicator& comm, int gpu, cudaStream_t stream, std::string& timing);

}  // namespace peerlink::comm_nodes
