// Calls on unregistered buffers across processes that share the buffers at the call (PEERLINK_COLL_SHARE_BUFFERS,
// src/coll/shared_calls.hpp): every collective on shared buffers (processes of one rank; processes of two ranks on
// two GPUs, which cannot share, through the staging windows) and, with sharing off, through the staging windows; a
// buffer that comes back is opened once; buffers freed and allocated again (at the same addresses, as an allocator
// gives them) are never confused with the ones before, past the cache's evictions, nor keep a window registered at such
// an address from opening; a rooted call whose other ranks pass NULL where NCCL lets them.
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "coll/communicator_access.hpp"
#include "communicator_processes_support.hpp"

namespace peerlink::testing {
namespace {

RankSettings sharingSetTo(const std::string& value) {
  return [value](int) {
    return std::vector<std::pair<std::string, std::string>>{{"PEERLINK_COLL_SHARE_BUFFERS", value}};
  };
}

// everyCollective, then a check that its calls were shared to the end: sharing still on, the latest calls' windows
// open (a process that could not open the others' buffers turns sharing off on every rank and stages, right but
// not shared).
int everyCollectiveShared(Communicator& comm, int rank) {
  const int result = everyCollective(comm, rank);
  if (result != kOk) return result;
  if (!coll::CommunicatorAccess::sharesAtCall(comm)) {
    return fail(rank, "sharing ended on the way (see the WARN above)");
  }
  if (coll::CommunicatorAccess::openWindowMappings(comm) == 0) {
    return fail(rank, "no other process's buffer is open: the calls were not shared");
  }
  return kOk;
}

// everyCollective in a world that cannot share at the call (a process with ranks on two GPUs): right, through the
// staging windows.
int everyCollectiveStaged(Communicator& comm, int rank) {
  if (coll::CommunicatorAccess::sharesAtCall(comm)) return fail(rank, "a process of two GPUs shares at the call");
  return everyCollective(comm, rank);
}

TEST(CallSharing, EveryCollectiveOnSharedBuffersAndThroughTheWindowsWithSharingOff) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 3}) {
    SCOPED_TRACE(std::to_string(n) + " processes, every staged call shared");
    expectWorldOk(runWorld(n, everyCollectiveShared, sharingSetTo("ON")));
  }
  SCOPED_TRACE("2 processes, sharing off");
  expectWorldOk(runWorld(2, everyCollective, sharingSetTo("OFF")));
}

// Processes of two ranks each (as `mpirun -np 2` with two GPUs a process): legacy IPC opens another process's
// allocation for one GPU of a process only, so such a world stages its calls, ON or not.
TEST(CallSharing, EveryCollectiveWhenAProcessDrivesTwoRanks) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  SCOPED_TRACE(sharing(4) ? "4 ranks sharing the GPUs" : "a GPU per rank");
  expectWorldOk(runProcesses(2, 2, everyCollectiveStaged, sharingSetTo("ON")));
}

// Rank r's element i of call k: small integers, so float sums are exact.
float elementOf(int rank, int call, std::size_t i) {
  return static_cast<float>((rank + 1) * 3 + call % 5 + static_cast<int>(i % 11));
}

// An in-place all-reduce of `count` floats in `buffer`, checked: "" or what went wrong.
std::string allReduceChecked(Communicator& comm, int rank, float* buffer, std::size_t count, int call,
                             cudaStream_t stream) {
  const int n = comm.size();
  std::vector<float> mine(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = elementOf(rank, call, i);
  copyToDevice(buffer, mine.data(), count * sizeof(float));
  comm.allReduce(rank, buffer, buffer, count, DataType::F32, ReduceOp::Sum, stream);
  if (!finishes(stream, kStreamSeconds)) return "call " + std::to_string(call) + " did not finish";
  comm.checkHealth();
  std::vector<float> got(count);
  PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), buffer, count * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < count; ++i) {
    float expected = 0;
    for (int r = 0; r < n; ++r) expected += elementOf(r, call, i);
    if (got[i] != expected) {
      return "call " + std::to_string(call) + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
             ", not " + std::to_string(expected);
    }
  }
  return "";
}

// `buffer` (`count` floats) registered as a window, `calls` checked all-reduces on it (calls firstCall, ...), the
// window deregistered: "" or what went wrong.
std::string callsOnARegisteredWindow(Communicator& comm, int rank, void* buffer, std::size_t count, int firstCall,
                                     int calls, cudaStream_t stream) {
  const int window = comm.registerWindow({buffer}, {count * sizeof(float)});
  for (int call = firstCall; call < firstCall + calls; ++call) {
    const std::string problem = allReduceChecked(comm, rank, static_cast<float*>(buffer), count, call, stream);
    if (!problem.empty()) return "on a registered window: " + problem;
  }
  comm.deregisterWindow(window);
  return "";
}

