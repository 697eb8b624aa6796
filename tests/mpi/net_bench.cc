// The transport between nodes beside MPI's own point-to-point, on host memory, in one run: every rank's rail calls
// (all-reduce, all-gather, reduce-scatter: the flat plans a hierarchical call runs across nodes) timed against MPI's
// exchange of the same bytes on the same rails (net/rail_exchange.hpp, what `peerlink coll` puts beside its phases
// across nodes), so the transport's own cost shows without a GPU. Each call's result is checked against the closed
// form after it was timed. docs/multinode.md ("Measuring the transport on CPU") says how to read it.
//
//   mpirun -np 2 sh -c 'PEERLINK_HOSTID=node$OMPI_COMM_WORLD_RANK exec mpi_net_bench [options]'
//
// --path staged (the communicator's: pinned-memory pieces; --copies thread runs their copies on a thread of each
// rank's own, as a GPU's copy engine runs them beside the host, --copies inline on the transport's thread) or direct
// (MPI on the callers' host memory). --memory gpu puts the callers' buffers in GPU memory (GPU: world rank modulo the
// GPUs seen; "SKIPPED: ..." without one) and runs the communicator's staged path itself: the copies on the GPU's copy
// engine, the reductions where PEERLINK_NET_REDUCE says (AUTO: on the GPU, but on the host for a call of one piece
// under 2 MiB a reduction; GPU, HOST: all on one). A timing is never a test: CTest runs this with small sizes for its
// checks.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "coll/host_reduce.hpp"
#include "net/cuda_device_access.hpp"
#include "net/mpi_library.hpp"
#include "net/net_world.hpp"
#include "net/rail_exchange.hpp"
#include "net_test_data.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace {

using namespace peerlink;

// Copies on a thread of their own, done in the order queued: a GPU's copy engine, which works beside the host.
class ThreadCopies final : public net::DeviceAccess {
 public:
  ThreadCopies() : thread_([this] { work(); }) {}
  ~ThreadCopies() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void copyAsync(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({dst, src, bytes});
    ++queued_;
    changed_.notify_all();
  }
  std::uint64_t mark() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_;
  }
  bool reached(std::uint64_t marker) override { return done_.load(std::memory_order_acquire) >= marker; }
  void* allocateHost(std::size_t bytes) override { return ::operator new(bytes); }
  void freeHost(void* memory) noexcept override { ::operator delete(memory); }

 private:
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const Copy copy = queue_.front();
      queue_.pop_front();
      lock.unlock();
      if (copy.bytes > 0 && copy.dst != copy.src) std::memmove(copy.dst, copy.src, copy.bytes);
      done_.fetch_add(1, std::memory_order_release);
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Copy> queue_;
  std::uint64_t queued_ = 0;
  std::atomic<std::uint64_t> done_{0};
  bool stopping_ = false;
  std::thread thread_;
};

