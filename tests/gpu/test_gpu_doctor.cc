// verifyPeers on real GPUs: every pair OK on a healthy machine within the time bound, the cache answering
// a second call, and the faults that can be made on purpose giving their verdicts within the bound.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <string>

#include "gpu_test_support.hpp"
#include "peerlink/doctor.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// A fresh cache folder per test, so runs never answer from each other's entries.
class DoctorGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PEERLINK_REQUIRE_GPUS(2);
    cacheDir_ = fs::temp_directory_path() / ("peerlink-doctor-gpu-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cacheDir_);
  }
  void TearDown() override { fs::remove_all(cacheDir_); }

  Params params(std::map<std::string, std::string> more = {}) const {
    more["PEERLINK_DOCTOR_CACHE_DIR"] = cacheDir_.string();
    return Params::fromMap(more);
  }
  static VerifyOptions withHelper() {
    VerifyOptions options;
    options.helperExecutable = PEERLINK_CLI_PATH;
    return options;
  }

  fs::path cacheDir_;
};

const ProbeResult* probeOf(const VerifyResult& result, int src, int dst, const std::string& method) {
  for (const ProbeResult& probe : result.probes) {
    if (probe.src == src && probe.dst == dst && probe.method == method) return &probe;
  }
  return nullptr;
}

bool hasReason(const PairVerdict& pair, const std::string& code) {
  return std::find(pair.reasons.begin(), pair.reasons.end(), code) != pair.reasons.end();
}

TEST_F(DoctorGpuTest, HealthyMachineIsOkEverywhereAndTheCacheAnswersTheSecondCall) {
  const VerifyResult first = verifyPeers({}, withHelper(), params());
  const std::size_t gpus = first.topology.gpus.size();
  ASSERT_EQ(first.report.pairs.size(), gpus * (gpus - 1));
  for (const ProbeResult& probe : first.probes) {
    EXPECT_TRUE(probe.ran) << probe.src << "->" << probe.dst << " " << probe.method << ": " << probe.error;
    EXPECT_EQ(probe.wrongBytes, 0u) << probe.src << "->" << probe.dst << " " << probe.method;
  }
  for (const PairVerdict& pair : first.report.pairs) {
    if (!first.topology.pair(pair.src, pair.dst).canAccessPeer) continue;
    EXPECT_EQ(pair.verdict, Verdict::Ok) << pair.src << "->" << pair.dst << " "
                                         << (pair.reasons.empty() ? "" : pair.reasons.front());
  }
  std::printf("full probe of %zu pairs: %.2f s, %zu probes\n", first.report.pairs.size(), first.seconds,
              first.probes.size());
  EXPECT_LE(first.seconds, 10.0 * static_cast<double>(gpus * (gpus - 1)) / 12.0 + 5.0);

  const VerifyResult second = verifyPeers({}, withHelper(), params());
  EXPECT_EQ(second.cachedPairs, static_cast<int>(second.report.pairs.size()));
  EXPECT_TRUE(second.probes.empty());
  EXPECT_EQ(second.report.overall, first.report.overall);
  std::printf("second call from the cache: %.3f s\n", second.seconds);

  // refresh probes again; off neither reads nor writes.
  const VerifyResult refreshed = verifyPeers({0, 1}, withHelper(), params({{"PEERLINK_DOCTOR_CACHE", "refresh"}}));
  EXPECT_EQ(refreshed.cachedPairs, 0);
  EXPECT_FALSE(refreshed.probes.empty());
}

TEST_F(DoctorGpuTest, DroppedFlagIsBrokenWithinTheTimeBound) {
  VerifyOptions options;  // in-process methods only: the fault is in this process's kernels
  options.timeout = std::chrono::milliseconds(500);
  const VerifyResult result =
      verifyPeers({0, 1}, options, params({{"PEERLINK_FAULT_DROP_FLAG", "1"}, {"PEERLINK_DOCTOR_CACHE", "off"}}));
  for (const PairVerdict& pair : result.report.pairs) {
    EXPECT_EQ(pair.verdict, Verdict::Broken) << pair.src << "->" << pair.dst;
    EXPECT_TRUE(hasReason(pair, "flag_handshake_timeout")) << pair.src << "->" << pair.dst;
  }
  const ProbeResult* handshake = probeOf(result, 0, 1, "flag_handshake");
  ASSERT_NE(handshake, nullptr);
  EXPECT_TRUE(handshake->timedOut) << handshake->error;
  std::printf("dropped flag: verdict in %.2f s\n", result.seconds);
  EXPECT_LT(result.seconds, 10.0);
}

TEST_F(DoctorGpuTest, PeerHiddenFromTheSecondProcessIsNamed) {
  VerifyOptions options = withHelper();
  // The exporting process sees only GPU 0, so it cannot own memory on GPU 1.
  options.helperVisibleDevices = "0";
  const VerifyResult result = verifyPeers({0, 1}, options, params({{"PEERLINK_DOCTOR_CACHE", "off"}}));
  const ProbeResult* ipc = probeOf(result, 0, 1, "ipc");
  ASSERT_NE(ipc, nullptr);
  EXPECT_FALSE(ipc->ran);
  EXPECT_EQ(ipc->errorCause, "peer_hidden") << ipc->error;
  for (const PairVerdict& pair : result.report.pairs) {
    if (pair.src == 0 && pair.dst == 1) {
      EXPECT_EQ(pair.verdict, Verdict::Degraded);
      EXPECT_TRUE(hasReason(pair, "ipc_peer_hidden"));
      EXPECT_TRUE(hasReason(pair, "cumem_peer_hidden"));
    }
  }
}

}  // namespace
}  // namespace peerlink
