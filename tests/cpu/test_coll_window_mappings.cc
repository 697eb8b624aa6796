// Registered windows across processes (src/coll/window_mappings.hpp, src/coll/registered_calls.hpp): which of the
// other processes' allocations a process opens on which of its GPUs, the base of every rank's window in each local
// rank's table, and each local rank's table of a call's buffers -- over worlds of 1-8 ranks whose processes drive
// 1-4 ranks each, every rank on its own GPU or sharing GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coll/registered_calls.hpp"
#include "coll/window_mappings.hpp"
#include "error_text.hpp"
#include "peerlink/error.hpp"

namespace peerlink::coll {
namespace {

// A world as one process sees it: rank r belongs to process r / perProcess and runs on GPU r % gpus; the
// process `here` drives its ranks. Rank r's window lies in an allocation of its own at offset 256 * r, unless
// `sharedAllocations`, where the ranks of a process that share a GPU put their windows in one allocation.
struct World {
  int nranks = 0;
  int perProcess = 1;
  int gpus = 1;
  int here = 0;
  bool sharedAllocations = false;

  int processOf(int rank) const { return rank / perProcess; }
  int gpuOf(int rank) const { return rank % gpus; }
  bool local(int rank) const { return processOf(rank) == here; }
  std::string name() const {
    return std::to_string(nranks) + " ranks, " + std::to_string(perProcess) + " a process, " + std::to_string(gpus) +
           " GPUs, process " + std::to_string(here) + (sharedAllocations ? ", shared allocations" : "");
  }

