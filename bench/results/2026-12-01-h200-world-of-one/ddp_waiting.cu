// A preload in front of the real NCCL for a DDP run in a world of one, where NCCL queues no GPU work for an in-place
// all-reduce: this one queues a piece of work of its own instead, in the caller's stream (PyTorch's process-group
// stream, where it waits for the gradients as a collective's kernel would), to tell which kinds of waiting work
// cost the compute stream's launches in DDP's own arrangement. INTERPOSE_WORK picks it:
//   plain   a kernel of one block of 32 threads
//   wide    a kernel of 32 blocks of 512 threads (the grid of peerlink's bucket all-reduces)
//   touch   the wide kernel reading and writing the bucket in place (x = x + 0)
//   touch132  touch on 132 blocks (one per SM of the H200, the grid of peerlink's kernels by default)
//   excl32, excl132, excl1  touch on 32, 132 or 1 blocks, each taking 200 KiB of shared memory, so an SM
//           holding one runs nothing else
//   griddep touch132 starting with griddepcontrol.wait and launch_dependents (as peerlink's kernels do)
//   args512, args4k  the plain kernel taking a 512-byte or 4 KiB argument struct (__grid_constant__, as peerlink's)
//   reaimed the graph's kernel node given new arguments before each launch (cudaGraphExecKernelNodeSetParams, as
//           peerlink's eager launch graphs are)
//   plainevent, copyevent  the plain kernel, or vec132, then a cudaEventRecord behind it (as peerlink records one
//           behind each call to know when its work is done)
//   vec132, vec32  the bucket read and written in 16-byte words, four in flight a thread (as peerlink's copies
//           do: at full memory bandwidth), on 132 or 32 blocks of 512 threads
//   pdl     the plain kernel, launched allowing programmatic stream serialization
//   cluster the wide kernel as clusters of 4 blocks in the remote memory-sync domain (NCCL's launch on Hopper)
//   graph   the plain kernel as a one-node CUDA graph, launched (peerlink's eager launch graphs)
//   memset  a 4-byte cudaMemsetAsync
//   event   a cudaEventRecord alone
// The all-reduce itself still goes to NCCL. At exit it prints what it queued.
//   nvcc -O2 -arch=sm_90 -shared -Xcompiler -fPIC -o ddp_waiting.so ddp_waiting.cu -ldl
//   LD_PRELOAD=ddp_waiting.so INTERPOSE_WORK=plain torchrun ...
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

long queued = 0;
const char* work = nullptr;
int* scratch = nullptr;
cudaEvent_t event = nullptr;
cudaGraphExec_t graph = nullptr;

__global__ void nothing(int* flag) {
  if (flag != nullptr && threadIdx.x == 1000) *flag = 1;
}

__global__ void touch(float* data, size_t count) {
#if __CUDA_ARCH__ >= 900
  if (blockDim.y == 2) asm volatile("griddepcontrol.wait;\n griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const unsigned int threads = blockDim.x * blockDim.y;
  const unsigned int thread = threadIdx.y * blockDim.x + threadIdx.x;
  for (size_t i = size_t{blockIdx.x} * threads + thread; i < count; i += size_t{gridDim.x} * threads) {
    data[i] = data[i] + 0.0f;
  }
}

__global__ void touchVectors(uint4* data, size_t count) {
  constexpr int kInFlight = 4;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride * kInFlight) {
    uint4 v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      if (i + k * stride < count) v[k] = data[i + k * stride];
    }
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      if (i + k * stride < count) data[i + k * stride] = v[k];
    }
  }
}

template <int Bytes>
struct Block {
  int* flag;
  unsigned char bytes[Bytes - sizeof(int*)];
};

template <int Bytes>
__global__ void nothingWith(const __grid_constant__ Block<Bytes> args) {
  if (args.flag != nullptr && threadIdx.x == 1000) *args.flag = args.bytes[Bytes / 2];
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "ddp_waiting: %s: %s\n", what, cudaGetErrorString(status));
    std::abort();
  }
}

void report() {
  if (work != nullptr) std::fprintf(stderr, "ddp_waiting: queued %ld pieces of work '%s'\n", queued, work);
}

