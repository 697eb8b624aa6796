// NodeWorld (node_world.hpp): creation across nodes (MPI checked on every rank, the node's communicator, the
// transport) and destruction.
#include "coll/node_world.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "coll/node_decisions.hpp"
#include "core/cpu_affinity.hpp"
#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/idle_wait.hpp"
#include "core/log.hpp"
#include "net/cuda_device_access.hpp"
#include "net/mpi_library.hpp"
#include "net/mpi_startup.hpp"
#include "peerlink/error.hpp"
#include "topology/gpu_cpus.hpp"

namespace peerlink::coll {
namespace {

constexpr int kNodeIdTag = 0x4e44;  // "ND": a node's first rank sends the node communicator's id to the others

// This rank's view of MPI: its place, or why it cannot use it; the transport and its path where it can.
// Whether this process can use MPI for the transport, its place in MPI_COMM_WORLD and the path between nodes;
// nothing here waits for the other ranks.
struct MpiReady {
  MpiPlace place;
  net::PathChoice path;
};

MpiReady checkMpi(const Params& params) {
  MpiReady ready;
  try {
    const net::MpiFacts facts = net::mpiFacts(params);
    const std::string problem = net::mpiUnusableReason(facts);
    ready.place = mpiPlaceOf(facts.worldRank, facts.worldSize, problem);
    if (problem.empty()) {
      ready.path = communicatorNetPath(net::choosePath(net::pathFactsOf(facts, params, false)),
                                       params.getString("PEERLINK_NET_CUDA_AWARE"));
    }
  } catch (const std::exception& error) {
    ready.place = mpiPlaceOf(-1, 0, error.what());
  }
  return ready;
}

// The node's communicator: its first rank makes the id and sends it to the others over the world's bootstrap.
std::unique_ptr<Communicator> makeNodeCommunicator(Bootstrap& bootstrap, const NodeGrid& grid, int device,
                                                   const Params& params) {
  const int rank = bootstrap.rank();
  const int node = grid.nodeOf(rank);
  const int local = grid.localOf(rank);
  if (grid.ranksPerNode == 1) return std::make_unique<Communicator>(std::vector<int>{device}, params);
  const int first = grid.rankOf(node, 0);
  UniqueId id;
  if (rank == first) {
    id = makeUniqueId(params);
    for (int l = 1; l < grid.ranksPerNode; ++l)
      bootstrap.send(grid.rankOf(node, l), kNodeIdTag, id.bytes, sizeof id.bytes);
  } else {
    const std::vector<std::uint8_t> bytes = bootstrap.recv(first, kNodeIdTag);
    if (bytes.size() != sizeof id.bytes) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("the node communicator's id from rank {} has {} bytes", first, bytes.size()));
    }
    std::memcpy(id.bytes, bytes.data(), sizeof id.bytes);
  }
  return std::make_unique<Communicator>(id, grid.ranksPerNode, local, device, params);
}

}  // namespace

