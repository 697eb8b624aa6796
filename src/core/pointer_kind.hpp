// What memory a pointer is, for the checks on user buffers before anything is launched (the collectives'
// and the transport's).
#pragma once

#include <cuda_runtime_api.h>

namespace peerlink {

/// The runtime's memory type (Unregistered: not CUDA memory, or a freed one) and the GPU the memory was
/// allocated or registered on.
struct PointerKind {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
};

/// The driver asked for three attributes (cuPointerGetAttributes: type, ordinal, managed), the runtime's
/// cudaPointerGetAttributes where the driver refuses or finds no CUDA memory. Clears the runtime's last
/// error. Throws only as driverApi() does (no driver, or one without these functions).
PointerKind pointerKind(const void* pointer);

}  // namespace peerlink
