// KernelGraph (kernel_graph.hpp).
#include "kernels/kernel_graph.hpp"

namespace peerlink::kernels {

KernelGraph::~KernelGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

cudaError_t KernelGraph::launch(const void* func, int blocks, int threads, void** params,
                                cudaStream_t stream) noexcept {
  if (off_) return cudaErrorNotSupported;
  cudaKernelNodeParams node = {};
  node.func = const_cast<void*>(func);
  node.gridDim = dim3(static_cast<unsigned int>(blocks));
  node.blockDim = dim3(static_cast<unsigned int>(threads));
  node.kernelParams = params;
  cudaError_t status = cudaSuccess;
  if (exec_ == nullptr) {
    status = cudaGraphCreate(&graph_, 0);
    if (status == cudaSuccess) status = cudaGraphAddKernelNode(&node_, graph_, nullptr, 0, &node);
    if (status == cudaSuccess) status = cudaGraphInstantiate(&exec_, graph_, 0);
  } else {
    // The update only affects later launches: launches already queued keep their arguments.
    status = cudaGraphExecKernelNodeSetParams(exec_, node_, &node);
  }
  if (status == cudaSuccess) status = cudaGraphLaunch(exec_, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();
    off_ = true;
  }
  return status;
}

}  // namespace peerlink::kernels
