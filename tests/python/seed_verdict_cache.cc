// Test helper for tests/python: caches a verdict for one pair of a topology file, under this boot, as
// `peerlink doctor` on this machine would have, in PEERLINK_DOCTOR_CACHE_DIR (or the default folder).
//
//   peerlink_python_seed_cache TOPOLOGY_FILE SRC DST VERDICT REASON
//
// Exit 0 when stored, 3 when this machine has no boot id (nothing can be cached: the test skips), 2 otherwise.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "doctor/doctor_verdict.hpp"
#include "doctor/verdict_cache.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"

int main(int argc, char** argv) {
  using namespace peerlink;
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s TOPOLOGY_FILE SRC DST VERDICT REASON\n", argv[0]);
    return 2;
  }
  try {
    const Topology topology = loadTopologyFile(argv[1]);
    const int src = std::stoi(argv[2]);
    const int dst = std::stoi(argv[3]);
    const std::optional<Verdict> verdict = parseVerdictName(argv[4]);
    if (!verdict) {
      std::fprintf(stderr, "%s is not a verdict (OK, DEGRADED, BROKEN, UNSUPPORTED)\n", argv[4]);
      return 2;
    }
    const std::string bootId = readBootId();
    if (bootId.empty()) {
      std::fprintf(stderr, "no boot id (/proc/sys/kernel/random/boot_id): nothing can be cached here\n");
      return 3;
    }
    std::string directory = Params::fromEnvironment().getString("PEERLINK_DOCTOR_CACHE_DIR");
    if (directory.empty()) directory = defaultVerdictCacheDirectory();
    PairDecision decision;
    decision.verdict = PairVerdict{src, dst, *verdict, {argv[5]}};
    const VerdictCacheKey key = makeVerdictCacheKey(topology, src, dst, bootId, readKernelCommandLine(), "quick");
    if (!VerdictCache(directory).store(key, topology, decision)) {
      std::fprintf(stderr, "could not store the entry in %s\n", directory.c_str());
      return 2;
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
}
