// Does the memory synchronization domain of a kernel waiting in another stream (Hopper's launch attribute
// cudaLaunchAttributeMemSyncDomain, which NCCL sets to Remote for its kernels) change what it costs the GPU's
// launches on a busy stream? One GPU: a sleep kernel holds the busy stream -- the legacy default stream (PyTorch's)
// or a non-blocking one -- while the host queues 400 small kernels behind it and records an event; one or two other
// streams wait for the event and queue a kernel launched plainly, in the remote domain, as a cluster of 4 blocks
// (NCCL's default on Hopper) or with a 4 KiB argument struct (NCCL's argument storage). Prints the busy
// stream's time per kernel, median of 9 rounds per case.
//   nvcc -O2 -arch=sm_90 -o sync_domain sync_domain.cu && ./sync_domain
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

struct BigArgs {
  float* y;
  unsigned long long pad[511];  // 4096 bytes, as NCCL's kernels' argument storage
};

__global__ void bigArgsKernel(const __grid_constant__ BigArgs args) {
  if (threadIdx.x == 0) args.y[blockIdx.x] *= 1.0f;
}

// How the waiting kernel is launched: 0 plain (1 block), 1 in the remote memory-synchronization domain, 2 as a
// cluster of 4 blocks (NCCL's default on Hopper, NCCL_CGA_CLUSTER_SIZE), 3 with a 4 KiB argument struct.
const char* kLaunchNames[] = {"", " (remote domain)", " (cluster of 4)", " (4 KiB arguments)"};

void launchIn(float* y, cudaStream_t stream, int how) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(how == 2 ? 4 : 1);
  config.blockDim = dim3(256);
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  if (how == 1) {
    attribute.id = cudaLaunchAttributeMemSyncDomain;
    attribute.val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
  } else if (how == 2) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = 4;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
  }
  if (how == 1 || how == 2) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  if (how == 3) {
    static BigArgs big = {};
    big.y = y;
    CHECK(cudaLaunchKernelEx(&config, bigArgsKernel, big));
    return;
  }
  CHECK(cudaLaunchKernelEx(&config, addKernel, y));
}

int main() {
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  CHECK(cudaMalloc(&y, 1024 * sizeof(float)));
  CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  CHECK(cudaMemset(y, 0, 1024 * sizeof(float)));
  cudaStream_t own;
  CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  std::vector<cudaStream_t> waiting(2);
  for (cudaStream_t& s : waiting) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, end, gate;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventCreateWithFlags(&gate, cudaEventDisableTiming));
  std::printf("{\"us_per_kernel\": {");
  bool first = true;
  for (int legacy = 1; legacy >= 0; --legacy) {
    const cudaStream_t busy = legacy ? nullptr : own;
    for (int streams = 0; streams <= 2; ++streams) {
      for (int how = 0; how < 4; ++how) {
        if (streams == 0 && how > 0) continue;
        std::vector<float> times;
        for (int round = 0; round < 9; ++round) {
          CHECK(cudaDeviceSynchronize());
          sleepKernel<<<1, 1, 0, busy>>>(100000000LL);
          CHECK(cudaEventRecord(start, busy));
          for (int k = 0; k < 400; ++k) addKernel<<<1, 256, 0, busy>>>(x);
          CHECK(cudaEventRecord(end, busy));
          CHECK(cudaEventRecord(gate, busy));
          for (int s = 0; s < streams; ++s) {
            CHECK(cudaStreamWaitEvent(waiting[s], gate, 0));
            launchIn(y, waiting[s], how);
          }
          CHECK(cudaDeviceSynchronize());
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, start, end));
          times.push_back(ms * 1000.0f / 400);
        }
        std::sort(times.begin(), times.end());
        std::printf("%s\"%s busy stream, %d waiting%s\": %.3f", first ? "" : ", ", legacy ? "legacy" : "non-blocking",
                    streams, kLaunchNames[how], times[times.size() / 2]);
        first = false;
      }
    }
  }
  std::printf("}}\n");
  return 0;
}