struct Options {
  std::vector<std::string> collectives{"all_reduce", "all_gather", "reduce_scatter"};
  std::size_t minBytes = std::size_t{1} << 20;
  std::size_t maxBytes = std::size_t{64} << 20;
  std::size_t factor = 2;
  int warmup = 2;
  int rounds = 5;
  int iterations = 3;
  std::string path = "staged";
  std::string copies = "thread";
  std::string memory = "host";
  int gpu = -1;  ///< --memory gpu: this rank's GPU
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The slowest rank's value.
double slowest(double mine) {
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

// What one rank of a ring of n sends to the others in a call of `bytes` (nccl-tests' size: the all-reduce's buffer,
// the all-gather's whole output, the reduce-scatter's whole input).
std::size_t acrossBytes(Collective collective, int n, std::size_t bytes) {
  const std::size_t share = bytes / static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1);
  return collective == Collective::AllReduce ? 2 * share : share;
}

// One row: the rail's calls and MPI's exchange, each timed over the same warm-up and iterations, the slowest rank;
// then the call's result checked. False where the result is wrong (the row says where).
bool row(net::NetWorld& world, const net::RailExchange& exchange, Collective collective, std::size_t bytes,
         const Options& options) {
  net::NetGroup& rail = world.rail();
  const int n = rail.size();
  const int me = rail.rank();
  const DataType type = DataType::F32;
  const std::size_t size = dataTypeSize(type);
  const std::size_t count =
      collective == Collective::AllReduce ? bytes / size : bytes / size / static_cast<std::size_t>(n);
  const std::vector<coll::Bytes> sends = testing::everySend(collective, type, n, count, 0);
  coll::Bytes recv(recvElementsOf(collective, n, count, me, 0) * size);
  const coll::Bytes& send = sends[static_cast<std::size_t>(me)];
  // --memory gpu: the call's buffers on the GPU, the result brought back to `recv` for the check.
  DeviceBuffer gpuSend, gpuRecv;
  if (options.gpu >= 0) {
    gpuSend = DeviceBuffer(options.gpu, send.size());
    gpuRecv = DeviceBuffer(options.gpu, recv.size());
    if (cudaMemcpy(gpuSend.data(), send.data(), send.size(), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw Error(ErrorCode::CudaError, "net_bench: cudaMemcpy of the send data to the GPU failed");
    }
  }
  const net::NetCall call{collective,
                          count,
                          type,
                          ReduceOp::Sum,
                          0,
                          0,
                          options.gpu >= 0 ? gpuSend.data() : send.data(),
                          options.gpu >= 0 ? gpuRecv.data() : recv.data()};
  const std::size_t across = acrossBytes(collective, n, count * size * (collective == Collective::AllReduce ? 1 : n));
  coll::Bytes exchangeSend(across, std::byte{1});
  coll::Bytes exchangeRecv(across);

  // Rounds of each, in turn, so that both meet the same load (other processes on the machine); the medians.
  const auto timed = [&](const auto& once) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.iterations; ++i) once();
    return slowest(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6 /
                   options.iterations);
  };
  const auto peerlink = [&] { rail.run(call); };
  const auto mpi = [&] { net::exchangeOnce(exchange, exchangeSend.data(), exchangeRecv.data(), across); };
  for (int i = 0; i < options.warmup; ++i) {
    peerlink();
    mpi();
  }
  std::vector<double> peerlinkRounds;
  std::vector<double> mpiRounds;
  std::vector<double> ratios;
  for (int r = 0; r < options.rounds; ++r) {
    peerlinkRounds.push_back(timed(peerlink));
    mpiRounds.push_back(timed(mpi));
    ratios.push_back(mpiRounds.back() / peerlinkRounds.back());
  }
  const double peerlinkUs = median(peerlinkRounds);
  const double mpiUs = median(mpiRounds);
  if (options.gpu >= 0 && cudaMemcpy(recv.data(), gpuRecv.data(), recv.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    throw Error(ErrorCode::CudaError, "net_bench: cudaMemcpy of the result from the GPU failed");
  }

  const std::vector<coll::Bytes> want = coll::hostReduceReference(collective, type, ReduceOp::Sum, n, count, 0, sends);
  const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, ReduceOp::Sum, n, 8.0) : coll::Tolerance{};
  const std::optional<std::string> mismatch = coll::findMismatch(type, tol, want[static_cast<std::size_t>(me)], recv);
  int bad = mismatch ? 1 : 0;
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mismatch)
    std::printf("rank %d: %s of %zu B: %s\n", world.rank(), collectiveName(collective), bytes, mismatch->c_str());
  if (world.rank() == 0) {
    const double gb = static_cast<double>(across) / 1e3;
    std::printf("%-15s %10zu %12zu %12.0f %6.2f %12.0f %6.2f %6.2f  %s\n", collectiveName(collective), bytes, across,
                peerlinkUs, gb / peerlinkUs, mpiUs, gb / mpiUs, median(ratios), anyBad ? "WRONG" : "ok");
    std::fflush(stdout);
  }
  return anyBad == 0;
}

