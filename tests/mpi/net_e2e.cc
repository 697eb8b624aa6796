// The transport between nodes end to end under mpirun: real processes, the peerlink bootstrap (an id made on rank 0
// and broadcast over MPI), the transport over the user's MPI through libpeerlink_mpi.so, and every hierarchical
// collective on host memory (standing in for GPU memory) against the closed forms. Run by scripts/net-test.sh on two
// "hosts" made of network namespaces, and by CTest on one machine with PEERLINK_HOSTID splitting it in two.
//
//   net_e2e collectives DIR   every collective, 2+ nodes; each rank writes DIR/rank<r>.txt: "ok ..." or "error ..."
//   net_e2e gpu-collectives DIR   the same with every rank's buffers in GPU memory (GPU: world rank modulo the GPUs
//                             seen) and the staged path's copies by CUDA; "SKIPPED: ..." where there is no GPU
//   net_e2e kill DIR          the last rank kills itself before an all-reduce; the others must name it
//   net_e2e uninitialized|serialized DIR   MPI not initialized, or without MPI_THREAD_MULTIPLE: the error, printed
//   net_e2e unreachable DIR   the last rank runs $NET_E2E_CUT (the script: its link down) before an all-reduce; every
//                             rank must name a rank of the other host within PEERLINK_NET_TIMEOUT_MS
//
// Each rank writes its line to a file as well as stdout: once the link is down, mpirun gets no output from the other
// host. After a fault the ranks leave with _exit, since MPI_Finalize would wait for the lost ranks.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "coll/hierarchical_plan.hpp"
#include "coll/host_reduce.hpp"
#include "core/cuda_check.hpp"
#include "net/cuda_device_access.hpp"
#include "net/hierarchical_run.hpp"
#include "net/mpi_library.hpp"
#include "net/net_world.hpp"
#include "net_test_data.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "rank_report.hpp"

