// How a collective kernel is put on its stream: through the rank's eager KernelGraph or directly, and
// whether it may overlap the kernel before it in the stream (programmatic dependent launch).
#pragma once

namespace peerlink::kernels {

class KernelGraph;

struct KernelLaunch {
  /// Launch through this one-node graph (eager calls; kernel_graph.hpp), or directly when null (streams
  /// being captured) or when the graph turned itself off.
  KernelGraph* graph = nullptr;
  /// Direct launches only: let the kernel start while the previous kernel in its stream still runs
  /// (cudaLaunchAttributeProgrammaticStreamSerialization; compute capability 9.0 and later). Safe only for
  /// kernels that call colldev::awaitPreviousKernel before touching memory, as every collective kernel does.
  /// Saves the next kernel's launch latency when collectives follow each other in a stream or a CUDA graph
  /// (stream capture turns it into a programmatic edge).
  bool overlapPrevious = false;
};

}  // namespace peerlink::kernels
