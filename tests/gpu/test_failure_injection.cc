// Failure injection between real processes: a rank stopped with SIGSTOP in the middle of a collective, an
// exporter killed while a peer imports its memory, an importer that never answers, a full /tmp for the sockets
// (and a full /dev/shm, which peerlink does not use), too few file descriptors. Each must end in an Error that
// names the rank, pair or step within twice its deadline -- never a hang or a crash -- with nothing leaked, and
// the survivors able to go on. (A rank killed with SIGKILL: test_communicator_processes.cc,
// ARankThatDiesMidCollectiveStopsTheOthers.) docs/reliability.md has what the device machine showed.
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs. The tests that
// mount a full tmpfs need root and skip with the reason elsewhere.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "coll_test_support.hpp"
#include "core/unix_socket.hpp"
#include "cpu/full_filesystem.hpp"
#include "forked_roles.hpp"
#include "gpu_probe.hpp"
#include "peerlink/doctor.hpp"
#include "peerlink/shared_memory.hpp"
#include "process_world.hpp"
#include "resource_usage.hpp"
#include "transport/share_protocol.hpp"

namespace peerlink::testing {
namespace {

constexpr milliseconds kDeadline = 4s;  // PEERLINK_TIMEOUT_MS and the share timeouts of these tests
constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Probe {
  int gpus = 0;
  std::string skip;       // empty when GPUs and (with 2+) peer access are there
  std::string cumemSkip;  // empty when GPU 0 exports POSIX-fd cuMem handles
  std::string mountSkip;  // empty when a child can mount a full tmpfs
};

const Probe& probe() {
  static const Probe result = [] {
    const GpuProbe gpu = probeGpus();
    Probe found;
    found.gpus = gpu.gpus;
    found.skip = gpu.gpus > 1 ? gpu.noCommunicator : gpu.noGpu;
    found.cumemSkip = !found.skip.empty() ? found.skip : gpu.cumemFd ? "" : kNoCumemFd;
    // No CUDA in this child: may it mount?
    Pipe mount;
    Child mounter("mount probe", [&] {
      char scratch[] = "/tmp/peerlink-mount-probe-XXXXXX";
      if (::mkdtemp(scratch) == nullptr) {
        mount.send("mkdtemp failed");
        return kOk;
      }
      mount.send(mountFullTmpfs(scratch));
      return kOk;
    });
    mount.closeWrite();
    try {
      found.mountSkip = mount.receive(30s);
      if (!found.mountSkip.empty()) found.mountSkip = "cannot mount a full tmpfs: " + found.mountSkip;
    } catch (const std::exception& error) {
      found.mountSkip = std::string("the mount probe failed: ") + error.what();
    }
    waitAll({&mounter}, 30s);
    return found;
  }();
  return result;
}

#define PEERLINK_REQUIRE_GPU()                                                                          \
  do {                                                                                                  \
    if (probe().gpus == 0 || (probe().gpus > 1 && !probe().skip.empty())) GTEST_SKIP() << probe().skip; \
  } while (0)

int fail(const std::string& role, const std::string& what) {
  std::fprintf(stderr, "[%s] %s\n", role.c_str(), what.c_str());
  std::fflush(stderr);
  return kWrong;
}

double secondsSince(RoleClock::time_point start) {
  return std::chrono::duration<double>(RoleClock::now() - start).count();
}

// kOk when `action` throws an Error within `limit` whose message has every one of `needles`; prints it.
template <typename Action>
int expectErrorWithin(const std::string& role, milliseconds limit, const std::vector<std::string>& needles,
                      Action action) {
  const auto start = RoleClock::now();
  try {
    action();
  } catch (const Error& error) {
    const double seconds = secondsSince(start);
    std::printf("[%s] after %.2f s, %s: %s\n", role.c_str(), seconds, errorCodeName(error.code()), error.what());
    std::fflush(stdout);
    if (seconds > std::chrono::duration<double>(limit).count()) return fail(role, "the error came too late");
    for (const std::string& needle : needles) {
      if (std::string(error.what()).find(needle) == std::string::npos) return fail(role, "no '" + needle + "' in it");
    }
    return kOk;
  }
  return fail(role, "no error");
}

// ---- a rank stopped with SIGSTOP ------------------------------------------------------------------------

// Rank 2 stops itself before its all-reduce; ranks 0 and 1 wait in theirs. A stopped process keeps its sockets
// and its pid, so only the device deadline ends the wait: the survivors' error names rank 2 and the step within
// twice PEERLINK_TIMEOUT_MS. Then they make a world of two and go on; rank 2, continued once they are gone,
// ends its calls and is told of the rank it waited for.
TEST(FailureInjection, ARankStoppedWithSigstopIsNamedAtTheDeadline) {
  PEERLINK_REQUIRE_GPU();
  const int gpus = probe().gpus;
  constexpr int n = 3;
  IdChannel ids(n);
  Pipe again;  // rank 0 -> rank 1: the id of the survivors' world
  const Settings settings = {{"PEERLINK_TIMEOUT_MS", std::to_string(kDeadline.count())}};
  const auto children = forkRanks(n, [&](int rank) {
    const std::string role = "rank " + std::to_string(rank);
    const int device = deviceOfRank(rank, gpus);
    std::optional<Communicator> comm(std::in_place, *ids.next(rank), n, rank, device, worldParams(n, gpus, settings));
    Stream stream(device);
    DeviceBuffer buffer(device, 4096);
    if (rank == 2) {
      std::this_thread::sleep_for(300ms);  // the others are waiting in their all-reduce by now
      ::raise(SIGSTOP);
      // Continued after the others left. Its first all-reduce may complete: the others stored their LL messages
      // into its lines before they gave up. The next one has no peer left to hear from: it must end too, naming
      // the rank it waited for.
      return expectErrorWithin(role, 2 * kDeadline, {"rank "}, [&] {
        for (int call = 0; call < 2; ++call) {
          comm->allReduce(rank, buffer.data(), buffer.data(), 1000, DataType::F32, ReduceOp::Sum, stream.get());
          if (!finishes(stream.get(), 2 * kDeadline.count() / 1000.0)) {
            throw Error(ErrorCode::Timeout, "an all-reduce of the continued rank did not end");
          }
          comm->checkHealth();
        }
      });
    }
    const auto start = RoleClock::now();
    comm->allReduce(rank, buffer.data(), buffer.data(), 1000, DataType::F32, ReduceOp::Sum, stream.get());
    if (!finishes(stream.get(), 2 * kDeadline.count() / 1000.0 + 5)) return fail(role, "the all-reduce never ended");
    const double waited = secondsSince(start);
    std::printf("[%s] the all-reduce ended %.2f s after it was launched\n", role.c_str(), waited);
    if (waited > 2 * kDeadline.count() / 1000.0) return fail(role, "later than twice the deadline");
    const int named = expectErrorWithin(role, 1s, {"rank 2", "waited for", "at the"}, [&] { comm->checkHealth(); });
    if (named != kOk) return named;
    // The survivors go on in worlds of their own. The first after the failure may leave address space the CUDA
    // driver reserved (PROT_NONE, no memory behind it: 128 MiB per process on 2x H200), nothing else; the second
    // leaves nothing at all.
    comm.reset();
    const ResourceUsage kept = measureUsage({device});
    ResourceUsage before = kept;
    for (int world = 1; world <= 2; ++world) {
      std::optional<UniqueId> id;
      if (rank == 0) {
        id = makeUniqueId();
        again.send(uniqueIdToString(*id));
      } else {
        id = uniqueIdFromString(again.receive());
      }
      {
        Communicator survivors(*id, 2, rank, device, worldParams(2, gpus));
        CollCase c;
        c.count = 4096;
        const std::string problem = runCase(survivors, c);
        if (!problem.empty()) return fail(role, "the survivors' world: " + problem);
      }
      const ResourceUsage after = measureUsage({device});
      std::printf("[%s] after the survivors' world %d: %s\n", role.c_str(), world, describeUsage(after).c_str());
      const std::string growth =
          usageGrowth(before, after, 64 * kMiB, world == 1 ? Reservations::Ignored : Reservations::Counted);
      if (!growth.empty()) return fail(role, fmt::format("the survivors' world {} kept: {}", world, growth));
      before = after;
    }
    std::printf("[%s] after the failed world: %s\n", role.c_str(), describeUsage(kept).c_str());
    return kOk;
  });
  const std::vector<Child*> ranks = pointersTo(children);
  // The survivors first; then rank 2 is continued and must end on its own.
  const auto deadline = RoleClock::now() + 90s;
  while ((!ranks[0]->poll() || !ranks[1]->poll()) && RoleClock::now() < deadline) std::this_thread::sleep_for(20ms);
  if (ranks[2]->pid() > 0) ::kill(ranks[2]->pid(), SIGCONT);
  const std::vector<int> codes = waitAll(ranks, 60s);
  EXPECT_EQ(codes[0], kOk) << "rank 0";
  EXPECT_EQ(codes[1], kOk) << "rank 1";
  EXPECT_EQ(codes[2], kOk) << "rank 2, continued";
}

// ---- an exporter killed while a peer imports, an importer that never answers ------------------------------

// The exporter's process dies between accepting the importer and sending the offer: the importer's error names
// the socket and the exporter at once, and it keeps no descriptor or memory.
TEST(FailureInjection, AnExporterKilledMidHandshakeFailsTheImporterAtOnce) {
  PEERLINK_REQUIRE_GPU();
  Pipe toImporter;
  Child exporter("exporter", [&] {  // no CUDA: it dies before it would export anything
    UnixListener listener("peerlink-dying-exporter-" + std::to_string(::getpid()) + ".sock");
    toImporter.send(listener.path());
    serveShareOnce(
        listener,
        []() -> ExportedHandle {
          ::raise(SIGKILL);
          return {};
        },
        30s);
    return kWrong;
  });
  Child importer("importer", [&] {
    const std::string path = toImporter.receive();
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    PEERLINK_CUDA_CHECK(cudaFree(nullptr));
    const ResourceUsage before = measureUsage({0});
    const int named = expectErrorWithin("importer", 2 * kDeadline, {path}, [&] { ImportedBuffer(path, 0, kDeadline); });
    if (named != kOk) return named;
    const std::string growth = usageGrowth(before, measureUsage({0}), kMiB);
    return growth.empty() ? kOk : fail("importer", "kept: " + growth);
  });
  const std::vector<int> codes = waitAll({&exporter, &importer}, 60s);
  EXPECT_EQ(codes[0], 128 + SIGKILL) << "exporter";
  EXPECT_EQ(codes[1], kOk) << "importer";
}

// CUMEM memory lives until the last importer releases it: the exporter killed after the import takes nothing
// from the importer, which still reads the exporter's bytes and releases the mapping cleanly.
TEST(FailureInjection, CumemMemoryOutlivesItsKilledExporter) {
  PEERLINK_REQUIRE_GPU();
  if (!probe().cumemSkip.empty()) GTEST_SKIP() << probe().cumemSkip;
  const int importerGpu = probe().gpus > 1 ? 1 : 0;
  Pipe toImporter, toExporter;
  Child exporter("exporter", [&] {
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    ExportableBuffer buffer(0, 8 * kMiB, ShareKind::Cumem);
    PEERLINK_CUDA_CHECK(cudaMemset(buffer.data(), 0x5a, 8 * kMiB));
    PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
    toImporter.send(buffer.socketPath());
    buffer.serveOne(30s);
    toExporter.expect("imported");
    ::raise(SIGKILL);
    return kWrong;
  });
  Child importer("importer", [&] {
    const std::string path = toImporter.receive();
    PEERLINK_CUDA_CHECK(cudaSetDevice(importerGpu));
    PEERLINK_CUDA_CHECK(cudaFree(nullptr));
    toImporter.closeWrite();  // so that the exporter's end is the last
    const ResourceUsage before = measureUsage({importerGpu});
    {
      ImportedBuffer imported(path, importerGpu, 30s);
      toExporter.send("imported");
      try {
        toImporter.receive(30s);
        return fail("importer", "a message where the exporter's end of file was due");
      } catch (const Error& error) {
        if (error.code() != ErrorCode::RemoteError) throw;  // end of file: the exporter is gone
      }
      std::vector<unsigned char> bytes(8 * kMiB);
      PEERLINK_CUDA_CHECK(cudaMemcpy(bytes.data(), imported.data(), bytes.size(), cudaMemcpyDefault));
      for (const unsigned char byte : bytes) {
        if (byte != 0x5a) return fail("importer", "the memory changed once its exporter died");
      }
    }
    const std::string growth = usageGrowth(before, measureUsage({importerGpu}), kMiB);
    return growth.empty() ? kOk : fail("importer", "kept: " + growth);
  });
  toImporter.closeWrite();  // the exporter holds the only write end left
  const std::vector<int> codes = waitAll({&exporter, &importer}, 60s);
  EXPECT_EQ(codes[0], 128 + SIGKILL) << "exporter";
  EXPECT_EQ(codes[1], kOk) << "importer";
}

// An importer that takes the offer and the descriptor and never answers: the exporter's serveOne gives up at its
// timeout naming the importer's pid, keeps nothing, and serves the next importer.
TEST(FailureInjection, AnImporterThatNeverAnswersTimesOutTheExporter) {
  PEERLINK_REQUIRE_GPU();
  const ShareKind kind = probe().cumemSkip.empty() ? ShareKind::Cumem : ShareKind::Ipc;
  const int importerGpu = probe().gpus > 1 ? 1 : 0;
  Pipe toSilent, toImporter;
  Child exporter("exporter", [&] {
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    ExportableBuffer buffer(0, 4 * kMiB, kind);
    const ResourceUsage before = measureUsage({0});
    toSilent.send(buffer.socketPath());
    const int named =
        expectErrorWithin("exporter", 2 * kDeadline, {"timed out", "pid"}, [&] { buffer.serveOne(kDeadline); });
    if (named != kOk) return named;
    const std::string growth = usageGrowth(before, measureUsage({0}), kMiB);
    if (!growth.empty()) return fail("exporter", "kept: " + growth);
    toImporter.send(buffer.socketPath());  // and it goes on
    buffer.serveOne(30s);
    return kOk;
  });
  Child silent("silent importer", [&] {  // no CUDA: takes the offer, never answers
    UnixConnection connection = connectUnix(toSilent.receive(), 30s);
    connection.receiveMessage(30s);
    if (kind == ShareKind::Cumem) connection.receiveFd(30s);
    std::this_thread::sleep_for(3 * kDeadline);
    return kOk;
  });
  Child importer("importer", [&] {
    const std::string path = toImporter.receive();
    ImportedBuffer imported(path, importerGpu, 30s);
    return kOk;
  });
  const std::vector<int> codes = waitAll({&exporter, &silent, &importer}, 60s);
  EXPECT_EQ(codes[0], kOk) << "exporter";
  EXPECT_EQ(codes[1], kOk) << "silent importer";
  EXPECT_EQ(codes[2], kOk) << "importer";
}

// ---- full file systems ---------------------------------------------------------------------------------

// /tmp full (no inode left) and no XDG_RUNTIME_DIR: the listener's private directory cannot be made. Sharing
// memory fails naming the directory and the cause, and the GPU memory it had allocated is freed; a world of two
// processes fails on both ranks, at once, naming it or the rank that failed.
TEST(FailureInjection, AFullTmpForTheSocketsIsNamed) {
  PEERLINK_REQUIRE_GPU();
  if (!probe().mountSkip.empty()) GTEST_SKIP() << probe().mountSkip;
  const int gpus = probe().gpus;
  Child sharer("exporter", [&] {
    const std::string mounted = mountFullTmpfs("/tmp");
    if (!mounted.empty()) return fail("exporter", mounted);
    ::unsetenv("XDG_RUNTIME_DIR");
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    PEERLINK_CUDA_CHECK(cudaFree(nullptr));
    const ResourceUsage before = measureUsage({0});
    const int named = expectErrorWithin("exporter", kDeadline, {"/tmp/peerlink-", "no room"},
                                        [&] { ExportableBuffer(0, 64 * kMiB, ShareKind::Ipc); });
    if (named != kOk) return named;
    const std::string growth = usageGrowth(before, measureUsage({0}), kMiB);
    return growth.empty() ? kOk : fail("exporter", "kept: " + growth);
  });
  EXPECT_EQ(waitAll({&sharer}, 60s)[0], kOk);

  constexpr int n = 2;
  IdChannel ids(n);
  const auto children = forkRanks(n, [&](int rank) {
    const std::string role = "rank " + std::to_string(rank);
    const std::string mounted = mountFullTmpfs("/tmp");
    if (!mounted.empty()) return fail(role, mounted);
    ::unsetenv("XDG_RUNTIME_DIR");
    const Params params = worldParams(n, gpus, {{"PEERLINK_BOOTSTRAP_TIMEOUT_MS", "10000"}});
    const std::optional<UniqueId> id = ids.next(rank);
    // Its own directory, or the other rank that gave up because of its own.
    const auto start = RoleClock::now();
    try {
      Communicator comm(*id, n, rank, deviceOfRank(rank, gpus), params);
    } catch (const Error& error) {
      const std::string text = error.what();
      std::printf("[%s] after %.2f s: %s\n", role.c_str(), secondsSince(start), error.what());
      if (secondsSince(start) > 20) return fail(role, "later than twice the bootstrap deadline");
      return text.find("no room") != std::string::npos ||
                     text.find("rank " + std::to_string(1 - rank)) != std::string::npos
                 ? kOk
                 : fail(role, "the error names neither the full directory nor the other rank");
    }
    return fail(role, "the communicator was made without its sockets");
  });
  const std::vector<int> codes = waitAll(pointersTo(children), 60s);
  EXPECT_EQ(codes[0], kOk) << "rank 0";
  EXPECT_EQ(codes[1], kOk) << "rank 1";
}

// A full /dev/shm: the calls' exchange falls back to the bootstraps' sockets, and every result stays right (the
// ring kernels keep nothing there).
TEST(FailureInjection, AFullDevShmDoesNotMatter) {
  PEERLINK_REQUIRE_GPU();
  if (!probe().mountSkip.empty()) GTEST_SKIP() << probe().mountSkip;
  const int gpus = probe().gpus;
  constexpr int n = 2;
  IdChannel ids(n);
  const auto children = forkRanks(n, [&](int rank) {
    const std::string mounted = mountFullTmpfs("/dev/shm");
    if (!mounted.empty()) return fail("rank", mounted);
    Communicator comm(*ids.next(rank), n, rank, deviceOfRank(rank, gpus), worldParams(n, gpus));
    CollCase c;
    c.count = std::size_t{3} << 20;  // past the LL lines: the arena ring
    const std::string problem = runCase(comm, c);
    return problem.empty() ? kOk : fail("rank " + std::to_string(rank), problem);
  });
  const std::vector<int> codes = waitAll(pointersTo(children), 60s);
  EXPECT_EQ(codes[0], kOk) << "rank 0";
  EXPECT_EQ(codes[1], kOk) << "rank 1";
}

// ---- too few file descriptors ----------------------------------------------------------------------------

// RLIMIT_NOFILE set to what this process holds (measureUsage counted its own listing too) plus `extra`.
void limitDescriptors(long extra) {
  const ResourceUsage now = measureUsage({});
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = static_cast<rlim_t>(now.fds - 1 + extra);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

bool namesDescriptors(const std::string& text) {
  return text.find("Too many open files") != std::string::npos || text.find("file descriptor") != std::string::npos ||
         text.find("open-file limit") != std::string::npos || text.find("descriptors") != std::string::npos;
}

// A communicator of every GPU made under an open-file limit a few descriptors above what the process holds:
// it is made, or it fails with an Error that names the shortage (never a crash, a hang or another cause); with
// the limit raised again, the same process makes one.
TEST(FailureInjection, TooFewDescriptorsForACommunicatorAreNamed) {
  PEERLINK_REQUIRE_GPU();
  std::vector<Child*> raw;
  std::vector<std::unique_ptr<Child>> children;
  for (const long extra : {4L, 16L, 64L}) {
    children.push_back(std::make_unique<Child>("limit +" + std::to_string(extra), [extra] {
      std::vector<int> devices;
      if (probe().gpus > 1) communicatorUnavailable(&devices);
      if (devices.empty()) devices = {0};
      // CUDA started first: what runs short is what peerlink itself opens (NVML, sysfs, sockets, threads).
      for (const int device : devices) {
        PEERLINK_CUDA_CHECK(cudaSetDevice(device));
        PEERLINK_CUDA_CHECK(cudaFree(nullptr));
      }
      rlimit original{};
      ::getrlimit(RLIMIT_NOFILE, &original);
      limitDescriptors(extra);
      const std::string role = "limit +" + std::to_string(extra);
      try {
        Communicator comm(devices, paramsWith({}));
        std::printf("[%s] made\n", role.c_str());
      } catch (const Error& error) {
        std::printf("[%s] %s: %s\n", role.c_str(), errorCodeName(error.code()), error.what());
        if (!namesDescriptors(error.what())) return fail(role, "the error does not name the descriptors");
      }
      ::setrlimit(RLIMIT_NOFILE, &original);
      Communicator comm(devices, paramsWith({}));
      CollCase c;
      c.count = 1000;
      const std::string problem = runCase(comm, c);
      return problem.empty() ? kOk : fail(role, "with the limit raised again: " + problem);
    }));
    raw.push_back(children.back().get());
  }
  const std::vector<int> codes = waitAll(raw, 100s);
  for (std::size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], kOk) << raw[i]->role();
}

// An importer with no descriptor left for the socket or the passed memory handle: its error names the shortage,
// the exporter's names the importer, and neither keeps anything.
TEST(FailureInjection, AnImporterOutOfDescriptorsIsNamedOnBothSides) {
  PEERLINK_REQUIRE_GPU();
  if (!probe().cumemSkip.empty()) GTEST_SKIP() << probe().cumemSkip;
  const int importerGpu = probe().gpus > 1 ? 1 : 0;
  Pipe toImporter;
  Child exporter("exporter", [&] {
    PEERLINK_CUDA_CHECK(cudaSetDevice(0));
    ExportableBuffer buffer(0, 4 * kMiB, ShareKind::Cumem);
    toImporter.send(buffer.socketPath());
    return expectErrorWithin("exporter", 2 * kDeadline, {"importer pid"}, [&] { buffer.serveOne(kDeadline); });
  });
  Child importer("importer", [&] {
    const std::string path = toImporter.receive();
    PEERLINK_CUDA_CHECK(cudaSetDevice(importerGpu));
    PEERLINK_CUDA_CHECK(cudaFree(nullptr));
    limitDescriptors(1);  // the socket fits, the passed descriptor does not
    const ResourceUsage before = measureUsage({importerGpu});
    const auto start = RoleClock::now();
    try {
      ImportedBuffer imported(path, importerGpu, kDeadline);
      return fail("importer", "imported without a descriptor to spare");
    } catch (const Error& error) {
      std::printf("[importer] after %.2f s, %s: %s\n", secondsSince(start), errorCodeName(error.code()), error.what());
      if (!namesDescriptors(error.what())) return fail("importer", "the error does not name the descriptors");
    }
    const std::string growth = usageGrowth(before, measureUsage({importerGpu}), kMiB);
    return growth.empty() ? kOk : fail("importer", "kept: " + growth);
  });
  const std::vector<int> codes = waitAll({&exporter, &importer}, 60s);
  EXPECT_EQ(codes[0], kOk) << "exporter";
  EXPECT_EQ(codes[1], kOk) << "importer";
}

// The doctor under a tight open-file limit: what it cannot read, it says it could not read, with the limit as
// the cause; no finding about the hardware appears that the same doctor without the limit does not make.
TEST(FailureInjection, TheDoctorShortOfDescriptorsBlamesNoHardware) {
  if (probe().gpus < 2) GTEST_SKIP() << (probe().gpus == 0 ? probe().skip : "needs 2 GPUs");
  const std::vector<std::string> hardware = {
      "nvlink_count_differs", "nvlink_missing_on_nvswitch", "peer_limit", "link_trained_down",
      "acs_redirect",         "iommu_translated",           "bar1_small", "mig_enabled"};
  // Each run in a process of its own: the codes of its findings, one a line, then "end".
  const auto findingsUnder = [&](std::optional<long> extra) {
    Pipe out;
    Child run("doctor", [&] {
      if (extra) limitDescriptors(*extra);
      Params params = Params::fromEnvironment();
      params.set("PEERLINK_DOCTOR_CACHE", "off");
      VerifyOptions options;
      options.probeBytes = kMiB;
      try {
        const VerifyResult result = verifyPeers({}, options, params);
        for (const Finding& finding : result.report.findings) {
          out.send(finding.code + (finding.cause.empty() ? "" : " cause " + finding.cause));
        }
      } catch (const Error& error) {
        out.send(std::string("error ") + error.what());
      }
      out.send("end");
      return kOk;
    });
    out.closeWrite();
    std::vector<std::string> lines;
    try {
      for (std::string line = out.receive(90s); line != "end"; line = out.receive(90s)) lines.push_back(line);
    } catch (const Error& error) {
      lines.push_back(std::string("no answer: ") + error.what());
    }
    waitAll({&run}, 30s);
    return lines;
  };
  const std::vector<std::string> baseline = findingsUnder(std::nullopt);
  const auto has = [](const std::vector<std::string>& lines, const std::string& code) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(code, 0) == 0; });
  };
  for (const long extra : {8L, 32L, 128L}) {
    SCOPED_TRACE("open-file limit " + std::to_string(extra) + " above what the process holds");
    const std::vector<std::string> lines = findingsUnder(extra);
    for (const std::string& line : lines) std::printf("  +%ld: %s\n", extra, line.c_str());
    ASSERT_FALSE(lines.empty());
    if (lines.front().rfind("error ", 0) == 0) {
      EXPECT_TRUE(namesDescriptors(lines.front())) << "CUDA could not start, and the error does not say why";
      continue;
    }
    EXPECT_FALSE(has(lines, "no answer")) << "the doctor did not finish";
    for (const std::string& code : hardware) {
      EXPECT_FALSE(has(lines, code) && !has(baseline, code)) << code << " appeared only under the limit";
    }
  }
}

}  // namespace
}  // namespace peerlink::testing
