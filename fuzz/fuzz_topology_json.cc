// The topology file reader (topologyFromJson): any bytes either load as a valid topology, which then
// writes and reads back the same, or fail with Error(InvalidInput).
#include <cstddef>
#include <cstdint>
#include <string>

#include "peerlink/error.hpp"
#include "peerlink/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const peerlink::Topology topology = peerlink::topologyFromJson(text, "fuzz.json");
    // What loads must be whole: every pair found, and the written form loads again.
    for (const peerlink::GpuPair& pair : topology.pairs) topology.pair(pair.src, pair.dst);
    peerlink::topologyFromJson(peerlink::topologyToJson(topology), "again.json");
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidInput) __builtin_trap();
  }
  return 0;
}
