// Soak: the communicator created and destroyed again and again, in one process and in a world of processes;
// memory shared and imported across processes again and again; the doctor's probe again and again. What each
// process holds -- descriptors, threads, mapped memory, GPU memory (resource_usage.hpp) -- is measured once the
// first cycle is done and again at the end, and must be the same; every cycle's result is checked too.
//
// The counts are arguments so that a short run comes first. Under ctest each test runs a few cycles; the device
// call of docs/reliability.md runs the full counts:
//
//   gpu_test_soak --cycles=10000 --probes=1000 --max-seconds=280 --gtest_filter=Soak.CommunicatorInOneProcess
//
// --max-seconds bounds each test's loop: a run that reaches it stops, says how many cycles it made, and checks
// what it holds then, so that a device call never overruns its limit.
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "coll_test_support.hpp"
#include "forked_roles.hpp"
#include "gpu_probe.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/shared_memory.hpp"
#include "process_world.hpp"
#include "resource_usage.hpp"

namespace peerlink::testing {
namespace {

struct SoakOptions {
  int cycles = 20;         ///< communicator and share cycles
  int probes = 3;          ///< doctor probes
  double maxSeconds = 60;  ///< bound of each test's loop
};

SoakOptions& soakOptions() {
  static SoakOptions options;
  return options;
}

// Memory the allocators may keep cached between cycles; a leak of one arena or staging window per cycle is far
// more over any run of more than a few cycles.
constexpr std::size_t kSlackBytes = std::size_t{64} << 20;

const GpuProbe& probe() {
  static const GpuProbe result = probeGpus();
  return result;
}

int fail(const std::string& role, const std::string& what) {
  std::fprintf(stderr, "[%s] %s\n", role.c_str(), what.c_str());
  return kWrong;
}

milliseconds childLimit() {
  return milliseconds(static_cast<long long>(soakOptions().maxSeconds * 1000)) + 90s;
}

// Counts cycles against the options' bound and reports progress ten times a run.
class CycleClock {
 public:
  CycleClock(std::string role, int wanted) : role_(std::move(role)), wanted_(wanted), start_(RoleClock::now()) {}
  bool more(int done) const { return done < wanted_ && seconds() < soakOptions().maxSeconds; }
  void tick(int done) const {
    if (wanted_ >= 10 && done % (wanted_ / 10) == 0) {
      std::printf("[%s] %d cycles, %.1f s\n", role_.c_str(), done, seconds());
      std::fflush(stdout);
    }
  }
  double seconds() const { return std::chrono::duration<double>(RoleClock::now() - start_).count(); }
  // The run's summary line and the check of what it holds; kOk or kWrong.
  int finish(int done, const ResourceUsage& first, const ResourceUsage& last) const {
    std::printf("[%s] %d of %d cycles in %.1f s (%.2f ms each)%s\n[%s] after the first: %s\n[%s] at the end:    %s\n",
                role_.c_str(), done, wanted_, seconds(), 1000 * seconds() / std::max(done, 1),
                done < wanted_ ? " -- stopped at --max-seconds" : "", role_.c_str(), describeUsage(first).c_str(),
                role_.c_str(), describeUsage(last).c_str());
    const std::string growth = usageGrowth(first, last, kSlackBytes);
    return growth.empty() ? kOk : fail(role_, "grew over the run: " + growth);
  }