  IpcHandleBytes handleOf(int rank) const {
    IpcHandleBytes handle{};
    handle[0] = static_cast<std::uint8_t>(processOf(rank) + 1);
    handle[1] = static_cast<std::uint8_t>(sharedAllocations ? gpuOf(rank) + 1 : rank + 1);
    handle[63] = 0xAB;
    return handle;
  }
  std::vector<WindowCard> cards() const {
    std::vector<WindowCard> out(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
      out[static_cast<std::size_t>(r)].ipcHandle = handleOf(r);
      out[static_cast<std::size_t>(r)].offset = 256u * static_cast<unsigned>(r);
      out[static_cast<std::size_t>(r)].bytes = 1000;
    }
    return out;
  }
  std::vector<int> devices() const {
    std::vector<int> out;
    for (int r = 0; r < nranks; ++r) out.push_back(local(r) ? gpuOf(r) : -1);
    return out;
  }
  std::set<int> localGpus() const {
    std::set<int> out;
    for (int r = 0; r < nranks; ++r) {
      if (local(r)) out.insert(gpuOf(r));
    }
    return out;
  }
};

// Every world of 1-8 ranks, processes of 1-4 ranks, 1, 2 or one GPU per rank, seen from each process.
std::vector<World> everyWorld() {
  std::vector<World> worlds;
  for (int n = 1; n <= kernels::kCollMaxRanks; ++n) {
    for (int perProcess = 1; perProcess <= 4; ++perProcess) {
      for (const int gpus : std::set<int>{1, 2, n}) {
        for (int here = 0; here * perProcess < n; ++here) {
          for (const bool shared : {false, true}) worlds.push_back({n, perProcess, gpus, here, shared});
        }
      }
    }
  }
  return worlds;
}

// Stand-ins for the mappings' addresses: 4 KiB apart in one buffer, in windowMappings' order.
struct OpenedMappings {
  std::vector<unsigned char> memory;
  std::map<WindowMapping, unsigned char*> opened;
  explicit OpenedMappings(const std::vector<WindowMapping>& mappings) : memory((mappings.size() + 1) * 4096) {
    for (std::size_t i = 0; i < mappings.size(); ++i) opened[mappings[i]] = memory.data() + 4096 * i;
  }
};

bool everyPairReaches(int, int) {
  return true;
}

TEST(WindowMappings, EachOtherProcessAllocationOnceOnEachLocalGpu) {
  for (const World& world : everyWorld()) {
    SCOPED_TRACE(world.name());
    const std::vector<WindowMapping> mappings = windowMappings(world.cards(), world.devices());
    std::set<IpcHandleBytes> remoteAllocations;
    for (int r = 0; r < world.nranks; ++r) {
      if (!world.local(r)) remoteAllocations.insert(world.handleOf(r));
    }
    const std::set<int> gpus = world.localGpus();
    EXPECT_EQ(mappings.size(), remoteAllocations.size() * gpus.size());
    const std::set<WindowMapping> distinct(mappings.begin(), mappings.end());
    EXPECT_EQ(distinct.size(), mappings.size()) << "a mapping named twice";
    EXPECT_TRUE(std::is_sorted(mappings.begin(), mappings.end()));
    for (const IpcHandleBytes& handle : remoteAllocations) {
      for (const int gpu : gpus) EXPECT_EQ(distinct.count({handle, gpu}), 1u) << "GPU " << gpu;
    }
    for (const WindowMapping& mapping : mappings) {
      EXPECT_EQ(gpus.count(mapping.device), 1u) << "opened on GPU " << mapping.device << ", which drives no rank here";
      EXPECT_EQ(remoteAllocations.count(mapping.handle), 1u) << "a rank of this process's allocation opened";
    }
  }
}

TEST(WindowMappings, RanksSharingAGpuShareItsMapping) {
  // Two processes of two ranks, all four on GPU 0: each opens the other's two allocations once.
  const World world{4, 2, 1, 0, false};
  const std::vector<WindowMapping> mappings = windowMappings(world.cards(), world.devices());
  ASSERT_EQ(mappings.size(), 2u);
  EXPECT_EQ(mappings[0].device, 0);
  EXPECT_EQ(mappings[1].device, 0);
  EXPECT_NE(mappings[0].handle, mappings[1].handle);
}

TEST(WindowMappings, AProcessOfTwoGpusOpensEachAllocationOnBoth) {
  // Ranks 0, 1 here on GPUs 0, 1; ranks 2, 3 in another process on GPUs 0, 1: 2 allocations x 2 GPUs.
  const World world{4, 2, 2, 0, false};
  const std::vector<WindowMapping> mappings = windowMappings(world.cards(), world.devices());
  ASSERT_EQ(mappings.size(), 4u);
  std::set<int> devices;
  for (const WindowMapping& mapping : mappings) devices.insert(mapping.device);
  EXPECT_EQ(devices, (std::set<int>{0, 1}));
}

TEST(WindowMappings, OneProcessOpensNothing) {
  for (int n = 1; n <= kernels::kCollMaxRanks; ++n) {
    const World world{n, n, n, 0, false};
    EXPECT_TRUE(windowMappings(world.cards(), world.devices()).empty()) << n << " ranks";
  }
}

TEST(WindowBases, OwnBuffersHereAndEachGpusMappingForOtherProcesses) {
  for (const World& world : everyWorld()) {
    SCOPED_TRACE(world.name());
    const std::vector<WindowCard> cards = world.cards();
    const std::vector<int> devices = world.devices();
    std::vector<unsigned char> ownMemory(static_cast<std::size_t>(world.nranks) * 16);
    std::vector<unsigned char*> own(static_cast<std::size_t>(world.nranks), nullptr);
    for (int r = 0; r < world.nranks; ++r) {
      if (world.local(r)) own[static_cast<std::size_t>(r)] = ownMemory.data() + 16 * r;
    }
    const OpenedMappings opened(windowMappings(cards, devices));
    const WindowBases bases = windowBases(cards, own, devices, opened.opened, everyPairReaches);
    for (int v = 0; v < world.nranks; ++v) {
      const auto row = static_cast<std::size_t>(v);
      for (int p = 0; p < world.nranks; ++p) {
        const auto column = static_cast<std::size_t>(p);
        if (!world.local(v)) {
          EXPECT_EQ(bases[row][column], nullptr) << "a row for rank " << v << " of another process";
        } else if (world.local(p)) {
          EXPECT_EQ(bases[row][column], own[column]) << "rank " << v << " sees local rank " << p;
        } else {
          const unsigned char* mapping = opened.opened.at({world.handleOf(p), world.gpuOf(v)});
          EXPECT_EQ(bases[row][column], mapping + cards[column].offset) << "rank " << v << " sees rank " << p;
        }
      }
    }
    // Two local ranks on different GPUs see another process's rank through different mappings; on one GPU, the same.
    for (int v = 0; v < world.nranks; ++v) {
      for (int w = 0; w < world.nranks; ++w) {
        for (int p = 0; p < world.nranks; ++p) {
          if (!world.local(v) || !world.local(w) || world.local(p)) continue;
          const bool sameGpu = world.gpuOf(v) == world.gpuOf(w);
          EXPECT_EQ(bases[static_cast<std::size_t>(v)][static_cast<std::size_t>(p)] ==
                        bases[static_cast<std::size_t>(w)][static_cast<std::size_t>(p)],
                    sameGpu)
              << "ranks " << v << " and " << w << " seeing rank " << p;
        }
      }
    }
  }
}

// A shared call's card of 0 bytes (a buffer its rank passes to no kernel: a broadcast's input off the root): nothing
// opened for it, a null base in every local row.
TEST(WindowMappings, ACardOfNoBytesOpensNothingAndHasANullBase) {
  const World world{4, 1, 4, 0, false};
  std::vector<WindowCard> cards = world.cards();
  cards[2].bytes = 0;
  const std::vector<WindowMapping> mappings = windowMappings(cards, world.devices());
  ASSERT_EQ(mappings.size(), 2u);  // ranks 1 and 3
  for (const WindowMapping& mapping : mappings) EXPECT_NE(mapping.handle, world.handleOf(2));
  std::vector<unsigned char> ownMemory(16);
  const std::vector<unsigned char*> own = {ownMemory.data(), nullptr, nullptr, nullptr};
  const OpenedMappings opened(mappings);
  const WindowBases bases = windowBases(cards, own, world.devices(), opened.opened, everyPairReaches);
  EXPECT_EQ(bases[0][2], nullptr);
  EXPECT_EQ(bases[0][1], opened.opened.at({world.handleOf(1), 0}) + cards[1].offset);
  EXPECT_EQ(bases[0][0], ownMemory.data());
}

TEST(WindowBases, WindowsInOneAllocationShareItsMappingAtTheirOffsets) {
  // Ranks 2 and 3 (another process, both on GPU 0) put their windows in one allocation.
  const World world{4, 2, 1, 0, true};
  const std::vector<WindowCard> cards = world.cards();
  ASSERT_EQ(cards[2].ipcHandle, cards[3].ipcHandle);
  const std::vector<WindowMapping> mappings = windowMappings(cards, world.devices());
  ASSERT_EQ(mappings.size(), 1u);
  std::vector<unsigned char> ownMemory(32);
  const std::vector<unsigned char*> own = {ownMemory.data(), ownMemory.data() + 16, nullptr, nullptr};
  const OpenedMappings opened(mappings);
  const WindowBases bases = windowBases(cards, own, world.devices(), opened.opened, everyPairReaches);
  unsigned char* mapping = opened.opened.at(mappings[0]);
  EXPECT_EQ(bases[0][2], mapping + 512);
  EXPECT_EQ(bases[0][3], mapping + 768);
  EXPECT_EQ(bases[1][3], mapping + 768);
}

TEST(WindowBases, LocalRanksWithoutPeerAccessAreRefusedNamingBoth) {
  // Ranks 0 and 1 here on GPUs 0 and 1, which cannot reach each other; ranks on one GPU need no peer access.
  const World world{4, 2, 2, 0, false};
  std::vector<unsigned char> ownMemory(32);
  const std::vector<unsigned char*> own = {ownMemory.data(), ownMemory.data() + 16, nullptr, nullptr};
  const OpenedMappings opened(windowMappings(world.cards(), world.devices()));
  const PeerReach none = [](int, int) { return false; };
  try {
    windowBases(world.cards(), own, world.devices(), opened.opened, none);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(error.what()).find("rank 0 (GPU 0) cannot reach rank 1's window on GPU 1"), std::string::npos)
        << error.what();
  }
  const World shared{4, 2, 1, 0, false};
  const OpenedMappings sharedOpened(windowMappings(shared.cards(), shared.devices()));
  EXPECT_NO_THROW(windowBases(shared.cards(), own, shared.devices(), sharedOpened.opened, none));
}

TEST(WindowBases, AMappingNotOpenedIsAnInternalError) {
  const World world{4, 2, 2, 0, false};
  std::vector<unsigned char> ownMemory(32);
  const std::vector<unsigned char*> own = {ownMemory.data(), ownMemory.data() + 16, nullptr, nullptr};
  std::vector<WindowMapping> mappings = windowMappings(world.cards(), world.devices());
  mappings.pop_back();
  const OpenedMappings opened(mappings);
  try {
    windowBases(world.cards(), own, world.devices(), opened.opened, everyPairReaches);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::Internal) << error.what();
  }
}