NodeWorld::NodeWorld(Bootstrap& bootstrap, NodeGrid grid, int device, const Params& params)
    : grid_(grid), rank_(bootstrap.rank()), device_(device), peers_(bootstrap.peers()) {
  host_ = peers_[static_cast<std::size_t>(rank_)].hostName;
  // Every rank learns whether every rank can use MPI and is the MPI rank it must be before any MPI call that waits
  // for the others: all fail alike, naming the rank at fault.
  const auto refuse = [&](const std::string& problem) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("Communicator across {} nodes x {} ranks: {}", grid_.nodes, grid_.ranksPerNode, problem));
  };
  // Every rank's MPI place is checked before MPI_COMM_WORLD is duplicated: the duplication is collective, so a rank
  // that cannot use MPI, or an MPI_COMM_WORLD with ranks outside the communicator, would leave it waiting forever.
  const MpiReady ready = checkMpi(params);
  if (std::string problem = mpiPlacementProblem(net::gatherMpiPlaces(bootstrap, ready.place), peers_);
      !problem.empty()) {
    refuse(problem);
  }
  std::unique_ptr<net::PointToPoint> p2p = net::openMpiPointToPoint(params);
  pathName_ = net::netPathName(ready.path.path);
  node_ = makeNodeCommunicator(bootstrap, grid_, device, params);
  // Every rank has its node's communicator before anything waits in MPI: a rank that failed has aborted the
  // bootstrap, which ends this gather at once, where the transport's first exchange would wait to its deadline.
  const std::uint8_t made = 1;
  (void)bootstrap.allGather(&made, sizeof made);
  net::NetOptions options = net::NetOptions::fromParams(params);
  options.path = ready.path.path;
  // The progress thread makes every MPI call and copies through pinned memory: near the GPU, as the launch threads.
  const AffinityDecision near = decideNearGpu(params, localCpusOfDevice(device, params));
  logInfo(LogSubsys::Coll, "CPU affinity of the MPI progress thread of rank {} (GPU {}): {}", rank_, device,
          near.reason);
  options.progressCpus = near.bindTo;
  // A call returns with its results' copies to the caller's buffers queued; the caller's stream waits for them.
  options.copiesOutInStreamOrder = true;
  std::unique_ptr<net::CudaDeviceAccess> copies = net::cudaDeviceAccess(device);
  copies_ = copies.get();
  net_ = std::make_unique<net::NetWorld>(std::move(p2p), options, std::move(copies), nullptr);
  const NodeGrid seen = net_->grid();
  if (seen.nodes != grid_.nodes || seen.ranksPerNode != grid_.ranksPerNode) {
    throw Error(ErrorCode::Internal, fmt::format("the transport sees {} nodes x {} ranks, the bootstrap {} x {}",
                                                 seen.nodes, seen.ranksPerNode, grid_.nodes, grid_.ranksPerNode));
  }
  done_ = Event(device, cudaEventDisableTiming);
  queuedAfter_ = Event(device, cudaEventDisableTiming);
  copiesFollowStream_ = ready.path.path == net::NetPath::Staged;
  // The async calls' kernel reaches the transport's pinned memory at its host addresses (unified addressing).
  int unified = 0;
  int mapsHost = 0;
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, device));
  PEERLINK_CUDA_CHECK(cudaDeviceGetAttribute(&mapsHost, cudaDevAttrCanMapHostMemory, device));
  asyncCalls_ = copiesFollowStream_ && net_->options().asyncCalls && unified != 0 && mapsHost != 0;
  // A queued call's copies wait for the transport's thread with 64-bit stream memory operations.
  queuedCalls_ = asyncCalls_ && driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, device) != 0;
  for (AsyncSet& set : asyncSets_) set.done = Event(device, cudaEventDisableTiming);
  logInfo(LogSubsys::Coll,
          "rank {} of a communicator across {} nodes x {} ranks: node {} (host {}), local index {}, GPU {}, MPI rank "
          "{}; between nodes {}",
          rank_, grid_.nodes, grid_.ranksPerNode, grid_.nodeOf(rank_), host_, grid_.localOf(rank_), device, rank_,
          ready.path.reason);
}

// Async calls' kernels read and write the transport's pinned memory on the callers' streams: the memory is freed only
// once they ended (within the transport's deadlines, which release them), else kept.
NodeWorld::~NodeWorld() {
  try {
    const DeviceGuard guard(device_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    const auto ended = [&](cudaEvent_t event) {
      IdleWait idle;
      while (cudaEventQuery(event) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline) idle.idle();
      return cudaEventQuery(event) == cudaSuccess;
    };
    // A graph launched from now on starts none of its calls (they would need the transport); one still holding
    // captured calls reads the transport's flags and slots if it runs, so they are kept.
    captured_.close();
    if (captured_.anyAlive() && net_) net_->keepPinnedMemory();
    for (AsyncSet& set : asyncSets_) {
      if (set.used && !ended(set.done.get())) {
        if (net_) net_->keepPinnedMemory();
        return;
      }
    }
    // A queued call's copies wait for the transport's flags and write them, on the copy stream (also those of a call
    // whose queuing failed half way): the copy stream must have ended.
    if (queuedAny_ && copies_ != nullptr) {
      const std::uint64_t queuedSoFar = copies_->mark();
      IdleWait idle;
      while (!copies_->reached(queuedSoFar) && std::chrono::steady_clock::now() < deadline) idle.idle();
      if (!copies_->reached(queuedSoFar) || !ended(done_.get())) {
        if (net_) net_->keepPinnedMemory();
        return;
      }
    }
  } catch (...) {
    if (net_) net_->keepPinnedMemory();
  }
}

}  // namespace peerlink::coll