int buffersComeBackAndFreedOnesAreNotConfused(Communicator& comm, int rank) {
  const auto open = [&comm] { return coll::CommunicatorAccess::openWindowMappings(comm); };
  Stream stream(comm.device(rank));
  const std::size_t count = std::size_t{17} << 20;  // 68 MiB a rank
  {
    DeviceBuffer kept(comm.device(rank), count * sizeof(float));
    std::size_t afterFirst = 0;
    for (int call = 0; call < 5; ++call) {
      const std::string problem =
          allReduceChecked(comm, rank, static_cast<float*>(kept.data()), count, call, stream.get());
      if (!problem.empty()) return fail(rank, "a buffer that comes back: " + problem);
      if (call == 0) afterFirst = open();
      if (open() != afterFirst) return fail(rank, "the same buffer opened again on call " + std::to_string(call));
    }
    if (afterFirst != static_cast<std::size_t>(comm.size() - 1)) {
      return fail(rank, std::to_string(afterFirst) + " mappings open for one buffer of each other rank");
    }
  }
  // Buffers freed and allocated again, more of them than the cache keeps: each call's peers must reach this call's
  // buffer, not a mapping of the one freed before at the same address.
  for (int call = 0; call < 3 * static_cast<int>(coll::kSharedCallsKept); ++call) {
    const std::size_t elements = count - static_cast<std::size_t>(call % 3) * 4096;
    DeviceBuffer buffer(comm.device(rank), elements * sizeof(float));
    const std::string problem =
        allReduceChecked(comm, rank, static_cast<float*>(buffer.data()), elements, 100 + call, stream.get());
    if (!problem.empty()) return fail(rank, "buffers allocated again: " + problem);
  }
  const std::size_t bound = coll::kSharedCallsKept * static_cast<std::size_t>(comm.size() - 1);
  if (open() > bound)
    return fail(rank, std::to_string(open()) + " mappings open, above the cache's " + std::to_string(bound));
  return kOk;
}

TEST(CallSharing, ABufferThatComesBackIsOpenedOnceAndFreedOnesAreNotConfused) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  // ON: under AUTO a call whose ranks come apart goes through the staging windows, and this counts mappings.
  expectWorldOk(runWorld(2, buffersComeBackAndFreedOnesAreNotConfused, sharingSetTo("ON")));
}

// Buffers registered (registerWindow) inside the range of a freed allocation a shared call's cached window still
// maps: the windows' calls reach the new allocations. (Where an open fails while cached calls map other allocations,
// cudaErrorAlreadyMapped as shared calls meet in everyCollective, registration lets every rank's cached calls go and
// opens again; on driver 580.159 this layout opened at once, with and without that retry.)
int windowsWhereASharedCallMappedAFreedBuffer(Communicator& comm, int rank) {
  Stream stream(comm.device(rank));
  const std::size_t count = std::size_t{8} << 20;  // 32 MiB a window; the shared buffer twice that
  int exercised = 0;
  for (int round = 0; round < 3; ++round) {
    std::uintptr_t freedStart = 0;
    {
      DeviceBuffer shared(comm.device(rank), 2 * count * sizeof(float));
      freedStart = reinterpret_cast<std::uintptr_t>(shared.data());
      const std::string problem =
          allReduceChecked(comm, rank, static_cast<float*>(shared.data()), 2 * count, 10 * round, stream.get());
      if (!problem.empty()) return fail(rank, "the shared call: " + problem);
      if (coll::CommunicatorAccess::openWindowMappings(comm) == 0) return fail(rank, "the call was not shared");
    }
    // Two buffers where the one freed lay (as an allocator gives them): the second starts inside its range.
    DeviceBuffer first(comm.device(rank), count * sizeof(float));
    DeviceBuffer second(comm.device(rank), count * sizeof(float));
    for (DeviceBuffer* buffer : {&first, &second}) {
      const auto at = reinterpret_cast<std::uintptr_t>(buffer->data());
      if (at > freedStart && at < freedStart + 2 * count * sizeof(float)) ++exercised;
      const std::string problem =
          callsOnARegisteredWindow(comm, rank, buffer->data(), count, 10 * round + 1, 2, stream.get());
      if (!problem.empty()) return fail(rank, problem);
    }
  }
  if (exercised == 0) {
    return fail(rank, "no buffer began inside a freed one's range: the case is not exercised");
  }
  if (!coll::CommunicatorAccess::sharesAtCall(comm)) return fail(rank, "sharing ended on the way (see the WARN above)");
  return kOk;
}

