// IPC and CUMEM sharing between real processes: an exporter on GPU 0, an importer on GPU 1.
//
// Fork safety: a child of a process that has initialized CUDA cannot use CUDA, and gtest runs all tests of
// this binary in one process. So this process never touches CUDA — not even PEERLINK_REQUIRE_GPUS, which
// calls cudaGetDeviceCount: a probe child counts the GPUs, and each test forks its roles as children that
// initialize CUDA themselves, waits for them (bounded; the rest are killed when one fails), and reads their
// exit codes. Roles talk through pipes made before the fork ("<socket path>", "written", "verified", "closed").
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/file_descriptor.hpp"
#include "core/unix_socket.hpp"
#include "forked_roles.hpp"
#include "gpu_test_support.hpp"
#include "kernels/pattern_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "peerlink/shared_memory.hpp"
#include "transport/pattern_check.hpp"
#include "transport/share_protocol.hpp"

namespace peerlink {

// Names the kind in test listings; argument-dependent lookup needs it outside the anonymous namespace.
void PrintTo(ShareKind kind, std::ostream* out) {
  *out << shareKindName(kind);
}

namespace {

using namespace std::chrono_literals;
using namespace testing;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::uint64_t kExporterSeed = 0x5eed0001;
constexpr std::uint64_t kImporterSeed = 0x5eed0002;
constexpr milliseconds kShareTimeout = 30s;  // covers the other process's CUDA start-up
// ---- fork-safe GPU check --------------------------------------------------------------------------

// What a probe child found, so that this process stays free of CUDA.
struct GpuProbe {
  int count = 0;
  std::string ipcSkip, cumemSkip;  // empty when the kind can be tested
};
const GpuProbe& probe() {
  static const GpuProbe result = [] {
    Pipe pipe;
    Child child("gpu probe", [&] {
      std::string why;
      const int count = testing::cudaDevices(&why);
      int canAccess = 0;
      if (count == 1) why = "needs 2 GPUs, found 1";
      if (count >= 2 && (cudaDeviceCanAccessPeer(&canAccess, 1, 0) != cudaSuccess || canAccess == 0)) {
        why = "GPU 1 cannot access GPU 0 (cudaDeviceCanAccessPeer)";
      }
      const bool fd =
          why.empty() && driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0) != 0;
      pipe.send(std::to_string(count));
      pipe.send(why);
      pipe.send(why.empty() && !fd ? "GPU 0 cannot export POSIX-fd cuMem handles" : why);
      return kOk;
    });
    pipe.closeWrite();
    GpuProbe found;
    try {
      found.count = std::stoi(pipe.receive(kChildLimit));
      found.ipcSkip = pipe.receive();
      found.cumemSkip = pipe.receive();
    } catch (const std::exception& error) {
      found.ipcSkip = found.cumemSkip = std::string("the GPU probe process failed: ") + error.what();
    }
    waitAll({&child}, 10s);
    return found;
  }();
  return result;
}

int wrong(const std::string& role, const std::string& what) {
  std::fprintf(stderr, "[%s] %s\n", role.c_str(), what.c_str());
  return kWrong;
}

void printTimings(const std::string& role, const ShareTimings& t) {
  std::printf("[%s] setup ms: export %.3f, handshake %.3f, import %.3f, map %.3f\n", role.c_str(), t.exportMs,
              t.handshakeMs, t.importMs, t.mapMs);
}

bool checkOk(const std::string& role, const CheckResult& result, const char* what) {
  if (!result.ok()) {
    wrong(role, std::string(what) + ": " + std::to_string(result.mismatches) + " wrong bytes, first at " +
                    std::to_string(result.firstMismatch));
  }
  return result.ok();
}

// Exporter on GPU 0: fills the buffer with its pattern (the rounding tail with poison); when `toDying`
// is given, first serves an importer that vanishes mid-handshake and expects a prompt failure; then
// serves the real importer, and checks its write (and the untouched tail) on GPU 0.
int exporterRole(ShareKind kind, std::size_t bytes, Pipe& toImporter, Pipe& toExporter, Pipe* toDying = nullptr) {
  const std::string role = std::string("exporter ") + shareKindName(kind);
  PEERLINK_CUDA_CHECK(cudaSetDevice(0));
  ExportableBuffer buffer(0, bytes, kind);
  if (buffer.size() != bytes || buffer.allocatedSize() < bytes || buffer.device() != 0 || buffer.kind() != kind) {
    return wrong(role, "buffer accessors disagree with the request");
  }
  Stream stream(0);
  PatternChecker checker(0);
  char* tail = static_cast<char*>(buffer.data()) + bytes;
  const std::size_t tailBytes = buffer.allocatedSize() - bytes;
  kernels::launchFillPattern(buffer.data(), bytes, kExporterSeed, stream.get());
  PEERLINK_CUDA_CHECK_LAUNCH();
  if (tailBytes > 0) kernels::launchFillByte(tail, tailBytes, kPoisonByte, stream.get());
  PEERLINK_CUDA_CHECK_LAUNCH();
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  if (toDying != nullptr) {
    constexpr milliseconds kTimeout = 10s;
    toDying->send(buffer.socketPath());
    const auto start = Clock::now();
    try {
      buffer.serveOne(kTimeout);
      return wrong(role, "serveOne succeeded with an importer that died");
    } catch (const Error& error) {
      const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
      std::printf("[%s] after %lld ms: %s\n", role.c_str(), static_cast<long long>(elapsed.count()), error.what());
      if (error.code() != ErrorCode::RemoteError && error.code() != ErrorCode::Timeout) throw;
      if (elapsed > kTimeout + 2s) return wrong(role, "the failure came after the timeout");
    }
    if (!checkOk(role, checker.checkPattern(buffer.data(), bytes, kExporterSeed, stream.get()), "kept")) return kWrong;
  }

  toImporter.send(buffer.socketPath());
  printTimings(role + " " + std::to_string(bytes) + " B", buffer.serveOne(kShareTimeout));
  toExporter.expect("written");
  if (!checkOk(role, checker.checkPattern(buffer.data(), bytes, kImporterSeed, stream.get()), "importer's write") ||
      (tailBytes > 0 && !checkOk(role, checker.checkByte(tail, tailBytes, kPoisonByte, stream.get()), "tail"))) {
    return kWrong;
  }
  toImporter.send("verified");
  toExporter.expect("closed");
  return kOk;
}

// Importer on `local`: reads the exporter's pattern through the mapping (kernel) and by copy engine into
// its own memory, writes its own pattern through the mapping (kernel), then unmaps when told.
int importerRole(ShareKind kind, std::size_t bytes, int local, int expectedOwner, Pipe& toImporter, Pipe& toExporter) {
  const std::string role = std::string("importer ") + shareKindName(kind);
  const std::string path = toImporter.receive();
  PEERLINK_CUDA_CHECK(cudaSetDevice(local));
  std::optional<ImportedBuffer> imported(std::in_place, path, local, kShareTimeout);
  if (imported->size() != bytes || imported->kind() != kind || imported->data() == nullptr ||
      imported->localDevice() != local || imported->ownerDevice() != expectedOwner) {
    return wrong(role, "wrong size, kind, devices or pointer; owner " + std::to_string(imported->ownerDevice()));
  }
  printTimings(role + " " + std::to_string(bytes) + " B", imported->timings());
  Stream stream(local);
  PatternChecker checker(local);
  DeviceBuffer copy(local, bytes);
  PEERLINK_CUDA_CHECK(cudaMemcpyAsync(copy.data(), imported->data(), bytes, cudaMemcpyDefault, stream.get()));
  if (!checkOk(role, checker.checkPattern(imported->data(), bytes, kExporterSeed, stream.get()), "kernel read") ||
      !checkOk(role, checker.checkPattern(copy.data(), bytes, kExporterSeed, stream.get()), "copy-engine read")) {
    return kWrong;
  }
  kernels::launchFillPattern(imported->data(), bytes, kImporterSeed, stream.get());
  PEERLINK_CUDA_CHECK_LAUNCH();
  PEERLINK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  toExporter.send("written");
  toImporter.expect("verified");
  imported.reset();
  toExporter.send("closed");
  return kOk;
}

std::size_t freeBytes(int device) {
  DeviceGuard guard(device);
  std::size_t free = 0, total = 0;
  PEERLINK_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

// Entries of `directory` whose names start with `prefix`.
int countEntries(const std::string& directory, const std::string& prefix = "") {
  int count = 0;
  if (DIR* dir = ::opendir(directory.c_str())) {
    while (const dirent* entry = ::readdir(dir)) count += std::string(entry->d_name).rfind(prefix, 0) == 0;
    ::closedir(dir);
  }
  return count;
}
int openFds() {
  return countEntries("/proc/self/fd");
}

bool mentions(const Error& error, const std::string& needle) {
  return std::string(error.what()).find(needle) != std::string::npos;
}

// CUDA_VISIBLE_DEVICES that hides our GPU 0: the current list without its first entry, or "1,...,count-1".
std::string visibleWithoutFirst(int count) {
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::string list = visible;
    return list.find(',') == std::string::npos ? "" : list.substr(list.find(',') + 1);
  }
  std::string result;
  for (int i = 1; i < count; ++i) result += (i > 1 ? "," : "") + std::to_string(i);
  return result;
}

class SharedMemoryTest : public ::testing::TestWithParam<ShareKind> {
 protected:
  void SetUp() override {
    const std::string& why = GetParam() == ShareKind::Ipc ? probe().ipcSkip : probe().cumemSkip;
    if (!why.empty()) GTEST_SKIP() << why;
  }
  void readAndWrite(std::size_t bytes) {
    Pipe toImporter, toExporter;
    Child exporter("exporter", [&] { return exporterRole(GetParam(), bytes, toImporter, toExporter); });
    Child importer("importer", [&] { return importerRole(GetParam(), bytes, 1, 0, toImporter, toExporter); });
    expectAllOk({&exporter, &importer});
  }
};

TEST_P(SharedMemoryTest, ReadAndWriteAcrossProcesses) {
  readAndWrite(64 * kMiB);
}

TEST_P(SharedMemoryTest, OddSizeReadAndWrite) {
  readAndWrite(kMiB + 13);
}

// CUDA documents that IPC can map memory of a GPU the process does not see (NCCL relies on it since CUDA
// 10.1); peerlink tries, and only a refusal becomes Unsupported. Either outcome must be clean: the data
// verified both ways, or the clear error at the importer and the same text at the exporter.
TEST_P(SharedMemoryTest, HiddenOwnerGpuIsMappedOrRefusedClearly) {
  const std::size_t bytes = 4 * kMiB + 1;
  const std::string visible = visibleWithoutFirst(probe().count);
  ASSERT_FALSE(visible.empty());
  const std::string refusal = "is not visible in this process";
  Pipe toImporter, toExporter;
  Child exporter("exporter", [&] {
    try {
      return exporterRole(GetParam(), bytes, toImporter, toExporter);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::RemoteError || !mentions(error, refusal)) throw;
      std::printf("[exporter] received the importer's refusal: %s\n", error.what());
      return kRefused;
    }
  });
  Child importer("importer", [&] {
    ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);  // before this process's first CUDA call
    try {
      return importerRole(GetParam(), bytes, 0, -1, toImporter, toExporter);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::Unsupported || !mentions(error, refusal) ||
          !mentions(error, "CUDA_VISIBLE_DEVICES=" + visible)) {
        throw;
      }
      return kRefused;
    }
  });
  const std::vector<int> codes = waitAll({&exporter, &importer});
  EXPECT_TRUE(codes[0] == kOk || codes[0] == kRefused) << "exporter exit code " << codes[0];
  EXPECT_EQ(codes[1], codes[0]) << "the importer's outcome differs from the exporter's";
  std::printf("hidden owner GPU, %s: %s\n", shareKindName(GetParam()),
              codes[0] == kOk ? "MAPPED and verified both ways" : "REFUSED with the clear error");
}