TEST(WindowBases, CardsAndDevicesOfOtherSizesAreRefused) {
  const World world{4, 2, 2, 0, false};
  std::vector<int> devices = world.devices();
  devices.pop_back();
  EXPECT_THROW(windowMappings(world.cards(), devices), Error);
}

// registeredTable: a world of 4 ranks, `local` of them here (each on a GPU of its own), the others in another
// process. Each rank's window is 64 KiB: send region at 0, recv region at 32 KiB; the local ranks' calls at those
// offsets. Another process's rank p is mapped at a different address for each viewer.
struct TableWorld {
  static constexpr std::size_t kWindow = 64 << 10;
  std::vector<unsigned char> memory = std::vector<unsigned char>(20 * kWindow);
  UserWindow window;
  std::vector<bool> local;

  explicit TableWorld(std::vector<bool> here = {true, true, false, false}) : local(std::move(here)) {
    for (std::size_t p = 0; p < 4; ++p) {
      window.bytes[p] = kWindow;
      for (std::size_t v = 0; v < 4; ++v) {
        if (!local[v]) continue;
        window.base[v][p] = memory.data() + (local[p] ? p : 4 + 4 * p + v) * kWindow;
      }
    }
  }
  int lead() const { return local[0] ? 0 : local[1] ? 1 : 2; }
  std::vector<CallArgs> set(Collective collective, std::size_t count, std::size_t sendOffset,
                            std::size_t recvOffset) const {
    std::vector<CallArgs> calls(4);
    for (int r = 0; r < 4; ++r) {
      CallArgs& call = calls[static_cast<std::size_t>(r)];
      call.collective = collective;
      call.rank = r;
      call.count = count;
      call.type = DataType::F32;
      if (!local[static_cast<std::size_t>(r)]) continue;  // a stand-in without buffers
      call.send = window.base[static_cast<std::size_t>(r)][static_cast<std::size_t>(r)] + sendOffset;
      call.recv = window.base[static_cast<std::size_t>(r)][static_cast<std::size_t>(r)] + recvOffset;
    }
    return calls;
  }
};