namespace {

using namespace peerlink;
using coll::Bytes;

int worldRank = 0;
testing::RankReport report;

// The rank's buffers copied into GPU memory on `gpu`, the plan run on them there (the transport stages them
// through pinned host memory), and copied back.
void runOnGpu(net::NetWorld& world, const coll::HierarchicalPlan& h, ReduceOp op, int gpu, testing::RankBytes& b) {
  Bytes* host[] = {&b.input, &b.output, &b.scratch};
  std::vector<DeviceBuffer> device;
  for (Bytes* bytes : host) {
    device.emplace_back(gpu, bytes->size());
    if (!bytes->empty()) {
      PEERLINK_CUDA_CHECK(cudaMemcpy(device.back().data(), bytes->data(), bytes->size(), cudaMemcpyHostToDevice));
    }
  }
  // cudaMemcpy from pageable memory may return before its DMA lands; the transport's copies run on a stream of
  // its own, so the data must be in place before the call (as a caller's stream must have finished writing it).
  PEERLINK_CUDA_CHECK(cudaDeviceSynchronize());
  net::runHierarchical(world, h, op, {device[0].data(), device[1].data(), device[2].data()});
  for (std::size_t i = 0; i < device.size(); ++i) {
    if (!host[i]->empty()) {
      PEERLINK_CUDA_CHECK(cudaMemcpy(host[i]->data(), device[i].data(), host[i]->size(), cudaMemcpyDeviceToHost));
    }
  }
}

// One hierarchical collective on this rank, on host memory or on GPU `gpu` (>= 0); "" or what differs from the
// closed form.
std::string check(net::NetWorld& world, int gpu, Collective collective, DataType type, ReduceOp op, std::size_t count,
                  bool inPlace) {
  const coll::NodeGrid grid = world.grid();
  const int n = grid.size();
  const int root = n - 1;
  const int me = world.rank();
  const coll::HierarchicalPlan h = coll::buildHierarchicalPlan(collective, grid, count, root, inPlace, 0, type);
  const std::vector<Bytes> sends = testing::everySend(collective, type, n, count, root);
  const Bytes got =
      gpu < 0 ? testing::runRankOfPlan(world, h, op, sends)
              : testing::runRankOfPlan(h, me, sends, [&](testing::RankBytes& b) { runOnGpu(world, h, op, gpu, b); });
  const std::vector<Bytes> want = coll::hostReduceReference(collective, type, op, n, count, root, sends);
  const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
  if (auto mismatch = coll::findMismatch(type, tol, want[static_cast<std::size_t>(me)], got)) {
    return std::string(collectiveName(collective)) + " " + dataTypeName(type) + " " + reduceOpName(op) + " count " +
           std::to_string(count) + (inPlace ? " in place" : "") + ": " + *mismatch;
  }
  return "";
}

int collectives(net::NetWorld& world, int gpu) {
  const Collective all[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                            Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll,
                            Collective::SendRecv};
  struct TypeOp {
    DataType type;
    ReduceOp op;
  };
  const TypeOp typeOps[] = {
      {DataType::F32, ReduceOp::Sum}, {DataType::F16, ReduceOp::Avg}, {DataType::I32, ReduceOp::Max}};
  int calls = 0;
  for (Collective collective : all) {
    for (std::size_t count : {std::size_t{1}, std::size_t{1001}, std::size_t{70000}}) {
      for (const TypeOp& typeOp : typeOps) {
        for (bool inPlace : {false, true}) {
          if (inPlace && (collective == Collective::AllToAll || collective == Collective::SendRecv)) continue;
          const std::string failure = check(world, gpu, collective, typeOp.type, typeOp.op, count, inPlace);
          if (!failure.empty()) {
            report("error " + failure);
            return 1;
          }
          ++calls;
        }
      }
    }
  }
  const coll::NodeGrid grid = world.grid();
  report("ok " + std::to_string(calls) + " hierarchical collectives on " + std::to_string(grid.nodes) + " nodes x " +
         std::to_string(grid.ranksPerNode) + " (host " +
         world.peers()[static_cast<std::size_t>(world.rank())].hostName + ")" +
         (gpu >= 0 ? " on GPU " + std::to_string(gpu) : ""));
  return 0;
}

// The last rank leaves (killed, or cut off); every rank reports what its all-reduce said and how long it took.
[[noreturn]] void fault(net::NetWorld& world, const std::string& mode) {
  const int last = world.size() - 1;
  const std::size_t count = std::size_t{8} << 20;  // 32 MiB of f32: many pieces, still moving when the fault hits
  std::vector<float> data(count, 1.0f);
  if (world.rank() == last) {
    if (mode == "kill") {
      report("killing myself");
      raise(SIGKILL);
    }
    const char* cut = std::getenv("NET_E2E_CUT");
    report(std::string("cutting the link: ") + (cut != nullptr ? cut : "(NET_E2E_CUT unset)"));
    if (cut == nullptr || std::system(cut) != 0) _exit(3);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    world.rail().allReduce(data.data(), data.data(), count, DataType::F32, ReduceOp::Sum);
    world.node().allReduce(data.data(), data.data(), count, DataType::F32, ReduceOp::Sum);
    report("no error");
  } catch (const Error& error) {
    report.fault(error, start);
  }
  // Ranks whose deadlines pass at the same moment report their own wait, not this rank's exit.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s collectives|gpu-collectives|kill|unreachable|uninitialized|serialized DIR\n",
                 argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  report.directory = argv[2];
  if (mode == "uninitialized" || mode == "serialized") {
    // Bad input: the transport refuses an MPI it cannot use, saying why.
    int provided = 0;
    if (mode == "serialized") MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    try {
      net::openMpiPointToPoint(Params::fromEnvironment());
      std::printf("no error\n");
    } catch (const Error& error) {
      std::printf("%s: %s\n", errorCodeName(error.code()), error.what());
    }
    if (mode == "serialized") MPI_Finalize();
    return 0;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  report.rank = worldRank;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int gpu = -1;
  if (mode == "gpu-collectives") {
    const int gpus = testing::gpusOrSkip(report);
    if (gpus == 0) {
      MPI_Finalize();
      return 0;
    }
    gpu = worldRank % gpus;
  }
  int status = 0;
  try {
    // The bootstrap: its watchdog tells the transport of a rank that died.
    UniqueId id;
    if (worldRank == 0) id = makeUniqueId();
    MPI_Bcast(id.bytes, sizeof id.bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    std::unique_ptr<Bootstrap> bootstrap = connectBootstrap(id, worldRank, size);
    const Params params = Params::fromEnvironment();
    net::NetOptions options = net::NetOptions::fromParams(params);
    // The path is chosen as for device buffers (staged, on an MPI that is not CUDA-aware), so the pieces go through
    // the pinned-memory pipeline; host memory stands in for GPU memory but in gpu-collectives.
    net::PathChoice path = net::choosePath(net::pathFactsOf(net::mpiFacts(params), params, false));
    if (gpu >= 0 && path.path == net::NetPath::Direct) {
      // The direct path reduces on the callers' memory: on GPU memory that takes kernels (the communicator's), and
      // this program has only HostMemory.
      path = {net::NetPath::Staged, "staged, forced: this program reduces on host memory only (" + path.reason + ")"};
    }
    options.path = path.path;
    if (worldRank == 0) std::printf("path: %s (%s)\n", net::netPathName(path.path), path.reason.c_str());
    net::NetWorld world(net::openMpiPointToPoint(params), options,
                        gpu >= 0 ? net::cudaDeviceAccess(gpu) : net::hostDeviceAccess(),
                        std::make_unique<net::HostMemory>());
    bootstrap->onPeerLost([&](int rank, const std::string& why) { world.peerLost(rank, why); });
    bootstrap->barrier();
    if (mode == "kill" || mode == "unreachable") fault(world, mode);
    status = collectives(world, gpu);
    bootstrap->barrier();
    bootstrap->onPeerLost([](int, const std::string&) {});  // the world goes first
  } catch (const std::exception& error) {
    report(std::string("error ") + error.what());
    std::fflush(stdout);
    _exit(1);
  }
  MPI_Finalize();
  return status;
}
