// The communicator across nodes end to end (comm_nodes_e2e.cc): calls captured into a CUDA graph.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comm_nodes_support.hpp"

namespace peerlink::comm_nodes {

// Calls captured into a CUDA graph (global capture mode, as PyTorch's): an all-reduce, a broadcast, a reduce, an
// all-gather, a reduce-scatter and a send/recv ring shift, small enough to run async across nodes, and a 1 MiB
// all-reduce, an all-gather of 512 KiB a rank and a 4 MiB ring shift, captured as several async calls each; and
// reductions whose pieces' copies out reduce across 2 nodes (a bf16 average of 3 MB and an f32 all-reduce in place
// of 1.6 MB, both of odd counts, an f32 reduce-scatter of 1.2 MB a rank, an i32 max). The graph
// runs `rounds` times with new data written before each run on the stream, and an eager all-reduce made right after
// each launch (while the graph may still run); every result of every run against the closed forms. The time of 50
// runs of the graph against 50 times the same calls made eagerly before the capture (`timing`); after the graph is
// destroyed, an eager call again.
std::string runCaptured(Communicator& comm, int gpu, cudaStream_t stream, std::string& timing) {
  const int n = comm.size();
  const int me = worldRank;
  const int root = n - 1;
  const int next = (me + 1) % n;
  const int previous = (me + n - 1) % n;
  const DataType type = DataType::F32;
  const ReduceOp op = ReduceOp::Sum;
  struct Case {
    Collective collective;
    std::size_t count;
    DataType type = DataType::F32;
    ReduceOp op = ReduceOp::Sum;
    bool inPlace = false;
  };
  // From the seventh on, larger than one async call: captured as several pieces.
  const std::vector<Case> cases = {{Collective::AllReduce, 1024},
                                   {Collective::Broadcast, 300},
                                   {Collective::Reduce, 1024},
                                   {Collective::AllGather, 256},
                                   {Collective::ReduceScatter, 256},
                                   {Collective::SendRecv, 1000},
                                   {Collective::AllReduce, 262144},
                                   {Collective::AllGather, 131072},
                                   {Collective::SendRecv, std::size_t{1} << 20},
                                   {Collective::AllReduce, 1500001, DataType::BF16, ReduceOp::Avg},
                                   {Collective::AllReduce, 400003, DataType::F32, ReduceOp::Sum, true},
                                   {Collective::ReduceScatter, 300001},
                                   {Collective::AllReduce, 70001, DataType::I32, ReduceOp::Max}};
  const auto bytesOf = [](const Case& c, std::size_t count) { return count * dataTypeSize(c.type); };
  const auto sendCount = [&](const Case& c) {
    return c.collective == Collective::SendRecv ? c.count : sendElementsOf(c.collective, n, c.count, me, root);
  };
  const auto recvCount = [&](const Case& c) {
    return c.collective == Collective::SendRecv ? c.count : recvElementsOf(c.collective, n, c.count, me, root);
  };
  std::vector<Device> sends, recvs;
  std::vector<std::unique_ptr<Pinned>> ins, outs;
  sends.reserve(cases.size());
  recvs.reserve(cases.size());
  for (const Case& c : cases) {
    sends.emplace_back(gpu, Bytes{}, bytesOf(c, sendCount(c)));
    recvs.emplace_back(gpu, Bytes{}, c.inPlace ? 0 : bytesOf(c, recvCount(c)));
    ins.push_back(std::make_unique<Pinned>(bytesOf(c, sendCount(c))));
    outs.push_back(std::make_unique<Pinned>(bytesOf(c, recvCount(c))));
  }
  // Where case k's result lands: its send buffer in place (an all-reduce's whole buffer).
  const auto resultOf = [&](std::size_t k) { return cases[k].inPlace ? sends[k].at(0) : recvs[k].at(0); };
  const auto queueCalls = [&] {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      void* send = sends[k].at(0);
      void* recv = recvCount(c) > 0 ? resultOf(k) : nullptr;
      switch (c.collective) {
        case Collective::AllReduce: comm.allReduce(me, send, recv, c.count, c.type, c.op, stream); break;
        case Collective::Broadcast: comm.broadcast(me, send, recv, c.count, c.type, root, stream); break;
        case Collective::Reduce: comm.reduce(me, send, recv, c.count, c.type, c.op, root, stream); break;
        case Collective::AllGather: comm.allGather(me, send, recv, c.count, c.type, stream); break;
        case Collective::ReduceScatter: comm.reduceScatter(me, send, recv, c.count, c.type, c.op, stream); break;
        default:
          comm.groupStart();
          comm.send(me, send, c.count, c.type, next, stream);
          comm.recv(me, recv, c.count, c.type, previous, stream);
          comm.groupEnd();
      }
    }
  };
  const auto endCapture = [&] {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    if (ended != cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
    check(ended, "cudaStreamEndCapture");
    return graph;
  };
  // The same calls timed 50 times eagerly now, and 50 runs of the graph below (each after a warm-up of 5): while
  // a graph holding captured calls lives, eager calls across nodes wait for their stream first.
  const auto timeRuns = [&](auto&& body) {
    for (int i = 0; i < 5; ++i) body();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) body();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 50;
  };
  const double eagerUs = timeRuns(queueCalls);
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  try {
    queueCalls();
  } catch (...) {
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  cudaGraph_t graph = endCapture();
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  const auto destroy = [&] {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  };
  const int rounds = 12;
  std::string failure;
  for (int round = 0; round < rounds && failure.empty(); ++round) {
    std::vector<std::vector<Bytes>> all(cases.size());
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      for (int r = 0; r < n; ++r) {
        const std::size_t count =
            c.collective == Collective::SendRecv ? c.count : sendElementsOf(c.collective, n, c.count, r, root);
        all[k].push_back(dataOf(c.type, count, r,
                                c.collective == Collective::SendRecv ? 100 + round : round * 10 + static_cast<int>(k)));
      }
      const Bytes& mine = all[k][static_cast<std::size_t>(me)];
      std::memcpy(ins[k]->data, mine.data(), mine.size());
      check(cudaMemcpyAsync(sends[k].at(0), ins[k]->data, mine.size(), cudaMemcpyHostToDevice, stream), "copy in");
    }
    // An eager all-reduce made while the graph may still run: numbered after the graph's calls on every rank.
    const std::size_t eagerCount = 256 + static_cast<std::size_t>(round);
    std::vector<Bytes> eagerAll;
    for (int r = 0; r < n; ++r) eagerAll.push_back(dataOf(type, eagerCount, r, 50 + round));
    Device eagerSend(gpu, eagerAll[static_cast<std::size_t>(me)], eagerCount * 4);
    Device eagerRecv(gpu, Bytes{}, eagerCount * 4);
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    comm.allReduce(me, eagerSend.at(0), eagerRecv.at(0), eagerCount, type, op, stream);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::size_t bytes = bytesOf(cases[k], recvCount(cases[k]));
      if (bytes > 0)
        check(cudaMemcpyAsync(outs[k]->data, resultOf(k), bytes, cudaMemcpyDeviceToHost, stream), "copy out");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    comm.checkHealth();
    const Bytes eagerWant = coll::hostReduceReference(Collective::AllReduce, type, op, n, eagerCount, 0,
                                                      eagerAll)[static_cast<std::size_t>(me)];
    if (auto mismatch = coll::findMismatch(type, coll::tolerance(type, op, n, 8.0), eagerWant,
                                           readBack(eagerRecv.at(0), eagerWant.size()))) {
      failure = "eager all-reduce after the graph's run " + std::to_string(round) + ": " + *mismatch;
    }
    for (std::size_t k = 0; k < cases.size() && failure.empty(); ++k) {
      const Case& c = cases[k];
      const Bytes want = c.collective == Collective::SendRecv
                             ? all[k][static_cast<std::size_t>(previous)]
                             : coll::hostReduceReference(c.collective, c.type, c.op, n, c.count, root,
                                                         all[k])[static_cast<std::size_t>(me)];
      if (want.empty()) continue;  // a reduce's other ranks
      Bytes got(want.size());
      std::memcpy(got.data(), outs[k]->data, got.size());
      const coll::Tolerance tol = reduces(c.collective) ? coll::tolerance(c.type, c.op, n, 8.0) : coll::Tolerance{};
      if (auto mismatch = coll::findMismatch(c.type, tol, want, got)) {
        failure = std::string("captured ") +
                  (c.collective == Collective::SendRecv ? "ring shift" : collectiveName(c.collective)) + " of " +
                  std::to_string(c.count) + " " + dataTypeName(c.type) + " " + reduceOpName(c.op) +
                  (c.inPlace ? " in place" : "") + " run " + std::to_string(round) + ": " + *mismatch;
      }
    }
  }
  if (!failure.empty()) {
    destroy();
    return failure;
  }
  const double graphUs = timeRuns([&] { check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); });
  destroy();
  comm.checkHealth();
  char line[160];
  std::snprintf(line, sizeof line, "%zu calls across nodes from a CUDA graph %.1f us a run, eagerly %.1f us",
                cases.size(), graphUs, eagerUs);
  timing = line;
  return runCollective(comm, gpu, stream, Collective::AllReduce, DataType::F32, ReduceOp::Sum, 4096, false);
}

}  // namespace peerlink::comm_nodes
