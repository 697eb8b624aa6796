// The DDP gap without PyTorch: one GPU, a communicator of one rank (one process), a sleep kernel holding a busy
// stream while the host queues 400 small kernels behind it and records an event; a side stream waits for the
// event and queues, behind the wait, nothing, a plain kernel, or the communicator's all-reduce (64 B, in place).
// Prints the busy stream's time per kernel, median of 9 rounds per case. Run it with and without
// PEERLINK_COLL_EAGER_GRAPHS=0 and CUDA_DEVICE_MAX_CONNECTIONS=1.
//   nvcc -std=c++17 -O2 -arch=sm_90 -I include -I build/generated -I src comm_waiting.cu build/libpeerlink.a ...
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "peerlink/communicator.hpp"

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t status = (call);                                                                     \
    if (status != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

__global__ void sleepKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void addKernel(float* x) {
  x[threadIdx.x] += 1.0f;
}

int main() {
  peerlink::Communicator comm({0});
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  CHECK(cudaMalloc(&y, 1024 * sizeof(float)));
  CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  CHECK(cudaMemset(y, 0, 1024 * sizeof(float)));
  cudaStream_t busy, side;
  CHECK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t start, end, gate;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventCreateWithFlags(&gate, cudaEventDisableTiming));
  const char* cases[] = {"nothing waiting", "a kernel waiting", "an all-reduce waiting", "a kernel waiting (again)",
                         "two all-reduces waiting"};
  std::printf("{\"us_per_kernel\": {");
  for (int c = 0; c < 5; ++c) {
    std::vector<float> times;
    for (int round = 0; round < 9; ++round) {
      CHECK(cudaDeviceSynchronize());
      sleepKernel<<<1, 1, 0, busy>>>(100000000LL);
      CHECK(cudaEventRecord(start, busy));
      for (int k = 0; k < 400; ++k) addKernel<<<1, 256, 0, busy>>>(x);
      CHECK(cudaEventRecord(end, busy));
      CHECK(cudaEventRecord(gate, busy));
      if (c > 0) CHECK(cudaStreamWaitEvent(side, gate, 0));
      if (c == 1 || c == 3) addKernel<<<1, 256, 0, side>>>(y);
      if (c == 2 || c == 4) comm.allReduce(0, y, y, 16, peerlink::DataType::F32, peerlink::ReduceOp::Sum, side);
      if (c == 4) comm.allReduce(0, y, y, 16, peerlink::DataType::F32, peerlink::ReduceOp::Sum, side);
      CHECK(cudaDeviceSynchronize());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, end));
      times.push_back(ms * 1000.0f / 400);
    }
    std::sort(times.begin(), times.end());
    std::printf("%s\"%s\": %.3f", c == 0 ? "" : ", ", cases[c], times[times.size() / 2]);
  }
  std::printf("}}\n");
  return 0;
}
