// The shim's Platform over peerlink and CUDA: worlds are peerlink Communicators, memory is cudaMalloc's, the
// passes are transform_kernels.cu's.
#pragma once

#include <memory>

#include "nccl_api/backend.hpp"

namespace peerlink::nccl {

std::unique_ptr<Platform> makeCudaPlatform();

}  // namespace peerlink::nccl