TEST(RegisteredTable, EachLocalRankReachesOtherProcessesThroughItsOwnGpusMapping) {
  const TableWorld world;
  const std::size_t sendOffset = 128;
  const std::size_t recvOffset = 32768 + 64;
  const std::vector<CallArgs> set = world.set(Collective::AllReduce, 100, sendOffset, recvOffset);
  const WindowHit send{&world.window, sendOffset};
  const WindowHit recv{&world.window, recvOffset};
  for (int viewer = 0; viewer < 2; ++viewer) {
    const PeerPointerTable table = registeredTable(set, world.local, 0, send, recv, viewer);
    const auto v = static_cast<std::size_t>(viewer);
    for (std::size_t p = 0; p < 4; ++p) {
      if (world.local[p]) {
        EXPECT_EQ(table.send[p], set[p].send) << "viewer " << viewer << ", local rank " << p;
        EXPECT_EQ(table.recv[p], set[p].recv) << "viewer " << viewer << ", local rank " << p;
      } else {
        EXPECT_EQ(table.send[p], world.window.base[v][p] + sendOffset) << "viewer " << viewer << ", rank " << p;
        EXPECT_EQ(table.recv[p], world.window.base[v][p] + recvOffset) << "viewer " << viewer << ", rank " << p;
      }
    }
  }
  const PeerPointerTable first = registeredTable(set, world.local, 0, send, recv, 0);
  const PeerPointerTable second = registeredTable(set, world.local, 0, send, recv, 1);
  EXPECT_NE(first.send[2], second.send[2]) << "the two GPUs share one mapping of another process's window";
}

