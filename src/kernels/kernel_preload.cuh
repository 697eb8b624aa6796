// Loading every kernel of src/kernels/ before a spinning kernel runs.
//
// Driver fact: with lazy module loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2 on Linux) a
// kernel's code is loaded into a device's context at its first use, and that load may need a context
// synchronization: it waits for every kernel this process already runs on that device to finish. A spinning kernel
// (a wait, a ping-pong side, a latch, an LL receive) finishes only after a partner kernel of the same
// device has run; if the partner's first launch comes while the spinner runs, the launch waits for the
// spinner and the spinner for the launch, until the spinner's deadline gives up (seen on the H200s:
// GpuKernels.PutSignalOnOneGpu). The cure is to load the kernels beforehand, while nothing spins:
// cudaFuncGetAttributes on a kernel loads it into the current device's context (NCCL does the same for
// its kernels at init). A load waits only for kernels of its own device (cross-GPU tests load the put on one
// GPU while the other GPU's wait spins).
//
// ensureKernelsLoaded() does that for every kernel (every launchable template instantiation) of
// src/kernels/, once per device. Every launch function of a spinning kernel calls it before its launch,
// and so do the launch functions of their partners (put-with-signal, LL put), so no order of first
// launches can leave a load waiting behind a spinner. Kernels from outside src/kernels/ are not covered.
// (A launch that needs more local memory than the context has reserved grows the reservation, which can
// wait for the device too; every kernel here has a 0-byte stack frame in ptxas -v, so none does.)
#pragma once

#include <cuda_runtime_api.h>

namespace peerlink::kernels {

/// Loads every kernel of src/kernels/ into the current device's context, the first time it is called for
/// that device (thread-safe; later calls cost a cudaGetDevice and an atomic load). Throws Error when a
/// load fails; a later call tries again. Call it while no spinning kernel runs on the current device.
void ensureKernelsLoaded();

class KernelGraph;

/// Instantiates `graph` and launches it once on `stream` (then waits for it), while no kernel of its device spins.
/// Driver fact: the first launch of an instantiated graph may wait for the device's running kernels, as a first
/// kernel load may (above); with 8 ranks sharing one H200 a rank's first eager call through its graph waited behind
/// its peers' spinning LL kernels until their deadline, a direct launch did not. A graph that cannot be built turns
/// itself off, as at any launch.
void readyKernelGraph(KernelGraph& graph, cudaStream_t stream);

namespace detail {

/// Loads one kernel into the current device's context (cudaFuncGetAttributes); throws Error naming it.
void loadKernel(const void* kernel, const char* name);

template <typename... Args>
void loadKernel(void (*kernel)(Args...), const char* name) {
  loadKernel(reinterpret_cast<const void*>(kernel), name);
}

// Each of these loads the kernels of one .cu file of src/kernels/; ensureKernelsLoaded() calls them all.
void preloadCopyKernels();       // copy_kernels.cu
void preloadBulkCopyKernels();   // bulk_copy.cu
void preloadPutSignalKernels();  // put_signal.cu
void preloadLatchKernels();      // latch_kernel.cu
void preloadPatternKernels();    // pattern_kernels.cu
void preloadLlKernels();         // ll_protocol.cu
void preloadAsyncCallKernels();  // async_call.cu

}  // namespace detail
}  // namespace peerlink::kernels
