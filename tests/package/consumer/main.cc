// Uses the installed library without a GPU: parameters, and a topology from a file.
#include <cstdio>

#include <peerlink/error.hpp>
#include <peerlink/params.hpp>
#include <peerlink/topology.hpp>
#include <peerlink/version.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer TOPOLOGY.json\n");
    return 2;
  }
  try {
    peerlink::Params params;
    params.set("PEERLINK_TOPO_FILE", argv[1]);
    const peerlink::Topology topology = peerlink::discoverTopology(params);
    std::printf("peerlink %s: %zu GPUs, GPU 0 -> GPU 1 %s\n", peerlink::kVersion, topology.gpus.size(),
                peerlink::linkLabel(topology.pair(0, 1)).c_str());
    return 0;
  } catch (const peerlink::Error& error) {
    std::fprintf(stderr, "consumer: %s\n", error.what());
    return 1;
  }
}