TEST(CallSharing, WindowsRegisteredWhereASharedCallMappedAFreedBuffer) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(2, windowsWhereASharedCallMappedAFreedBuffer, sharingSetTo("ON")));
}

// A buffer registered beside a live buffer a cached shared call maps, within its 2 MiB page (the driver places small
// allocations together): registration opens it, the calls on its window are right.
int aWindowBesideACachedCallsBuffer(Communicator& comm, int rank) {
  Stream stream(comm.device(rank));
  const std::size_t sharedCount = (std::size_t{3} << 20) / 2 / sizeof(float);  // 1.5 MiB: past LL128, so shared
  const std::size_t windowCount = (std::size_t{1} << 18) / sizeof(float);      // 256 KiB
  std::vector<DeviceBuffer> kept;
  int exercised = 0;
  for (int round = 0; round < 4; ++round) {
    kept.emplace_back(comm.device(rank), sharedCount * sizeof(float));
    const std::string problem =
        allReduceChecked(comm, rank, static_cast<float*>(kept.back().data()), sharedCount, 20 + round, stream.get());
    if (!problem.empty()) return fail(rank, "the shared call: " + problem);
    DeviceBuffer beside(comm.device(rank), windowCount * sizeof(float));
    const auto page = reinterpret_cast<std::uintptr_t>(kept.back().data()) / (std::size_t{2} << 20);
    if (reinterpret_cast<std::uintptr_t>(beside.data()) / (std::size_t{2} << 20) == page) ++exercised;
    const std::string onWindow =
        callsOnARegisteredWindow(comm, rank, beside.data(), windowCount, 30 + round, 1, stream.get());
    if (!onWindow.empty()) return fail(rank, onWindow);
  }
  if (exercised == 0) return fail(rank, "no buffer landed in a shared one's page: the case is not exercised");
  if (!coll::CommunicatorAccess::sharesAtCall(comm)) return fail(rank, "sharing ended on the way (see the WARN above)");
  return kOk;
}

TEST(CallSharing, AWindowRegisteredBesideACachedCallsBuffer) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runWorld(2, aWindowBesideACachedCallsBuffer, sharingSetTo("ON")));
}

// A broadcast whose other ranks pass NULL as input, and a reduce whose other ranks pass NULL as output (NCCL's
// contract): shared, right on every rank.
int rootedCallsWithNullElsewhere(Communicator& comm, int rank) {
  const int n = comm.size();
  const int root = n - 1;
  const std::size_t count = std::size_t{17} << 20;
  Stream stream(comm.device(rank));
  DeviceBuffer send(comm.device(rank), count * sizeof(float));
  DeviceBuffer recv(comm.device(rank), count * sizeof(float));
  std::vector<float> mine(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = elementOf(rank, 7, i);
  copyToDevice(send.data(), mine.data(), count * sizeof(float));
  comm.broadcast(rank, rank == root ? send.data() : nullptr, recv.data(), count, DataType::F32, root, stream.get());
  if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "the broadcast did not finish");
  std::vector<float> got(count);
  PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recv.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < count; ++i) {
    if (got[i] != elementOf(root, 7, i)) return fail(rank, "broadcast: element " + std::to_string(i) + " wrong");
  }
  comm.reduce(rank, send.data(), rank == root ? recv.data() : nullptr, count, DataType::F32, ReduceOp::Sum, root,
              stream.get());
  if (!finishes(stream.get(), kStreamSeconds)) return fail(rank, "the reduce did not finish");
  comm.checkHealth();
  if (coll::CommunicatorAccess::openWindowMappings(comm) == 0) return fail(rank, "the calls were not shared");
  if (rank != root) return kOk;
  PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), recv.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < count; ++i) {
    float expected = 0;
    for (int r = 0; r < n; ++r) expected += elementOf(r, 7, i);
    if (got[i] != expected) return fail(rank, "reduce: element " + std::to_string(i) + " wrong");
  }
  return kOk;
}

TEST(CallSharing, RootedCallsWhoseOtherRanksPassNull) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  for (const int n : {2, 3}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    expectWorldOk(runWorld(n, rootedCallsWithNullElsewhere, sharingSetTo("ON")));
  }
}

}  // namespace
}  // namespace peerlink::testing