void queueWork(void* recv, size_t count, ncclDataType_t type, cudaStream_t stream) {
  if (scratch == nullptr) {
    check(cudaMalloc(&scratch, 64), "cudaMalloc");
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    std::atexit(report);
  }
  if (std::strcmp(work, "plain") == 0) {
    nothing<<<1, 32, 0, stream>>>(scratch);
  } else if (std::strcmp(work, "wide") == 0) {
    nothing<<<32, 512, 0, stream>>>(scratch);
  } else if (std::strcmp(work, "touch") == 0 && type == ncclFloat32) {
    touch<<<32, 512, 0, stream>>>(static_cast<float*>(recv), count);
  } else if (std::strcmp(work, "touch132") == 0 && type == ncclFloat32) {
    touch<<<132, 512, 0, stream>>>(static_cast<float*>(recv), count);
  } else if (std::strcmp(work, "griddep") == 0 && type == ncclFloat32) {
    touch<<<132, dim3(256, 2), 0, stream>>>(static_cast<float*>(recv), count);  // blockDim.y 2: the griddep prologue
  } else if (std::strncmp(work, "excl", 4) == 0 && type == ncclFloat32) {
    constexpr int kShared = 200 << 10;
    static const cudaError_t allowed =
        cudaFuncSetAttribute(touch, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared);
    check(allowed, "cudaFuncSetAttribute");
    touch<<<std::atoi(work + 4), 512, kShared, stream>>>(static_cast<float*>(recv), count);
  } else if (std::strncmp(work, "vec", 3) == 0 && type == ncclFloat32) {
    touchVectors<<<std::atoi(work + 3), 512, 0, stream>>>(static_cast<uint4*>(recv), count / 4);  // tail left
  } else if (std::strcmp(work, "pdl") == 0) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1);
    config.blockDim = dim3(32);
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, nothing, scratch), "cudaLaunchKernelEx pdl");
  } else if (std::strcmp(work, "cluster") == 0) {
    cudaLaunchAttribute attributes[2] = {};
    attributes[0].id = cudaLaunchAttributeClusterDimension;
    attributes[0].val.clusterDim.x = 4;
    attributes[0].val.clusterDim.y = 1;
    attributes[0].val.clusterDim.z = 1;
    attributes[1].id = cudaLaunchAttributeMemSyncDomain;
    attributes[1].val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(32);
    config.blockDim = dim3(512);
    config.stream = stream;
    config.attrs = attributes;
    config.numAttrs = 2;
    check(cudaLaunchKernelEx(&config, nothing, scratch), "cudaLaunchKernelEx cluster");
  } else if (std::strcmp(work, "plainevent") == 0) {
    nothing<<<1, 32, 0, stream>>>(scratch);
    check(cudaEventRecord(event, stream), "cudaEventRecord plainevent");
  } else if (std::strcmp(work, "copyevent") == 0 && type == ncclFloat32) {
    touchVectors<<<132, 512, 0, stream>>>(static_cast<uint4*>(recv), count / 4);
    check(cudaEventRecord(event, stream), "cudaEventRecord copyevent");
  } else if (std::strcmp(work, "args512") == 0) {
    nothingWith<512><<<1, 32, 0, stream>>>(Block<512>{scratch, {}});
  } else if (std::strcmp(work, "args4k") == 0) {
    nothingWith<4096><<<1, 32, 0, stream>>>(Block<4096>{scratch, {}});
  } else if (std::strcmp(work, "reaimed") == 0) {
    static cudaGraph_t built = nullptr;
    static cudaGraphNode_t node = nullptr;
    static cudaGraphExec_t exec = nullptr;
    static int* flag = nullptr;
    cudaKernelNodeParams params{};
    params.func = reinterpret_cast<void*>(nothing);
    params.gridDim = dim3(1);
    params.blockDim = dim3(32);
    flag = scratch + (queued % 8);  // new arguments every launch
    void* arguments[] = {&flag};
    params.kernelParams = arguments;
    if (exec == nullptr) {
      check(cudaGraphCreate(&built, 0), "cudaGraphCreate");
      check(cudaGraphAddKernelNode(&node, built, nullptr, 0, &params), "cudaGraphAddKernelNode");
      check(cudaGraphInstantiate(&exec, built, 0), "cudaGraphInstantiate");
    } else {
      check(cudaGraphExecKernelNodeSetParams(exec, node, &params), "cudaGraphExecKernelNodeSetParams");
    }
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch reaimed");
  } else if (std::strcmp(work, "graph") == 0) {
    if (graph == nullptr) {
      cudaStream_t capture = nullptr;
      check(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking), "cudaStreamCreate");
      cudaGraph_t captured = nullptr;
      check(cudaStreamBeginCapture(capture, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
      nothing<<<1, 32, 0, capture>>>(scratch);
      check(cudaStreamEndCapture(capture, &captured), "cudaStreamEndCapture");
      check(cudaGraphInstantiate(&graph, captured, 0), "cudaGraphInstantiate");
      check(cudaGraphDestroy(captured), "cudaGraphDestroy");
      check(cudaStreamDestroy(capture), "cudaStreamDestroy");
    }
    check(cudaGraphLaunch(graph, stream), "cudaGraphLaunch");
  } else if (std::strcmp(work, "memset") == 0) {
    check(cudaMemsetAsync(scratch, 0, 4, stream), "cudaMemsetAsync");
  } else if (std::strcmp(work, "event") == 0) {
    check(cudaEventRecord(event, stream), "cudaEventRecord");
  } else {
    return;
  }
  check(cudaGetLastError(), "launch");
  ++queued;
}

// PyTorch's NCCL is a dependency of a Python extension, loaded into a local scope that RTLD_NEXT does not search:
// it is found by its name among the loaded libraries.
void* nccl(const char* name) {
  static void* library = dlopen("libnccl.so.2", RTLD_NOLOAD | RTLD_LAZY);
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  if (symbol == nullptr) {
    std::fprintf(stderr, "ddp_waiting: no %s in a loaded libnccl.so.2\n", name);
    std::abort();
  }
  return symbol;
}

}  // namespace

extern "C" ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  using AllReduce = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  using CommCount = ncclResult_t (*)(ncclComm_t, int*);
  static const auto next = reinterpret_cast<AllReduce>(nccl("ncclAllReduce"));
  static const auto commCount = reinterpret_cast<CommCount>(nccl("ncclCommCount"));
  const ncclResult_t result = next(sendbuff, recvbuff, count, datatype, op, comm, stream);
  if (work == nullptr) work = std::getenv("INTERPOSE_WORK");
  int ranks = 0;
  if (result == ncclSuccess && work != nullptr && sendbuff == recvbuff && commCount(comm, &ranks) == ncclSuccess &&
      ranks == 1) {
    queueWork(recvbuff, count, datatype, stream);
  }
  return result;
}