int run(const Options& options) {
  const Params params = Params::fromEnvironment();
  net::NetOptions netOptions = net::NetOptions::fromParams(params);
  netOptions.path = options.path == "direct" ? net::NetPath::Direct : net::NetPath::Staged;
  std::unique_ptr<net::DeviceAccess> copies = options.gpu >= 0 ? net::cudaDeviceAccess(options.gpu)
                                              : options.copies == "thread"
                                                  ? std::unique_ptr<net::DeviceAccess>(new ThreadCopies)
                                                  : net::hostDeviceAccess();
  net::NetWorld world(net::openMpiPointToPoint(params), netOptions, std::move(copies),
                      std::make_unique<net::HostMemory>());
  // MPI's exchange on a communicator of its own, as `peerlink coll` measures it.
  const std::unique_ptr<net::PointToPoint> p2p = net::openMpiPointToPoint(params);
  net::RailExchange exchange;
  exchange.p2p = p2p.get();
  exchange.neighbours = net::railRingNeighbours(world.grid(), world.rank());
  exchange.timeout = netOptions.timeout;
  exchange.describe = [&](int rank) { return world.describe(rank); };
  const coll::NodeGrid grid = world.grid();
  const net::MpiFacts facts = net::mpiFacts(params);
  std::string how;
  if (options.gpu >= 0) {
    std::string where = "host";
    if (netOptions.reduce == net::NetReduce::Gpu) where = "GPU";
    if (netOptions.reduce == net::NetReduce::Auto) {
      where = "GPU, on the host for a call of one piece under " + std::to_string(netOptions.gpuReduceMinBytes) +
              " B a reduction";
    }
    how = " (copies by the GPU, reductions on the " + where + ")";
  } else if (options.path == "staged") {
    how = " (copies " + options.copies + ")";
  }
  if (world.rank() == 0) {
    std::printf(
        "# net bench: %d nodes x %d ranks over %s; %s memory; path %s%s; pieces of %zu B; %d warm-up, %d rounds of "
        "%d calls each in turn, the slowest rank's; medians, ratio: the median of the rounds' MPI / peerlink\n",
        grid.nodes, grid.ranksPerNode, facts.library.c_str(), options.memory.c_str(), options.path.c_str(), how.c_str(),
        netOptions.chunkBytes, options.warmup, options.rounds, options.iterations);
    std::printf("# %-13s %10s %12s %12s %6s %12s %6s %6s  %s\n", "collective", "size (B)", "across/rank", "peerlink us",
                "GB/s", "MPI p2p us", "GB/s", "ratio", "check");
  }
  bool right = true;
  for (const std::string& name : options.collectives) {
    const std::optional<Collective> collective = parseCollective(name);
    if (!collective) throw Error(ErrorCode::InvalidUsage, "unknown collective " + name);
    for (std::size_t bytes = options.minBytes; bytes <= options.maxBytes; bytes *= options.factor) {
      right = row(world, exchange, *collective, bytes, options) && right;
    }
  }
  return right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"peerlink's transport between nodes beside MPI's own point-to-point, on host memory"};
  app.add_option("--collectives", options.collectives, "all_reduce, all_gather, reduce_scatter")->delimiter(',');
  app.add_option("-b,--min-bytes", options.minBytes, "smallest size (nccl-tests' size)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("-e,--max-bytes", options.maxBytes, "largest size")->transform(CLI::AsSizeValue(false));
  app.add_option("-f,--factor", options.factor, "each size this many times the one before")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1024}));
  app.add_option("-w,--warmup", options.warmup, "untimed calls before each timing")->check(CLI::NonNegativeNumber);
  app.add_option("-r,--rounds", options.rounds, "timed rounds of each, in turn; the medians")
      ->check(CLI::PositiveNumber);
  app.add_option("-n,--iterations", options.iterations, "calls per round")->check(CLI::PositiveNumber);
  app.add_option("--path", options.path, "staged (pinned-memory pieces) or direct (MPI on the buffers)")
      ->check(CLI::IsMember({"staged", "direct"}));
  app.add_option("--copies", options.copies, "the staged path's copies: on a thread of their own, or inline")
      ->check(CLI::IsMember({"thread", "inline"}));
  app.add_option("--memory", options.memory, "the callers' buffers in host or GPU memory (gpu: the staged path)")
      ->check(CLI::IsMember({"host", "gpu"}));
  CLI11_PARSE(app, argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int status = 0;
  if (options.memory == "gpu") {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int gpus = 0;
    const cudaError_t found = cudaGetDeviceCount(&gpus);
    if (found != cudaSuccess || gpus == 0) {
      if (rank == 0) {
        std::printf("SKIPPED: no CUDA GPU (cudaGetDeviceCount: %s)\n",
                    found != cudaSuccess ? cudaGetErrorName(found) : "0 GPUs");
      }
      MPI_Finalize();
      return 0;
    }
    if (options.path != "staged") {
      if (rank == 0) std::fprintf(stderr, "net_bench: --memory gpu runs the staged path only (--path staged)\n");
      MPI_Finalize();
      return 2;
    }
    options.gpu = rank % gpus;
  }
  try {
    status = run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "net_bench: %s\n", error.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