 private:
  std::string role_;
  int wanted_;
  RoleClock::time_point start_;
};

// An all-reduce on every rank of `comm` this process drives, checked against the host reference: small (the LL
// lines) on even cycles, 4 MiB on odd ones (the ring kernels; the host ring's slots under
// PEERLINK_COLL_HOST_STAGED=all), so both kinds of buffers are made and released again and again.
std::string cycleAllReduce(Communicator& comm, int cycle) {
  CollCase c;
  c.count = cycle % 2 == 0 ? 1000 : std::size_t{1} << 20;
  c.seed = 1 + static_cast<std::uint64_t>(cycle);
  return runCase(comm, c);
}

// On every GPU, or as two ranks sharing the one GPU where there is one (PEERLINK_COLL_SHARE_GPUS). The environment's
// settings apply: PEERLINK_COLL_HOST_STAGED=all soaks the staged plans' buffers, streams and shared memory.
TEST(Soak, CommunicatorInOneProcess) {
  if (probe().gpus == 0) GTEST_SKIP() << probe().noGpu;
  if (probe().gpus > 1 && !probe().noCommunicator.empty()) GTEST_SKIP() << probe().noCommunicator;
  Child child("one process", [] {
    std::vector<int> devices = {0, 0};
    std::vector<std::pair<std::string, std::string>> settings = {{"PEERLINK_COLL_SHARE_GPUS", "1"}};
    if (probe().gpus > 1) {
      const std::string why = communicatorUnavailable(&devices);
      if (!why.empty()) return fail("one process", why);
      settings.clear();
    }
    const std::string role = probe().gpus > 1 ? "one process, " + std::to_string(devices.size()) + " GPUs"
                                              : std::string("one process, 2 ranks on GPU 0");
    const CycleClock clock(role, soakOptions().cycles);
    ResourceUsage first;
    int done = 0;
    for (; clock.more(done); ++done) {
      {
        Communicator comm(devices, paramsWith(settings));
        const std::string problem = cycleAllReduce(comm, done);
        if (!problem.empty()) return fail("one process", "cycle " + std::to_string(done) + ": " + problem);
      }
      if (done <= 1) first = measureUsage(devices);  // after both sizes have run once
      clock.tick(done + 1);
    }
    return clock.finish(done, first, measureUsage(devices));
  });
  const std::vector<int> codes = waitAll({&child}, childLimit());
  EXPECT_EQ(codes[0], kOk) << "exit codes: 1 wrong result or growth, 99 exception, 100 + ErrorCode, -1 killed";
}

TEST(Soak, CommunicatorAcrossProcesses) {
  if (probe().gpus == 0) GTEST_SKIP() << probe().noGpu;
  const int gpus = probe().gpus;
  const int n = std::clamp(gpus, 2, 4);
  if (gpus > 1 && !probe().noCommunicator.empty()) GTEST_SKIP() << probe().noCommunicator;
  IdChannel ids(n);
  const auto children = forkRanks(n, [&](int rank) {
    const std::string role = "rank " + std::to_string(rank);
    const CycleClock clock(role + " of " + std::to_string(n) + " processes", soakOptions().cycles);
    const Params params = worldParams(n, gpus);
    ResourceUsage first;
    int done = 0;
    for (;; ++done) {
      // Rank 0 decides when to stop; the others follow its ids.
      const std::optional<UniqueId> id = ids.next(rank, rank == 0 && !clock.more(done));
      if (!id) break;
      {
        Communicator comm(*id, n, rank, deviceOfRank(rank, gpus), params);
        const std::string problem = cycleAllReduce(comm, done);
        if (!problem.empty()) return fail(role, "cycle " + std::to_string(done) + ": " + problem);
      }
      if (done <= 1) first = measureUsage({deviceOfRank(rank, gpus)});
      clock.tick(done + 1);
    }
    return clock.finish(done, first, measureUsage({deviceOfRank(rank, gpus)}));
  });
  const std::vector<int> codes = waitAll(pointersTo(children), childLimit());
  for (std::size_t r = 0; r < codes.size(); ++r) EXPECT_EQ(codes[r], kOk) << "rank " << r;
}

class SoakShare : public ::testing::TestWithParam<ShareKind> {};

// One buffer exported, imported, checked and released per cycle: the exporter on GPU 0, the importer on GPU 1
// (GPU 0 on a machine of one).
TEST_P(SoakShare, ShareAndImportCycles) {
  if (probe().gpus == 0) GTEST_SKIP() << probe().noGpu;
  if (GetParam() == ShareKind::Cumem && !probe().cumemFd) GTEST_SKIP() << kNoCumemFd;
  const ShareKind kind = GetParam();
  const int importerGpu = probe().gpus > 1 ? 1 : 0;
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  constexpr milliseconds kTimeout = 30s;
  Pipe toImporter, toExporter;
  Child exporter("exporter", [&] {
    const CycleClock clock(std::string("exporter ") + shareKindName(kind), soakOptions().cycles);
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    ResourceUsage first;
    int done = 0;
    for (; clock.more(done); ++done) {
      {
        ExportableBuffer buffer(0, kBytes, kind);
        PEERLINK_CUDA_CHECK(cudaMemset(buffer.data(), done & 0xff, kBytes));
        PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
        toImporter.send(buffer.socketPath());
        buffer.serveOne(kTimeout);
        toExporter.expect("released");
      }
      if (done == 0) first = measureUsage({0});
      clock.tick(done + 1);
    }
    toImporter.send("stop");
    return clock.finish(done, first, measureUsage({0}));
  });
  Child importer("importer", [&] {
    const CycleClock clock(std::string("importer ") + shareKindName(kind), soakOptions().cycles);
    PEERLINK_CUDA_CHECK(cudaSetDevice(importerGpu));
    ResourceUsage first;
    int done = 0;
    for (;; ++done) {
      const std::string path = toImporter.receive(kTimeout);
      if (path == "stop") break;
      {
        ImportedBuffer imported(path, importerGpu, kTimeout);
        unsigned char ends[2] = {};
        PEERLINK_CUDA_CHECK(cudaMemcpy(&ends[0], imported.data(), 1, cudaMemcpyDefault));
        PEERLINK_CUDA_CHECK(
            cudaMemcpy(&ends[1], static_cast<unsigned char*>(imported.data()) + kBytes - 1, 1, cudaMemcpyDefault));
        if (ends[0] != (done & 0xff) || ends[1] != (done & 0xff)) {
          return fail("importer", "cycle " + std::to_string(done) + ": the imported memory holds another value");
        }
      }
      toExporter.send("released");
      if (done == 0) first = measureUsage({importerGpu});
      clock.tick(done + 1);
    }
    return clock.finish(done, first, measureUsage({importerGpu}));
  });
  const std::vector<int> codes = waitAll({&exporter, &importer}, childLimit());
  EXPECT_EQ(codes[0], kOk) << "exporter";
  EXPECT_EQ(codes[1], kOk) << "importer";
}

INSTANTIATE_TEST_SUITE_P(Kinds, SoakShare, ::testing::Values(ShareKind::Ipc, ShareKind::Cumem),
                         [](const ::testing::TestParamInfo<ShareKind>& kindInfo) {
                           return std::string(kindInfo.param == ShareKind::Ipc ? "Ipc" : "Cumem");
                         });

// The doctor's probe of every pair (platform checks, the copies and the flag handshake; not the cross-process
// methods, which start a process each), the cache off: the same verdicts every time, and nothing kept.
TEST(Soak, DoctorProbes) {
  if (probe().gpus < 2) GTEST_SKIP() << (probe().gpus == 0 ? probe().noGpu : "needs 2 GPUs");
  Child child("doctor", [] {
    const int gpus = probe().gpus;
    const CycleClock clock("doctor, " + std::to_string(gpus) + " GPUs", soakOptions().probes);
    VerifyOptions options;
    options.probeBytes = std::size_t{1} << 20;
    Params params = Params::fromEnvironment();
    params.set("PEERLINK_DOCTOR_CACHE", "off");
    std::vector<int> devices;
    for (int d = 0; d < gpus; ++d) devices.push_back(d);
    ResourceUsage first;
    std::vector<PairVerdict> verdicts;
    int done = 0;
    for (; clock.more(done); ++done) {
      const VerifyResult result = verifyPeers({}, options, params);
      if (done == 0) {
        verdicts = result.report.pairs;
        first = measureUsage(devices);
      }
      for (std::size_t i = 0; i < verdicts.size() && i < result.report.pairs.size(); ++i) {
        if (result.report.pairs[i].verdict != verdicts[i].verdict) {
          return fail("doctor", "probe " + std::to_string(done) + ": GPU " + std::to_string(verdicts[i].src) + " -> " +
                                    std::to_string(verdicts[i].dst) + " is " +
                                    verdictName(result.report.pairs[i].verdict) + ", first " +
                                    verdictName(verdicts[i].verdict));
        }
      }
      clock.tick(done + 1);
    }
    return clock.finish(done, first, measureUsage(devices));
  });
  const std::vector<int> codes = waitAll({&child}, childLimit());
  EXPECT_EQ(codes[0], kOk);
}

// --cycles=N, --probes=N, --max-seconds=S after gtest's own flags; anything else is a usage error.
bool parseSoakArguments(int argc, char** argv) {
  SoakOptions& options = soakOptions();
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const auto value = [&](const char* name) -> std::optional<std::string> {
      const std::string prefix = std::string(name) + "=";
      if (argument.rfind(prefix, 0) != 0) return std::nullopt;
      return argument.substr(prefix.size());
    };
    try {
      if (const auto cycles = value("--cycles")) {
        options.cycles = std::stoi(*cycles);
      } else if (const auto probes = value("--probes")) {
        options.probes = std::stoi(*probes);
      } else if (const auto seconds = value("--max-seconds")) {
        options.maxSeconds = std::stod(*seconds);
      } else {
        std::fprintf(stderr, "gpu_test_soak: unknown argument '%s' (--cycles=N, --probes=N, --max-seconds=S)\n",
                     argument.c_str());
        return false;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "gpu_test_soak: '%s' is not a number\n", argument.c_str());
      return false;
    }
  }
  if (options.cycles < 1 || options.probes < 1 || !(options.maxSeconds > 0)) {
    std::fprintf(stderr, "gpu_test_soak: counts and --max-seconds must be positive\n");
    return false;
  }
  return true;
}

}  // namespace
}  // namespace peerlink::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!peerlink::testing::parseSoakArguments(argc, argv)) return 2;
  return RUN_ALL_TESTS();
}