TEST(RegisteredTable, InPlaceGatherAndScatterTakeEachRanksOwnBlock) {
  const std::size_t count = 256;
  const std::size_t block = count * sizeof(float);
  // Ranks 0-1 or 1-2 here: the lead's own block is at offset 0 or at one block.
  for (const std::vector<bool>& here : {std::vector<bool>{true, true, false, false}, {false, true, true, false}}) {
    const TableWorld world(here);
    const int lead = world.lead();
    const std::size_t leadBlock = block * static_cast<std::size_t>(lead);
    SCOPED_TRACE("lead rank " + std::to_string(lead));
    // All-gather in place: rank r's send is block r of its recv (at 0 in the window).
    std::vector<CallArgs> gather = world.set(Collective::AllGather, count, 0, 0);
    for (std::size_t r = 0; r < 4; ++r) {
      if (world.local[r]) gather[r].send = static_cast<unsigned char*>(gather[r].recv) + block * r;
    }
    // Reduce-scatter in place: rank r's recv is block r of its send.
    std::vector<CallArgs> scatter = world.set(Collective::ReduceScatter, count, 0, 0);
    for (std::size_t r = 0; r < 4; ++r) {
      if (world.local[r]) scatter[r].recv = static_cast<unsigned char*>(const_cast<void*>(scatter[r].send)) + block * r;
    }
    for (std::size_t v = 0; v < 4; ++v) {
      if (!world.local[v]) continue;
      const int viewer = static_cast<int>(v);
      const PeerPointerTable gathered = registeredTable(gather, world.local, lead, WindowHit{&world.window, leadBlock},
                                                        WindowHit{&world.window, 0}, viewer);
      const PeerPointerTable scattered = registeredTable(scatter, world.local, lead, WindowHit{&world.window, 0},
                                                         WindowHit{&world.window, leadBlock}, viewer);
      for (std::size_t p = 0; p < 4; ++p) {
        if (world.local[p]) continue;
        EXPECT_EQ(gathered.recv[p], world.window.base[v][p]) << "viewer " << v << ", rank " << p;
        EXPECT_EQ(gathered.send[p], world.window.base[v][p] + block * p) << "viewer " << v << ", rank " << p;
        EXPECT_EQ(scattered.send[p], world.window.base[v][p]) << "viewer " << v << ", rank " << p;
        EXPECT_EQ(scattered.recv[p], world.window.base[v][p] + block * p) << "viewer " << v << ", rank " << p;
      }
    }
    // Out of place, lead's offsets on every rank.
    const std::vector<CallArgs> apart = world.set(Collective::AllGather, count, 0, 32768);
    const PeerPointerTable table =
        registeredTable(apart, world.local, lead, WindowHit{&world.window, 0}, WindowHit{&world.window, 32768}, lead);
    EXPECT_EQ(table.send[3], world.window.base[static_cast<std::size_t>(lead)][3]);
    EXPECT_EQ(table.recv[3], world.window.base[static_cast<std::size_t>(lead)][3] + 32768);
  }
}

// The other processes reach this process's ranks at the lead's offsets: a local rank whose buffers lie elsewhere in
// its window is named, in place the rank's own block is where it must be.
TEST(RegisteredTable, LocalRanksOffTheLeadsOffsetsAreRefused) {
  const TableWorld world;
  const std::vector<int> local = {0, 1};
  std::vector<CallArgs> set = world.set(Collective::AllReduce, 100, 128, 32768);
  const WindowHit send{&world.window, 128};
  const WindowHit recv{&world.window, 32768};
  EXPECT_NO_THROW(checkSymmetricBuffers(set, local, 0, send, recv));
  set[1].recv = static_cast<unsigned char*>(set[1].recv) + 256;
  const std::string message =
      testing::errorOf(ErrorCode::InvalidUsage, [&] { checkSymmetricBuffers(set, local, 0, send, recv); });
  EXPECT_TRUE(testing::contains(message, "rank 1's buffers are not at rank 0's offsets")) << message;
  // All-gather in place: each rank's send is its own block of its recv, not the lead's offset.
  const std::size_t block = 64 * sizeof(float);
  std::vector<CallArgs> gather = world.set(Collective::AllGather, 64, 0, 0);
  for (std::size_t r = 0; r < 2; ++r) gather[r].send = static_cast<unsigned char*>(gather[r].recv) + block * r;
  EXPECT_NO_THROW(checkSymmetricBuffers(gather, local, 0, WindowHit{&world.window, 0}, WindowHit{&world.window, 0}));
  gather[1].send = gather[1].recv;  // not its block
  EXPECT_THROW(checkSymmetricBuffers(gather, local, 0, WindowHit{&world.window, 0}, WindowHit{&world.window, 0}),
               Error);
}

