// Registered windows in a world of processes that each drive several ranks (2 processes x 2 ranks; with one GPU all
// four share it through PEERLINK_COLL_SHARE_GPUS): every collective on buffers inside the windows, in place and out
// of place (a broadcast and a reduce also with NULL where the API ignores a buffer off the root), eager and captured
// in a CUDA graph replayed with new inputs, against the host reference; the COLL log shows each collective went on
// the registered windows (or, where the kernel chosen touches only the callers' own buffers and the peers' arenas,
// on those) and none but a reduce through the staging windows. Then the mappings:
// each other process's allocation opened once per GPU of the process (ranks sharing a GPU share it, windows in one
// allocation share it), and every one closed once no window uses it.
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "coll/communicator_access.hpp"
#include "communicator_processes_support.hpp"

namespace peerlink::testing {
namespace {

constexpr int kProcesses = 2;
constexpr int kRanksPerProcess = 2;

// Everything this process writes to stderr (fd 2) while it lives goes to a temporary file instead; text() reads it.
// The destructor puts stderr back and passes on what was written when asked to (a failure's context).
class StderrCapture {
 public:
  StderrCapture() {
    char name[] = "/tmp/peerlink_stderr_XXXXXX";
    file_ = ::mkstemp(name);
    if (file_ < 0) throw Error(ErrorCode::SystemError, "StderrCapture: mkstemp failed");
    ::unlink(name);
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(file_, STDERR_FILENO);
  }
  ~StderrCapture() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    if (echo_) std::fputs(text().c_str(), stderr);
    ::close(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() const {
    std::fflush(stderr);
    std::string out;
    char buffer[4096];
    for (off_t at = 0;;) {
      const ssize_t got = ::pread(file_, buffer, sizeof buffer, at);
      if (got <= 0) break;
      out.append(buffer, static_cast<std::size_t>(got));
      at += got;
    }
    return out;
  }
  void echoWhenDone() { echo_ = true; }

 private:
  int file_ = -1;
  int saved_ = -1;
  bool echo_ = false;
};

// How a collective of the test goes across processes: on the callers' own buffers where the kernel every rank
// chooses touches only them and the peers' arenas (a ring reduce, say: describeChoice tells), else on the registered
// windows -- a reduce as the arena ring or through the staging windows (both log "buffers not registered").
struct ExpectedPath {
  Collective collective;
  const char* phrase;  // the COLL log's words for the way
};
constexpr const char* kRegisteredWay = "on registered windows";
constexpr const char* kOwnBuffersWay = "on the callers' own buffers";
constexpr const char* kUnregisteredWay = "buffers not registered";

// "" when the COLL log shows each collective going the way `expected` says and no other call through the staging
// windows; else what it shows instead.
std::string pathsInLog(const std::string& log, const std::vector<ExpectedPath>& expected) {
  std::set<std::string> seen;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("across processes:") == std::string::npos) continue;
    bool expectedWay = false;
    for (const ExpectedPath& path : expected) {
      const std::string name = std::string(" COLL ") + collectiveName(path.collective) + " of ";
      if (line.find(name) != std::string::npos && line.find(path.phrase) != std::string::npos) {
        seen.insert(collectiveName(path.collective));
        expectedWay = true;
      }
    }
    if (!expectedWay && line.find(kUnregisteredWay) != std::string::npos) {
      return "a call went the unregistered way: " + line;
    }
  }
  for (const ExpectedPath& path : expected) {
    if (seen.count(collectiveName(path.collective)) == 0) {
      return std::string("no line of the COLL log says ") + collectiveName(path.collective) + " went " + path.phrase;
    }
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> collLog(int) {
  return {{"PEERLINK_DEBUG", "INFO"}, {"PEERLINK_DEBUG_SUBSYS", "COLL"}};
}

// Each local rank's window: one cudaMalloc allocation, the window starting 4 KiB inside it, a send region and a recv
// region after it at the same offsets on every rank.
struct RankWindows {
  static constexpr std::size_t kRegion = std::size_t{48} << 20;
  std::vector<DeviceBuffer> memory;  // by local index
  std::vector<void*> bases;
  std::vector<std::size_t> bytes;

  explicit RankWindows(const Communicator& comm) {
    for (const int r : comm.localRanks()) {
      memory.emplace_back(comm.device(r), 2 * kRegion + 4096);
      bases.push_back(static_cast<unsigned char*>(memory.back().data()) + 4096);
      bytes.push_back(2 * kRegion);
    }
  }
  unsigned char* base(std::size_t index) const { return static_cast<unsigned char*>(bases[index]); }
};

// How a call passes its buffers: apart, in place, or apart with NULL where the API ignores a buffer (a broadcast's
// send and a reduce's recv off the root).
enum class Pairing { Apart, InPlace, NullIgnored };

// The send and recv of local rank `rank` (local index `index`) for a call, as the API pairs them in place.
struct CallBuffers {
  unsigned char* send = nullptr;
  unsigned char* recv = nullptr;
};
CallBuffers buffersOf(const RankWindows& windows, std::size_t index, int rank, Collective collective, Pairing pairing,
                      std::size_t blockBytes, int root) {
  unsigned char* base = windows.base(index);
  CallBuffers buffers{base, base + RankWindows::kRegion};
  if (pairing == Pairing::NullIgnored && rank != root) {
    if (collective == Collective::Broadcast) buffers.send = nullptr;
    if (collective == Collective::Reduce) buffers.recv = nullptr;
  }
  if (pairing != Pairing::InPlace) return buffers;
  buffers.recv = base;
  if (collective == Collective::AllGather) buffers.send = base + blockBytes * static_cast<std::size_t>(rank);
  if (collective == Collective::ReduceScatter) buffers.recv = base + blockBytes * static_cast<std::size_t>(rank);
  return buffers;
}

void callCollective(Communicator& comm, Collective collective, int rank, const CallBuffers& buffers, std::size_t count,
                    int root, cudaStream_t stream) {
  const DataType type = DataType::F32;
  const ReduceOp op = ReduceOp::Sum;
  switch (collective) {
    case Collective::AllReduce: comm.allReduce(rank, buffers.send, buffers.recv, count, type, op, stream); break;
    case Collective::Broadcast: comm.broadcast(rank, buffers.send, buffers.recv, count, type, root, stream); break;
    case Collective::Reduce: comm.reduce(rank, buffers.send, buffers.recv, count, type, op, root, stream); break;
    case Collective::AllGather: comm.allGather(rank, buffers.send, buffers.recv, count, type, stream); break;
    case Collective::ReduceScatter:
      comm.reduceScatter(rank, buffers.send, buffers.recv, count, type, op, stream);
      break;
    case Collective::AllToAll: comm.allToAll(rank, buffers.send, buffers.recv, count, type, stream); break;
    case Collective::SendRecv: break;
  }
}

// Elements per rank of every call: past LL lines, so the kernels reach the peers' buffers.
std::size_t callCount(const Communicator& comm) {
  return (std::size_t{6} << 20) / static_cast<std::size_t>(comm.size()) + 3;
}

// One collective on the windows, eager (`replays` 0) or captured once into a graph over the local ranks and
// replayed `replays` times, each run with new inputs (the recv regions poisoned before it) checked on every local
// rank against the host reference. "" or the first difference.
std::string runOnWindows(Communicator& comm, const RankWindows& windows, const std::vector<Stream>& streams,
                         Collective collective, Pairing pairing, int replays, std::uint64_t seed) {
  const int n = comm.size();
  const std::vector<int> local = comm.localRanks();
  const DataType type = DataType::F32;
  const std::size_t size = dataTypeSize(type);
  const std::size_t count = callCount(comm);
  const int root = static_cast<int>(seed % static_cast<std::uint64_t>(n));
  const bool inPlace = pairing == Pairing::InPlace;
  const std::string what = std::string(collectiveName(collective)) + (inPlace ? " in place" : "") +
                           (pairing == Pairing::NullIgnored ? " with NULL off the root" : "") +
                           (replays > 0 ? " in a graph" : " eager") + " on registered windows";
  const auto callAll = [&] {
    for (std::size_t i = 0; i < local.size(); ++i) {
      callCollective(comm, collective, local[i],
                     buffersOf(windows, i, local[i], collective, pairing, count * size, root), count, root,
                     streams[static_cast<std::size_t>(local[i])].get());
    }
  };
  cudaGraphExec_t exec = replays > 0 ? captureAll(comm, streams, callAll) : nullptr;
  std::string problem;
  for (int run = 0; run < std::max(replays, 1) && problem.empty(); ++run) {
    std::vector<coll::Bytes> inputs;
    for (int r = 0; r < n; ++r) {
      const std::size_t elements = sendElementsOf(collective, n, count, r, root);
      inputs.push_back(randomElements(type, ReduceOp::Sum, elements, seed * 101 + 7 * run + r));
    }
    const auto expected = coll::hostReduceReference(collective, type, ReduceOp::Sum, n, count, root, inputs);
    for (std::size_t i = 0; i < local.size(); ++i) {
      const CallBuffers buffers = buffersOf(windows, i, local[i], collective, pairing, count * size, root);
      DeviceGuard guard(comm.device(local[i]));
      if (!inPlace && buffers.recv != nullptr)
        PEERLINK_CUDA_CHECK(cudaMemset(buffers.recv, 0xFF, RankWindows::kRegion));
      const coll::Bytes& mine = inputs[static_cast<std::size_t>(local[i])];
      if (!mine.empty() && buffers.send != nullptr) copyToDevice(buffers.send, mine.data(), mine.size());
      PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());  // the poison lands before the ranks' streams run
    }
    if (exec != nullptr) {
      PEERLINK_CUDA_CHECK(cudaGraphLaunch(exec, streams[static_cast<std::size_t>(local.front())].get()));
    } else {
      callAll();
    }
    const std::string unfinished = finishAll(comm, streams);
    if (!unfinished.empty()) problem = what + ": " + unfinished;
    for (std::size_t i = 0; i < local.size() && problem.empty(); ++i) {
      const coll::Bytes& want = expected[static_cast<std::size_t>(local[i])];
      coll::Bytes got(want.size());
      const CallBuffers buffers = buffersOf(windows, i, local[i], collective, pairing, count * size, root);
      if (!got.empty()) PEERLINK_CUDA_CHECK(cudaMemcpy(got.data(), buffers.recv, got.size(), cudaMemcpyDeviceToHost));
      if (const auto mismatch = coll::findMismatch(type, coll::tolerance(type, ReduceOp::Sum, n, 1.5), want, got)) {
        problem = what + " (run " + std::to_string(run) + "): rank " + std::to_string(local[i]) + ": " + *mismatch;
      }
    }
  }
  if (exec != nullptr) PEERLINK_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return problem;
}

// Every collective on the windows, in place and out of place, eager then in a graph; then the COLL log's paths.
int everyCollectiveOnWindows(Communicator& comm, int first) {
  const std::vector<int> local = comm.localRanks();
  if (local.size() != static_cast<std::size_t>(kRanksPerProcess) || local.front() != first) {
    return fail(first, "localRanks is not the process's ranks");
  }
  StderrCapture log;
  const RankWindows windows(comm);
  const int window = comm.registerWindow(windows.bases, windows.bytes);
  const std::vector<Stream> streams = rankStreams(comm);
  std::vector<ExpectedPath> paths;
  std::uint64_t seed = 41;
  for (const Collective collective : kEveryCollective) {
    if (collective == Collective::SendRecv) continue;
    const std::size_t bytes = callCount(comm) * dataTypeSize(DataType::F32);
    const bool ownBuffers = comm.describeChoice(collective, bytes).find(kOwnBuffersWay) != std::string::npos;
    // Every kernel of these reaches the peers' buffers at this size: without them the test would not use the windows.
    const bool reachesPeers = collective == Collective::AllReduce || collective == Collective::Broadcast ||
                              collective == Collective::AllGather || collective == Collective::AllToAll;
    if (ownBuffers && reachesPeers) {
      return fail(first, std::string(collectiveName(collective)) +
                             " would not reach the peers' buffers: " + comm.describeChoice(collective, bytes));
    }
    // A reduce's output is the root's alone: no other rank knows where it lies, so it goes the unregistered way.
    const char* way = ownBuffers                         ? kOwnBuffersWay
                      : collective == Collective::Reduce ? kUnregisteredWay
                                                         : kRegisteredWay;
    paths.push_back({collective, way});
    const bool rooted = collective == Collective::Broadcast || collective == Collective::Reduce;
    for (const Pairing pairing : {Pairing::Apart, Pairing::InPlace, Pairing::NullIgnored}) {
      if (pairing == Pairing::InPlace && collective == Collective::AllToAll) continue;
      if (pairing == Pairing::NullIgnored && !rooted) continue;
      for (const int replays : {0, 2}) {
        const std::string problem = runOnWindows(comm, windows, streams, collective, pairing, replays, ++seed);
        if (!problem.empty()) {
          log.echoWhenDone();
          return fail(first, problem);
        }
      }
    }
  }
  comm.deregisterWindow(window);
  const std::string wrongWay = pathsInLog(log.text(), paths);
  if (!wrongWay.empty()) {
    log.echoWhenDone();
    return fail(first, wrongWay);
  }
  return kOk;
}

TEST(CommunicatorWindows, TwoProcessesOfTwoRanksRunEveryCollectiveOnRegisteredWindows) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  SCOPED_TRACE(sharing(kProcesses * kRanksPerProcess) ? "ranks sharing GPUs" : "a GPU per rank");
  expectWorldOk(runProcesses(kProcesses, kRanksPerProcess, everyCollectiveOnWindows, collLog));
}

// The mappings one process holds: the other process's two allocations, once on each GPU this process drives.
std::size_t expectedMappings(const Communicator& comm) {
  std::set<int> gpus;
  for (const int r : comm.localRanks()) gpus.insert(comm.device(r));
  return static_cast<std::size_t>(kRanksPerProcess) * gpus.size();
}

// Two windows in the same allocations share their mappings; the mappings stay while one window uses them and are
// closed with the last; registering again after every rank freed and reallocated its buffers opens new ones.
int mappingsFollowTheWindows(Communicator& comm, int first) {
  const auto open = [&comm] { return coll::CommunicatorAccess::openWindowMappings(comm); };
  const std::size_t expected = expectedMappings(comm);
  for (int cycle = 0; cycle < 3; ++cycle) {
    const RankWindows windows(comm);
    std::vector<void*> sendHalves;
    std::vector<void*> recvHalves;
    std::vector<std::size_t> halves;
    for (std::size_t i = 0; i < windows.bases.size(); ++i) {
      sendHalves.push_back(windows.base(i));
      recvHalves.push_back(windows.base(i) + RankWindows::kRegion);
      halves.push_back(RankWindows::kRegion);
    }
    const int sends = comm.registerWindow(sendHalves, halves);
    if (open() != expected) {
      return fail(first,
                  "after one window: " + std::to_string(open()) + " mappings open, not " + std::to_string(expected));
    }
    const int recvs = comm.registerWindow(recvHalves, halves);
    if (open() != expected) return fail(first, "a second window in the same allocations opened them again");
    const std::vector<Stream> streams = rankStreams(comm);
    const std::string problem =
        runOnWindows(comm, windows, streams, Collective::AllReduce, Pairing::Apart, 0, 7 + cycle);
    if (!problem.empty()) return fail(first, problem);
    comm.deregisterWindow(sends);
    if (open() != expected) return fail(first, "the mappings closed while a window still uses them");
    comm.deregisterWindow(recvs);
    if (open() != 0) return fail(first, std::to_string(open()) + " mappings left open after the last window");
  }
  return kOk;
}

TEST(CommunicatorWindows, MappingsAreOpenedOncePerGpuAndClosedWithTheLastWindow) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runProcesses(kProcesses, kRanksPerProcess, mappingsFollowTheWindows));
}

