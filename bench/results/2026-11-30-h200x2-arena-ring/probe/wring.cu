// Feasibility: the host ring kernel with its areas in GPU memory over NVLink (push / pull), vs host memory, vs NCCL.
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "coll/host_ring_call.hpp"
#include "kernels/host_ring.cuh"
#include "kernels/launch_kernel.cuh"

using namespace peerlink;
#define CK(x)                                                          \
  do {                                                                 \
    cudaError_t e = (x);                                               \
    if (e != cudaSuccess) {                                            \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

int main(int argc, char** argv) {
  int iters = 20;
  const int n = 2;
  for (int g = 0; g < n; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaDeviceEnablePeerAccess(1 - g, 0));
  }
  size_t maxBytes = size_t{256} << 20;
  void *in[2], *out[2];
  cudaStream_t st[2];
  cudaEvent_t e0[2], e1[2];
  kernels::CollFailure* fail[2];
  void* areaDev[2];
  void* areaHost[2];
  void* state[2];
  for (int g = 0; g < n; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaMalloc(&in[g], maxBytes));
    CK(cudaMalloc(&out[g], maxBytes));
    std::vector<float> h(maxBytes / 4, float(g + 1));
    CK(cudaMemcpy(in[g], h.data(), maxBytes, cudaMemcpyHostToDevice));
    CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0[g]));
    CK(cudaEventCreate(&e1[g]));
    CK(cudaHostAlloc((void**)&fail[g], sizeof(kernels::CollFailure), cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaMalloc(&areaDev[g], kernels::kHostRingAreaBytes));
    CK(cudaHostAlloc(&areaHost[g], kernels::kHostRingAreaBytes, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaMalloc(&state[g], kernels::kHostRingMaxBlocks * sizeof(kernels::HostRingBlockState)));
  }
  ncclComm_t comms[2];
  int devs[2] = {0, 1};
  bool nccl = ncclCommInitAll(comms, 2, devs) == ncclSuccess;
  const char* layouts[] = {"push", "pull", "host"};
  printf("variant threads %d slots %d slotKB %d fence %d\n", HR_THREADS, HR_SLOTS, HR_SLOTKB, HR_FENCE);
  std::vector<size_t> sizes = {4 << 20, 16 << 20, 32 << 20, 64 << 20, 256 << 20};
  std::vector<int> grids = {16, 24, 32, 48, 64};
  for (size_t bytes : sizes) {
    size_t count = bytes / 4;
    if (nccl) {
      for (int rep = 0; rep < 2; ++rep) {
        for (int g = 0; g < n; ++g) {
          CK(cudaSetDevice(g));
          CK(cudaEventRecord(e0[g], st[g]));
        }
        for (int it = 0; it < iters; ++it) {
          ncclGroupStart();
          for (int g = 0; g < n; ++g) ncclAllReduce(in[g], out[g], count, ncclFloat, ncclSum, comms[g], st[g]);
          ncclGroupEnd();
        }
        for (int g = 0; g < n; ++g) {
          CK(cudaSetDevice(g));
          CK(cudaEventRecord(e1[g], st[g]));
        }
        for (int g = 0; g < n; ++g) CK(cudaEventSynchronize(e1[g]));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0[0], e1[0]));
        if (rep == 1)
          printf("%10zu nccl        %8.1f us  %6.1f GB/s\n", bytes, ms * 1e3 / iters, bytes / (ms * 1e3 / iters) / 1e3);
      }
    }
    for (int layout = 0; layout < 1; ++layout) {
      for (int blocks : grids) {
        if (layout == 2 && blocks != 32) continue;
        for (int g = 0; g < n; ++g) {
          CK(cudaSetDevice(g));
          CK(cudaMemset(areaDev[g], 0, kernels::kHostRingAreaBytes));
          memset(areaHost[g], 0, kernels::kHostRingAreaBytes);
          CK(cudaMemset(state[g], 0, kernels::kHostRingMaxBlocks * sizeof(kernels::HostRingBlockState)));
          CK(cudaMemset(out[g], 0, bytes));
          memset(fail[g], 0, sizeof(kernels::CollFailure));
        }
        CK(cudaSetDevice(0));
        CK(cudaDeviceSynchronize());
        CK(cudaSetDevice(1));
        CK(cudaDeviceSynchronize());
        float best = 1e30f;
        for (int rep = 0; rep < 3; ++rep) {
          for (int g = 0; g < n; ++g) {
            CK(cudaSetDevice(g));
            CK(cudaEventRecord(e0[g], st[g]));
          }
          for (int it = 0; it < (rep == 0 ? 3 : iters); ++it) {
            for (int r = 0; r < n; ++r) {
              CK(cudaSetDevice(r));
              kernels::HostRingArgs a = coll::hostRingCallArgs(Collective::AllReduce, count, DataType::F32, {0, 1}, r,
                                                               0, coll::HostRingShape{blocks, size_t{HR_SLOTKB} << 10});
              a.input = in[r];
              a.output = out[r];
              int next = a.next;
              if (layout == 0) {
                a.ownArea = (unsigned char*)areaDev[next];
                a.prevArea = (unsigned char*)areaDev[r];
              } else if (layout == 1) {
                a.ownArea = (unsigned char*)areaDev[r];
                a.prevArea = (unsigned char*)areaDev[a.prev];
              } else {
                a.ownArea = (unsigned char*)areaHost[r];
                a.prevArea = (unsigned char*)areaHost[a.prev];
              }
              a.state = (kernels::HostRingBlockState*)state[r];
              void* fd;
              CK(cudaHostGetDevicePointer(&fd, fail[r], 0));
              a.failure = (kernels::CollFailure*)fd;
              a.timeoutNs = 10ull * 1000 * 1000 * 1000;
              kernels::launchHostRing(a, kernels::kF32, kernels::kSum, st[r], {});
            }
          }
          for (int g = 0; g < n; ++g) {
            CK(cudaSetDevice(g));
            CK(cudaEventRecord(e1[g], st[g]));
          }
          for (int g = 0; g < n; ++g) CK(cudaEventSynchronize(e1[g]));
          float ms;
          CK(cudaEventElapsedTime(&ms, e0[0], e1[0]));
          if (rep > 0 && ms < best) best = ms;
        }
        // check
        std::vector<float> h(count);
        int bad = 0;
        for (int g = 0; g < n; ++g) {
          CK(cudaSetDevice(g));
          CK(cudaMemcpy(h.data(), out[g], bytes, cudaMemcpyDeviceToHost));
          for (size_t i = 0; i < count; i += 997)
            if (h[i] != 3.0f) {
              ++bad;
            }
          if (fail[g]->launch) ++bad;
        }
        double us = best * 1e3 / iters;
        printf("%10zu %-5s x%-3d  %8.1f us  %6.1f GB/s  %s\n", bytes, layouts[layout], blocks, us, bytes / us / 1e3,
               bad ? "WRONG" : "ok");
        fflush(stdout);
      }
    }
  }
  return 0;
}