// registeredCalls: the path follows from the buffers every rank uses, whatever a rank passes where the API ignores it.
std::vector<CallArgs> rootedSet(const TableWorld& world, Collective collective, int root) {
  std::vector<CallArgs> set = world.set(collective, 100, 128, 32768 + 64);
  for (CallArgs& call : set) call.root = root;
  return set;
}

TEST(RegisteredCalls, AReduceGoesThroughTheStagingWindowsWhateverItsRootPasses) {
  const TableWorld world;
  const std::vector<int> local = {0, 1};
  for (const int root : {0, 1, 2}) {
    std::vector<CallArgs> set = rootedSet(world, Collective::Reduce, root);
    EXPECT_FALSE(registeredCalls(set, local).has_value()) << "root " << root;
    for (const int r : local) {
      if (r != root) set[static_cast<std::size_t>(r)].recv = nullptr;  // NCCL lets the others pass NULL
    }
    EXPECT_FALSE(registeredCalls(set, local).has_value()) << "root " << root << ", NULL recv off the root";
  }
}

TEST(RegisteredCalls, ABroadcastReadsTheRootsInputFromItsOutputWhateverTheOthersPassAsInput) {
  const TableWorld world;
  const std::vector<int> local = {0, 1};
  for (const int root : {0, 1, 2}) {
    std::vector<CallArgs> set = rootedSet(world, Collective::Broadcast, root);
    for (const int r : local) {
      if (r != root) set[static_cast<std::size_t>(r)].send = nullptr;
    }
    const auto calls = registeredCalls(set, local);
    ASSERT_TRUE(calls.has_value()) << "root " << root;
    for (const int r : local) {
      const auto i = static_cast<std::size_t>(r);
      EXPECT_EQ(calls->set[i].send, set[i].recv) << "root " << root << ", rank " << r;
      EXPECT_EQ(calls->set[i].recv, set[i].recv) << "root " << root << ", rank " << r;
    }
    if (root >= 2) {
      EXPECT_FALSE(calls->rootCopy.has_value()) << "the root is another process's";
      continue;
    }
    // Out of place, the root copies its input into its output first.
    ASSERT_TRUE(calls->rootCopy.has_value()) << "root " << root;
    const auto i = static_cast<std::size_t>(root);
    EXPECT_EQ(calls->rootCopy->rank, root);
    EXPECT_EQ(calls->rootCopy->from, set[i].send);
    EXPECT_EQ(calls->rootCopy->to, set[i].recv);
    EXPECT_EQ(calls->rootCopy->bytes, 100 * sizeof(float));
    // In place it has nothing to copy.
    set[i].send = set[i].recv;
    const auto inPlace = registeredCalls(set, local);
    ASSERT_TRUE(inPlace.has_value());
    EXPECT_FALSE(inPlace->rootCopy.has_value()) << "root " << root << " in place";
  }
}

TEST(RegisteredCalls, CollectivesWhoseBuffersAreEveryRanksPassUnchanged) {
  const TableWorld world;
  const std::vector<int> local = {0, 1};
  for (const Collective collective :
       {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
    const std::vector<CallArgs> set = world.set(collective, 100, 128, 32768 + 64);
    const auto calls = registeredCalls(set, local);
    ASSERT_TRUE(calls.has_value()) << collectiveName(collective);
    EXPECT_FALSE(calls->rootCopy.has_value()) << collectiveName(collective);
    for (std::size_t r = 0; r < set.size(); ++r) {
      EXPECT_EQ(calls->set[r].send, set[r].send) << collectiveName(collective) << ", rank " << r;
      EXPECT_EQ(calls->set[r].recv, set[r].recv) << collectiveName(collective) << ", rank " << r;
    }
  }
}

}  // namespace
}  // namespace peerlink::coll
