// Each pair's way on this machine's GPUs, with PEERLINK_VERIFY=quick gathering real verdicts: every ordered pair
// gets one, and no pair the probe found BROKEN is direct. (The staged plans' GPU executor is not built yet: the
// plans themselves are proven on the host, tests/cpu/test_coll_staged_plan.cc.)
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "coll/pair_transport.hpp"
#include "coll/peer_verdicts.hpp"
#include "gpu_test_support.hpp"

namespace peerlink::coll {
namespace {

namespace fs = std::filesystem;

TEST(PairTransportGpu, QuickVerdictsCoverEveryPairAndBrokenPairsAreNeverDirect) {
  PEERLINK_REQUIRE_GPUS(2);
  const fs::path cache = fs::temp_directory_path() / ("peerlink-pair-transport-gpu-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const Params params = Params::fromMap({{"PEERLINK_VERIFY", "quick"}, {"PEERLINK_DOCTOR_CACHE_DIR", cache.string()}});
  const Topology topology = discoverTopology(params);
  std::vector<int> devices;
  for (const Gpu& gpu : topology.gpus) devices.push_back(gpu.cudaOrdinal);
  if (devices.size() > 8) devices.resize(8);
  const PeerVerdicts verdicts = gatherPeerVerdicts(topology, devices, params);
  fs::remove_all(cache);
  EXPECT_EQ(verdicts.source, "probed at communicator creation (PEERLINK_VERIFY=quick)");
  const PairTransport transport =
      choosePairTransport(topology, devices, params, ProcessBoundary::SameProcess, &verdicts);
  for (const PairChoice& choice : transport.pairs) {
    ASSERT_TRUE(choice.verdict.has_value()) << describePairChoice(choice);
    if (*choice.verdict == Verdict::Broken) {
      EXPECT_NE(choice.way, PairWay::Direct) << describePairChoice(choice);
    }
  }
  std::cout << formatPairTransport(transport);
}

}  // namespace
}  // namespace peerlink::coll