// A registration one process cannot make (its first rank offers host memory): that process gets its own error, the
// other an Error(RemoteError) naming the failed process's ranks; neither keeps the window (no mapping open), and both
// go on with a checked all-reduce through the staging windows.
int aWindowOneProcessCannotShare(Communicator& comm, int first) {
  const RankWindows windows(comm);
  std::vector<void*> bases = windows.bases;
  std::vector<unsigned char> host(windows.bytes.front());
  if (first == 0) bases.front() = host.data();
  try {
    comm.registerWindow(bases, windows.bytes);
    return fail(first, "registerWindow succeeded with a host buffer in the world");
  } catch (const Error& error) {
    const std::string text = error.what();
    if (first == 0 && error.code() == ErrorCode::RemoteError) return fail(first, "not its own error: " + text);
    if (first != 0 && (error.code() != ErrorCode::RemoteError || text.find("rank(s) 0, 1 ") == std::string::npos)) {
      return fail(first, "the other process's error does not name ranks 0 and 1: " + text);
    }
  }
  const std::size_t open = coll::CommunicatorAccess::openWindowMappings(comm);
  if (open != 0) return fail(first, std::to_string(open) + " mappings kept after a registration that failed");
  const std::vector<Stream> streams = rankStreams(comm);
  const std::string problem = runOnWindows(comm, windows, streams, Collective::AllReduce, Pairing::Apart, 0, 91);
  return problem.empty() ? kOk : fail(first, "after the failed registration: " + problem);
}

TEST(CommunicatorWindows, ARegistrationOneProcessCannotMakeIsKeptByNone) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  expectWorldOk(runProcesses(kProcesses, kRanksPerProcess, aWindowOneProcessCannotShare));
}

}  // namespace
}  // namespace peerlink::testing