TEST_P(SharedMemoryTest, ImporterThatDiesMidHandshakeFailsTheExporterInTime) {
  Pipe toDying, toImporter, toExporter;
  Child exporter("exporter", [&] { return exporterRole(GetParam(), 8 * kMiB, toImporter, toExporter, &toDying); });
  Child dying("dying importer", [&] {  // no CUDA: connects, then vanishes
    UnixConnection connection = connectUnix(toDying.receive(), kShareTimeout);
    ::_exit(kOk);
    return kOk;
  });
  Child importer("importer", [&] { return importerRole(GetParam(), 8 * kMiB, 1, 0, toImporter, toExporter); });
  expectAllOk({&exporter, &dying, &importer});
}

// A fake exporter (no CUDA) offers handles no driver knows (a zero IPC handle, a memfd for CUMEM): each
// import fails, tells the exporter why, and keeps no descriptor. (A vanishing exporter: test_share_protocol.)
TEST_P(SharedMemoryTest, ImporterFailsCleanlyOnBogusHandles) {
  constexpr int kRounds = 4;
  Pipe toImporter;
  Child exporter("fake exporter", [&] {
    UnixListener listener("peerlink-fake-exporter-" + std::to_string(::getpid()) + ".sock");
    toImporter.send(listener.path());
    auto bogus = [&] {
      ExportedHandle handle;
      handle.offer.kind = GetParam();
      handle.offer.size = handle.offer.allocatedSize = 2 * kMiB;
      handle.offer.ownerBusId = "0000:00:06.0";
      if (GetParam() == ShareKind::Cumem) handle.fd.reset(::memfd_create("not-gpu-memory", MFD_CLOEXEC));
      return handle;
    };
    for (int round = 0; round < kRounds; ++round) {
      try {
        serveShareOnce(listener, bogus, kShareTimeout);
        return wrong("fake exporter", "the importer accepted a bogus handle");
      } catch (const Error& error) {
        if (error.code() != ErrorCode::RemoteError) throw;
        std::printf("[fake exporter] %s\n", error.what());
      }
    }
    return kOk;
  });
  Child importer("importer", [&] {
    const std::string path = toImporter.receive();
    int fds = 0;
    for (int round = 0; round < kRounds; ++round) {
      if (round == 1) fds = openFds();  // after the driver opened what it keeps open
      try {
        ImportedBuffer imported(path, 1, kShareTimeout);
        return wrong("importer", "imported a bogus handle");
      } catch (const Error& error) {
        std::printf("[importer] %s\n", error.what());
        if (error.code() != ErrorCode::CudaError && error.code() != ErrorCode::Unsupported) throw;
      }
    }
    return openFds() != fds ? wrong("importer", "failed imports leaked descriptors") : kOk;
  });
  expectAllOk({&exporter, &importer});
}

