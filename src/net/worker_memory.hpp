// Host memory whose reductions run on a thread of their own, so the transport's thread, which MPI moves data in
// (its tests of the requests), never computes: it queues a whole transfer's reduction and polls whether it is done
// (LocalMemory::queues). Copies and buffers are HostMemory's. For host buffers (the direct path on host memory, the
// staged path without a GPU); PEERLINK_NET_REDUCE=HOST_THREAD.
#pragma once

#include <memory>

#include "net/plan_runner.hpp"

namespace peerlink::net {

/// The thread starts here and is joined by the destructor after the reductions queued before it ran.
std::unique_ptr<LocalMemory> workerHostMemory();

}  // namespace peerlink::net
