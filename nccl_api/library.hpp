// The process's one Shim, behind the exported C functions of libpeerlink_nccl.so.2.
#pragma once

#include "nccl_api/shim.hpp"

namespace peerlink::nccl {

/// Made when the library is loaded (its constructor), before the application can load the real NCCL: the
/// settings are read once, the logger configured, and the real NCCL loaded unless PEERLINK_NCCL_FALLBACK=NONE.
/// Never destroyed: communicators the application leaves alive at exit stay valid to the end.
Shim& processShim();

}  // namespace peerlink::nccl