// Full exchanges, one after another: GPU memory, descriptors and socket files must not drift.
TEST_P(SharedMemoryTest, RepeatedCyclesDoNotLeak) {
  constexpr std::size_t kBytes = 64 * kMiB;
  constexpr int kWarmup = 2;
  constexpr int kCycles = 20;
  constexpr std::size_t kSlack = kBytes / 4;  // one buffer leaked per cycle would be 80 times more
  Pipe toImporter, toExporter;
  auto repeat = [&](const std::string& role, int device, auto cycle) {
    std::size_t before = 0;
    int fds = 0;
    for (int i = 0; i < kWarmup + kCycles; ++i) {
      if (i == kWarmup) {  // contexts and peer mappings exist by now
        before = freeBytes(device);
        fds = openFds();
      }
      if (cycle() != kOk) return kWrong;
    }
    const std::size_t after = freeBytes(device);
    std::printf("[%s] GPU %d free: %zu MiB before, %zu MiB after %d cycles; descriptors %d, then %d\n", role.c_str(),
                device, before / kMiB, after / kMiB, kCycles, fds, openFds());
    if (openFds() != fds) return wrong(role, "descriptors leaked");
    if (countEntries(defaultSocketDirectory(), "peerlink-share-" + std::to_string(::getpid()) + "-") != 0) {
      return wrong(role, "socket files left behind");
    }
    return before > after + kSlack ? wrong(role, "GPU memory leaked") : kOk;
  };
  Child exporter("exporter", [&] {
    return repeat("exporter", 0, [&] { return exporterRole(GetParam(), kBytes, toImporter, toExporter); });
  });
  Child importer("importer", [&] {
    return repeat("importer", 1, [&] { return importerRole(GetParam(), kBytes, 1, 0, toImporter, toExporter); });
  });
  expectAllOk({&exporter, &importer});
}

INSTANTIATE_TEST_SUITE_P(Kinds, SharedMemoryTest, ::testing::Values(ShareKind::Ipc, ShareKind::Cumem),
                         [](const ::testing::TestParamInfo<ShareKind>& kindInfo) {
                           return std::string(kindInfo.param == ShareKind::Ipc ? "Ipc" : "Cumem");
                         });

}  // namespace
}  // namespace peerlink
