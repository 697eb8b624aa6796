// A peerlink::Communicator across nodes end to end under mpirun, through the public API only: every rank creates it
// with the MPI rank as its rank and its GPU (local index modulo the GPUs seen, so ranks share GPUs on a machine with
// fewer), and the world is split into nodes by PEERLINK_HOSTID (the CTest line sets it from the MPI rank). Every
// collective of the API in place and out of place, for sizes from 8 B to 64 MiB, and send/recv groups (in the node
// and across nodes at once), against the closed forms (coll/host_reduce.hpp); calls whose data the stream writes and
// reads around them; small and large calls alternating between two streams; calls captured into a CUDA graph and run
// many times between eager calls; a rank killed.
//
//   comm_nodes_e2e collectives DIR G   G ranks per node; each rank writes DIR/rank<r>.txt: "ok ..." or "error ..."
//                                      ("SKIPPED: ..." where there is no GPU)
//   comm_nodes_e2e kill DIR G          the last rank kills itself before a 32 MiB all-reduce; the others must name it
//   comm_nodes_e2e stall DIR G         the last rank's stream is held three times PEERLINK_NET_TIMEOUT_MS before a
//                                      1 MiB all-reduce (a queued call where the host reduces, or one that waits on
//                                      the host, e.g. PEERLINK_NET_ASYNC=OFF); every rank must fail within the
//                                      deadline, the call
//                                      or checkHealth saying so (comm_nodes_fault.sh)
//   comm_nodes_e2e stall-async DIR G   the same before a 4 KiB all-reduce (an async call's kernel)
//   comm_nodes_e2e misplaced DIR G     communicator rank r^1 on MPI rank r: every rank must refuse it, naming a rank
//   comm_nodes_e2e serialized DIR G    MPI without MPI_THREAD_MULTIPLE: every rank must refuse it, saying so
//                                      (both fail before any GPU is used: they run without one)
//
// After a fault the ranks leave with _exit, since MPI_Finalize would wait for the lost rank.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coll/host_reduce.hpp"
#include "comm_nodes_support.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "rank_report.hpp"

