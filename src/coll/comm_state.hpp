// The communicator's state (peerlink::Communicator keeps one): the ranks' devices and symmetric resources,
// the peer pointer tables the kernels take, and the calls waiting for their partners.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "coll/launch_threads.hpp"
#include "kernels/coll_kernels.cuh"
#include "kernels/kernel_graph.hpp"
#include "peerlink/collective_choice.hpp"
#include "peerlink/collectives.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "transport/peer_access.hpp"

namespace peerlink::coll {

/// One rank's call as the caller made it (a send or recv too: peer and isSend).
struct CallArgs {
  Collective collective = Collective::AllReduce;
  int rank = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  ///< as the API counts it (per rank for allGather's send, reduceScatter's recv, ...)
  DataType type = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  cudaStream_t stream = nullptr;
  int peer = -1;        ///< send/recv: the other rank
  bool isSend = false;  ///< send/recv: which of the two
};

/// One rank's symmetric resources, allocated at creation on its GPU and reachable from every peer.
struct RankResources {
  int device = -1;
  CUcontext context = nullptr;  ///< the GPU's primary context: a stream of it belongs to this GPU
  int smCount = 0;
  int computeMajor = 0;       ///< the GPU's compute capability, major part
  DeviceBuffer flags;         ///< kernels::kCollFlagBytes, zeroed: [phase][block][from rank]
  DeviceBuffer scratch;       ///< LL slots: 2 parities x nranks senders x kCollLlSlotBytes, zeroed
  DeviceBuffer ll128Scratch;  ///< LL128 slots: 2 parities x nranks senders x kCollLl128SlotBytes, zeroed
  DeviceBuffer p2pScratch;    ///< send/recv LL slots: 2 parities x nranks senders x kCollP2pLlSlotBytes, zeroed
  DeviceBuffer stage;         ///< push reductions (PEERLINK_COLL_PUSH=1, or AUTO on 3+ ranks of an NVLink mesh):
                              ///< nranks senders x kCollPushSlotBytes (flags guard it)
  DeviceBuffer ringStage;     ///< the ring reduce's stage, kCollRingStageBytes from the previous rank (flags guard it)
  DeviceBuffer sync;          ///< kernels::CollRankSync, zeroed
  /// Eager launches on this GPU (kernel_graph.hpp).
  std::unique_ptr<kernels::KernelGraph> eagerGraph;
  /// The copy-engine collectives' second stream and its fork and join events (comm_launch_copy_engine.cc):
  /// the pushes to the peers run there while the caller's stream makes the local copy.
  Stream copyStream;
  Event forkEvent;
  Event joinEvent;
};

/// The symmetric part of every kernel's arguments: each rank's flag area and LL scratch as every GPU
/// addresses them. In one process a peer's cudaMalloc pointer is valid on every GPU (peer access, UVA), so
/// the table is the same for all ranks; with one process per GPU each rank would hold its own mapping of
/// the peers' buffers here (IPC / cuMem), and the kernels would not change.
struct SymmetricTable {
  unsigned long long* flags[kernels::kCollMaxRanks] = {};
  void* scratch[kernels::kCollMaxRanks] = {};
  void* ll128Scratch[kernels::kCollMaxRanks] = {};
  void* p2pScratch[kernels::kCollMaxRanks] = {};
  void* stage[kernels::kCollMaxRanks] = {};
  void* ringStage[kernels::kCollMaxRanks] = {};
};

/// Every rank's user buffers for one matched call, as the launching GPU addresses them. The one place
/// where user pointers become peer pointers: one process passes them through (peer access makes any
/// GPU's cudaMalloc memory addressable); one process per GPU will translate them into mapped registered
/// buffers here.
struct PeerPointerTable {
  const void* send[kernels::kCollMaxRanks] = {};
  void* recv[kernels::kCollMaxRanks] = {};
};

/// A kernel choice and the call facts it was made for.
struct ChoiceMemo {
  bool valid = false;
  std::size_t bytes = 0;
  Fact inPlace = Fact::No;
  Fact aligned = Fact::No;
  CollectiveChoice choice;
};

struct CommState {
  Params params;
  Topology topology;
  std::vector<int> devices;
  int nranks = 0;
  std::vector<RankResources> ranks;
  PinnedBuffer failures;  ///< kernels::CollFailure[nranks], mapped: kernels report stalls here
  SymmetricTable symmetric;
  PeerAccessTable peerAccess;
  std::uint64_t timeoutNs = 0;
  ChoiceSettings settings;         ///< PEERLINK_ALGO, PEERLINK_PROTO, PEERLINK_COLL_PUSH, PEERLINK_COLL_CE
  CollectiveFabric fabric;         ///< the links between the ranks' GPUs, for the kernel choice
  int maxBlocks = 1;               ///< grid cap: the smallest SM count of the ranks' GPUs, or PEERLINK_COLL_MAX_BLOCKS
  std::size_t ringChunkBytes = 0;  ///< PEERLINK_COLL_RING_CHUNK: the rings' largest chunk, 0 each kernel's own
  int ringReduceBlocks = 0;        ///< PEERLINK_COLL_RING_REDUCE_BLOCKS: the reduce's chain grid, 0 its own
  bool overlapLaunches = false;    ///< direct launches overlap the previous kernel (PEERLINK_COLL_PDL; comm_setup.cc)

  std::vector<std::deque<CallArgs>> pending;  ///< per rank: collectives waiting for the other ranks
  std::vector<CallArgs> group;                ///< send/recv calls of the open group
  int groupDepth = 0;
  std::vector<CallArgs> loose;                           ///< send/recv outside a group, waiting for their partner
  std::vector<unsigned long long> reported;              ///< per rank: the last failure launch id reported
  std::array<bool, 7 * kKernelCount> logged = {};        ///< (collective, kernel) choices logged once
  std::array<bool, 7 * kKernelCount> steppedAside = {};  ///< (collective, kernel): a fallback logged once
  std::array<ChoiceMemo, 7> choices;                     ///< per collective: the last kernel choice
  std::uint64_t sets = 0;                                ///< collective sets launched (for messages)

  /// Eager sets' per-rank launches side by side (PEERLINK_COLL_LAUNCH_THREADS; comm_setup.cc); null: the
  /// calling thread launches every rank's. Last, so its threads stop before anything else goes.
  std::unique_ptr<LaunchThreads> launchThreads;

  kernels::CollFailure* failure(int rank) const { return static_cast<kernels::CollFailure*>(failures.data()) + rank; }
};

}  // namespace peerlink::coll