namespace peerlink::comm_nodes {

int worldRank = 0;

std::string runCollective(Communicator& comm, int gpu, cudaStream_t stream, Collective collective, DataType type,
                          ReduceOp op, std::size_t count, bool inPlace) {
  const int n = comm.size();
  const int me = worldRank;
  const int root = n - 1;
  const std::size_t size = dataTypeSize(type);
  std::vector<Bytes> sends;
  for (int r = 0; r < n; ++r) sends.push_back(dataOf(type, sendElementsOf(collective, n, count, r, root), r, 1));
  const Bytes& mine = sends[static_cast<std::size_t>(me)];
  const std::size_t recvBytes = recvElementsOf(collective, n, count, me, root) * size;
  const std::size_t block = count * size * static_cast<std::size_t>(me);
  const void* send = nullptr;
  void* recv = nullptr;
  std::vector<Device> buffers;
  buffers.reserve(2);
  if (!inPlace) {
    buffers.emplace_back(gpu, mine, mine.size());
    buffers.emplace_back(gpu, Bytes{}, recvBytes);
    send = buffers[0].at(0);
    recv = recvBytes > 0 ? buffers[1].at(0) : nullptr;
  } else if (collective == Collective::AllGather) {
    buffers.emplace_back(gpu, Bytes{}, recvBytes);
    check(cudaMemcpy(buffers[0].at(block), mine.data(), mine.size(), cudaMemcpyHostToDevice), "copy in");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    recv = buffers[0].at(0);
    send = buffers[0].at(block);
  } else if (collective == Collective::ReduceScatter) {
    buffers.emplace_back(gpu, mine, mine.size());
    send = buffers[0].at(0);
    recv = buffers[0].at(block);
  } else {
    buffers.emplace_back(gpu, mine, count * size);
    send = recv = buffers[0].at(0);
  }
  switch (collective) {
    case Collective::AllReduce: comm.allReduce(me, send, recv, count, type, op, stream); break;
    case Collective::Broadcast: comm.broadcast(me, send, recv, count, type, root, stream); break;
    case Collective::Reduce: comm.reduce(me, send, recv, count, type, op, root, stream); break;
    case Collective::AllGather: comm.allGather(me, send, recv, count, type, stream); break;
    case Collective::ReduceScatter: comm.reduceScatter(me, send, recv, count, type, op, stream); break;
    case Collective::AllToAll: comm.allToAll(me, send, recv, count, type, stream); break;
    case Collective::SendRecv: break;
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  comm.checkHealth();
  const Bytes want =
      coll::hostReduceReference(collective, type, op, n, count, root, sends)[static_cast<std::size_t>(me)];
  if (want.empty()) return "";
  const Bytes got = readBack(recv, want.size());
  const coll::Tolerance tol = reduces(collective) ? coll::tolerance(type, op, n, 8.0) : coll::Tolerance{};
  if (auto mismatch = coll::findMismatch(type, tol, want, got)) {
    return std::string(collectiveName(collective)) + " " + dataTypeName(type) + " " + reduceOpName(op) + " count " +
           std::to_string(count) + (inPlace ? " in place" : "") + ": " + *mismatch;
  }
  return "";
}

}  // namespace peerlink::comm_nodes

namespace {

using namespace peerlink;
using namespace peerlink::comm_nodes;

testing::RankReport report;

// A send/recv group: this rank sends `count` elements to each of `to` and receives from each of `from`; the data
// from rank s to rank d is dataOf(.., s, 100 + d).
std::string runPeers(Communicator& comm, int gpu, cudaStream_t stream, const std::vector<int>& to,
                     const std::vector<int>& from, std::size_t count, const std::string& name) {
  const DataType type = DataType::F32;
  const std::size_t bytes = count * dataTypeSize(type);
  std::vector<Device> sends, recvs;
  sends.reserve(to.size());
  recvs.reserve(from.size());
  comm.groupStart();
  for (const int peer : to) {
    sends.emplace_back(gpu, dataOf(type, count, worldRank, 100 + peer), bytes);
    comm.send(worldRank, sends.back().at(0), count, type, peer, stream);
  }
  for (const int peer : from) {
    recvs.emplace_back(gpu, Bytes{}, bytes);
    comm.recv(worldRank, recvs.back().at(0), count, type, peer, stream);
  }
  comm.groupEnd();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  comm.checkHealth();
  for (std::size_t i = 0; i < from.size(); ++i) {
    const Bytes want = dataOf(type, count, from[i], 100 + worldRank);
    if (auto mismatch = coll::findMismatch(type, {}, want, readBack(recvs[i].at(0), bytes))) {
      return name + " count " + std::to_string(count) + " from rank " + std::to_string(from[i]) + ": " + *mismatch;
    }
  }
  return "";
}

void sleepOnStream(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

// The call's input is written on the stream behind a host function that sleeps (the buffer holds a poison until
// then), and its output read by a copy queued after it: the call must take the data as the stream leaves it and
// leave its results before the stream's next work, without the caller synchronizing between. An all-reduce (several
// pieces at 16 MiB), an all-gather, and a ring shift of send/recv.
std::string runStreamOrdered(Communicator& comm, int gpu, cudaStream_t stream, Collective collective,
                             std::size_t count) {
  const DataType type = DataType::F32;
  const int n = comm.size();
  const int next = (worldRank + 1) % n;
  const int previous = (worldRank + n - 1) % n;
  const bool shift = collective == Collective::SendRecv;
  std::vector<Bytes> sends;
  for (int r = 0; r < n; ++r) sends.push_back(dataOf(type, count, r, shift ? 100 + (r + 1) % n : 7));
  const Bytes& mine = sends[static_cast<std::size_t>(worldRank)];
  const Bytes want = shift ? dataOf(type, count, previous, 100 + worldRank)
                           : coll::hostReduceReference(collective, type, ReduceOp::Sum, n, count, 0,
                                                       sends)[static_cast<std::size_t>(worldRank)];
  Device send(gpu, Bytes{}, mine.size());
  Device recv(gpu, Bytes{}, want.size());
  Pinned in(mine.size()), out(want.size());
  std::memcpy(in.data, mine.data(), mine.size());
  check(cudaLaunchHostFunc(stream, sleepOnStream, nullptr), "cudaLaunchHostFunc");
  check(cudaMemcpyAsync(send.at(0), in.data, mine.size(), cudaMemcpyHostToDevice, stream), "copy in");
  switch (collective) {
    case Collective::AllReduce:
      comm.allReduce(worldRank, send.at(0), recv.at(0), count, type, ReduceOp::Sum, stream);
      break;
    case Collective::AllGather: comm.allGather(worldRank, send.at(0), recv.at(0), count, type, stream); break;
    default:
      comm.groupStart();
      comm.send(worldRank, send.at(0), count, type, next, stream);
      comm.recv(worldRank, recv.at(0), count, type, previous, stream);
      comm.groupEnd();
  }
  check(cudaMemcpyAsync(out.data, recv.at(0), want.size(), cudaMemcpyDeviceToHost, stream), "copy out");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  comm.checkHealth();
  Bytes got(want.size());
  std::memcpy(got.data(), out.data, got.size());
  const coll::Tolerance tol = shift ? coll::Tolerance{} : coll::tolerance(type, ReduceOp::Sum, n, 8.0);
  if (auto mismatch = coll::findMismatch(type, tol, want, got)) {
    return std::string("stream-ordered ") + (shift ? "ring shift" : collectiveName(collective)) + " count " +
           std::to_string(count) + ": " + *mismatch;
  }
  return "";
}

// All-reduces alternating between two streams, none waited for until the last: small ones (async calls across nodes,
// more than the transport has slot sets for them) and every third one of 6 MiB (several pieces: a queued call, its
// reductions on the GPU or, with PEERLINK_NET_REDUCE=HOST, on the host; one that waits on the host with
// PEERLINK_NET_ASYNC=OFF). A call
// on one stream must not take its slots from a call still running on the other, nor read its input before the call
// before it on its stream wrote it. Each call's own buffers; every result checked after both streams ended. `issued`:
// how long the ten calls took to return, and to end.
std::string runAcrossTwoStreams(Communicator& comm, int gpu, std::string& issued) {
  const int n = comm.size();
  const auto countOf = [](int k) { return k % 3 == 2 ? std::size_t{3} << 19 : std::size_t{256}; };
  Stream streams[2] = {Stream(gpu), Stream(gpu)};
  std::vector<std::vector<Bytes>> sends;
  std::vector<Device> send, recv;
  send.reserve(10);
  recv.reserve(10);
  for (int k = 0; k < 10; ++k) {
    std::vector<Bytes> all;
    for (int r = 0; r < n; ++r) all.push_back(dataOf(DataType::F32, countOf(k), r, 20 + k));
    send.emplace_back(gpu, all[static_cast<std::size_t>(worldRank)], countOf(k) * 4);
    recv.emplace_back(gpu, Bytes{}, countOf(k) * 4);
    sends.push_back(std::move(all));
  }
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < 10; ++k) {
    comm.allReduce(worldRank, send[static_cast<std::size_t>(k)].at(0), recv[static_cast<std::size_t>(k)].at(0),
                   countOf(k), DataType::F32, ReduceOp::Sum, streams[k % 2].get());
  }
  const auto returned = std::chrono::steady_clock::now();
  for (Stream& stream : streams) check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
  const auto ended = std::chrono::steady_clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  char line[128];
  std::snprintf(line, sizeof line, "ten all-reduces on two streams returned in %.2f ms, ended in %.2f ms",
                ms(returned - start), ms(ended - start));
  issued = line;
  comm.checkHealth();
  for (int k = 0; k < 10; ++k) {
    const Bytes want =
        coll::hostReduceReference(Collective::AllReduce, DataType::F32, ReduceOp::Sum, n, countOf(k), 0,
                                  sends[static_cast<std::size_t>(k)])[static_cast<std::size_t>(worldRank)];
    const Bytes got = readBack(recv[static_cast<std::size_t>(k)].at(0), want.size());
    if (auto mismatch =
            coll::findMismatch(DataType::F32, coll::tolerance(DataType::F32, ReduceOp::Sum, n, 8.0), want, got)) {
      return "all-reduce " + std::to_string(k) + " of 10 on two streams (count " + std::to_string(countOf(k)) +
             "): " + *mismatch;
    }
  }
  return "";
}

int collectives(Communicator& comm, int gpu) {
  Stream stream(gpu);
  const Collective all[] = {Collective::AllReduce, Collective::Broadcast,     Collective::Reduce,
                            Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};
  // Bytes per rank's count: 8 B to 64 MiB of f32; f16 avg and i32 max at a few sizes.
  const std::size_t sizes[] = {8, 4096, 65536 + 4, std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{64} << 20};
  int calls = 0;
  const auto fail = [&](const std::string& what) {
    report("error " + what);
    return 1;
  };
  for (Collective collective : all) {
    for (std::size_t bytes : sizes) {
      for (bool inPlace : {false, true}) {
        if (inPlace && collective == Collective::AllToAll) continue;
        const std::string failure =
            runCollective(comm, gpu, stream.get(), collective, DataType::F32, ReduceOp::Sum, bytes / 4, inPlace);
        if (!failure.empty()) return fail(failure);
        ++calls;
      }
    }
    for (std::size_t count : {std::size_t{3}, std::size_t{100003}}) {
      for (const auto& [type, op] :
           {std::pair{DataType::F16, ReduceOp::Avg}, std::pair{DataType::I32, ReduceOp::Max}}) {
        const std::string failure = runCollective(comm, gpu, stream.get(), collective, type, op, count, false);
        if (!failure.empty()) return fail(failure);
        ++calls;
      }
    }
  }
  const int n = comm.size();
  const int next = (worldRank + 1) % n;
  const int previous = (worldRank + n - 1) % n;
  std::vector<int> everyone;
  for (int r = 0; r < n; ++r) everyone.push_back(r);
  for (std::size_t count : {std::size_t{2}, std::size_t{250000}, std::size_t{4} << 20}) {
    std::string failure = runPeers(comm, gpu, stream.get(), {next}, {previous}, count, "ring shift");
    if (failure.empty()) failure = runPeers(comm, gpu, stream.get(), everyone, everyone, count, "every pair");
    if (!failure.empty()) return fail(failure);
    calls += 2;
  }
  for (Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::SendRecv}) {
    for (std::size_t count : {std::size_t{1024}, std::size_t{4} << 20}) {
      const std::string failure = runStreamOrdered(comm, gpu, stream.get(), collective, count);
      if (!failure.empty()) return fail(failure);
      ++calls;
    }
  }
  std::string issued;
  if (const std::string failure = runAcrossTwoStreams(comm, gpu, issued); !failure.empty()) return fail(failure);
  calls += 10;
  std::string captured;
  if (const std::string failure = runCaptured(comm, gpu, stream.get(), captured); !failure.empty())
    return fail(failure);
  calls += 12 * 10 + 1;
  report("ok " + std::to_string(calls) + " calls through the communicator across nodes (" + std::to_string(n) +
         " ranks) on GPU " + std::to_string(gpu) + ": " + comm.describeChoice(Collective::AllReduce, 1 << 20) + "; " +
         issued + "; " + captured);
  return 0;
}

[[noreturn]] void loseLastRank(Communicator& comm, int gpu) {
  const int last = comm.size() - 1;
  const std::size_t count = std::size_t{8} << 20;  // 32 MiB of f32: still moving when the rank dies
  Stream stream(gpu);
  Device buffer(gpu, Bytes{}, count * 4);
  if (worldRank == last) {
    report("killing myself");
    raise(SIGKILL);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < 3; ++i) {
      comm.allReduce(worldRank, buffer.at(0), buffer.at(0), count, DataType::F32, ReduceOp::Sum, stream.get());
      check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
      comm.checkHealth();
    }
    report("no error");
  } catch (const Error& error) {
    report.fault(error, start);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  _exit(0);
}

// How long the stalled rank's stream is held: three times the transport's deadline.
std::chrono::milliseconds stallFor{0};
void stallOnStream(void*) {
  std::this_thread::sleep_for(stallFor);
}

// `count` elements of f32: 1 MiB is a queued call where the host reduces (comm_nodes_fault.sh sets
// PEERLINK_NET_REDUCE=HOST for it), 4 KiB an async call's kernel: either returns at once and its error
// comes with a later checkHealth, polled here (with PEERLINK_NET_ASYNC=OFF the call itself waits and fails).
[[noreturn]] void stallLastRank(Communicator& comm, int gpu, std::size_t count) {
  const char* deadline = std::getenv("PEERLINK_NET_TIMEOUT_MS");
  stallFor = std::chrono::milliseconds(3 * std::atoi(deadline != nullptr ? deadline : "300000"));
  Stream stream(gpu);
  Device buffer(gpu, Bytes{}, count * 4);
  if (worldRank == comm.size() - 1) check(cudaLaunchHostFunc(stream.get(), stallOnStream, nullptr), "host function");
  const auto start = std::chrono::steady_clock::now();
  try {
    comm.allReduce(worldRank, buffer.at(0), buffer.at(0), count, DataType::F32, ReduceOp::Sum, stream.get());
    while (std::chrono::steady_clock::now() - start < 2 * stallFor / 3) {
      comm.checkHealth();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    report("no error");
  } catch (const Error& error) {
    report.fault(error, start);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  _exit(0);  // the stalled stream's host function still sleeps
}

// Bad input refused at creation on every rank alike, before any GPU is used. Rank 0 prints one line for the world.
int refused(int size, int ranksPerNode, const std::string& mode, const char* expected) {
  UniqueId id;
  if (worldRank == 0) id = makeUniqueId();
  MPI_Bcast(id.bytes, sizeof id.bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  const int rank = mode == "misplaced" ? worldRank ^ 1 : worldRank;  // nodes kept, local indices swapped
  std::string outcome = "created";
  int matched = 0;
  try {
    Communicator comm(id, size, rank, worldRank % std::max(ranksPerNode, 1));
  } catch (const Error& error) {
    outcome = std::string(errorCodeName(error.code())) + ": " + error.what();
    matched = outcome.find(expected) != std::string::npos ? 1 : 0;
  }
  report(outcome);
  int all = 0;
  MPI_Allreduce(&matched, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (worldRank == 0) std::printf("%s: %s\n", mode.c_str(), all == 1 ? "every rank refused it" : "FAILED");
  return all == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s collectives|kill|stall|stall-async|misplaced|serialized DIR RANKS_PER_NODE\n",
                 argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  report.directory = argv[2];
  const int ranksPerNode = std::atoi(argv[3]);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, mode == "serialized" ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  report.rank = worldRank;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (mode == "misplaced" || mode == "serialized") {
    const int status =
        refused(size, ranksPerNode, mode,
                mode == "misplaced" ? "InvalidUsage: Communicator across 2 nodes x 2 ranks: rank 0 (host "
                                    : "initialized with MPI_THREAD_SERIALIZED");
    MPI_Finalize();
    return status;
  }
  const int gpus = testing::gpusOrSkip(report);
  if (gpus == 0) {
    MPI_Finalize();
    return 0;
  }
  const int gpu = (worldRank % std::max(ranksPerNode, 1)) % gpus;
  int status = 0;
  try {
    UniqueId id;
    if (worldRank == 0) id = makeUniqueId();
    MPI_Bcast(id.bytes, sizeof id.bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    Communicator comm(id, size, worldRank, gpu);
    if (mode == "kill") loseLastRank(comm, gpu);
    if (mode == "stall") stallLastRank(comm, gpu, std::size_t{1} << 18);
    if (mode == "stall-async") stallLastRank(comm, gpu, 1024);
    status = collectives(comm, gpu);
    MPI_Barrier(MPI_COMM_WORLD);
  } catch (const std::exception& error) {
    report(std::string("error ") + error.what());
    _exit(1);
  }
  MPI_Finalize();
  return status;
}
