// Development tool, not a test: what each block of the traced collective kernels did (setCollTrace: the ring
// kernels and the direct-read reduction kernel). Written to find why the ring reduce-scatter's eager cells at
// 512 MiB settled into a fast or a slow rate (round 51; round 52: its chains' imbalance).
//
// Runs `cells` cells of eager reduce-scatters (`op=reduce_scatter`), all-reduces (`op=all_reduce`: at 512 MiB
// the ring's reduce half is traced, at 8-32 MiB the two-shot kernel) or broadcasts from rank 0
// (`op=broadcast`) of `mib` MiB per rank on every GPU: each cell `warmup` untimed iterations, then `iterations`
// timed one by one (events on every rank's stream; the slowest rank's time per iteration). After each cell,
// what every block of every rank did in the cell's last call: its SM, chain, start, first round, end, rounds
// and waits. Between cells, optionally, a kernel of 1-4 idle blocks on every GPU (`perturb=1`: whether the
// hardware's block placement carries over from kernel to kernel) or fresh buffers (`realloc=1`: whether the
// buffers' addresses matter); `placement=in` or `alt` runs in place or alternates. The text has a line per
// cell and, per rank, when its blocks ended (the median and the last) and its chains' spans; `json=FILE`
// keeps every record (scripts/ring_trace_summary.py summarizes such files).
//
// Usage: peerlink_ring_trace [cells=12] [iterations=20] [warmup=5] [mib=512] [placement=out|in|alt]
//                            [perturb=0|1] [realloc=0|1] [op=reduce_scatter|all_reduce|broadcast] [json=FILE]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "kernels/coll_kernels.cuh"
#include "kernels/device_status.cuh"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

using kernels::CollTraceRecord;

// A record per block of any grid.
constexpr int kMaxRecords = kernels::kCollMaxBlocks;

// Spins for `ns` nanoseconds (perturb=1's idle blocks).
__global__ void idleKernel(unsigned long long ns) {
  const uint64_t start = kernels::globalTimerNs();
  while (kernels::globalTimerNs() - start < ns) {
  }
}

struct Options {
  int cells = 12;
  int iterations = 20;
  int warmup = 5;
  std::size_t mib = 512;
  std::string placement = "out";
  bool perturb = false;
  bool realloc = false;
  Collective op = Collective::ReduceScatter;
  std::string json;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (eq == std::string::npos) throw Error(ErrorCode::InvalidUsage, "expected key=value, got " + arg);
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    const auto number = [&](auto parse) {
      try {
        return parse(value);
      } catch (const std::logic_error&) {
        throw Error(ErrorCode::InvalidUsage, "not a number: " + arg);
      }
    };
    if (key == "cells") {
      o.cells = number([](const std::string& v) { return std::stoi(v); });
    } else if (key == "iterations") {
      o.iterations = number([](const std::string& v) { return std::stoi(v); });
    } else if (key == "warmup") {
      o.warmup = number([](const std::string& v) { return std::stoi(v); });
    } else if (key == "mib") {
      o.mib = number([](const std::string& v) { return std::stoul(v); });
    } else if (key == "placement" && (value == "out" || value == "in" || value == "alt")) {
      o.placement = value;
    } else if (key == "perturb") {
      o.perturb = value == "1";
    } else if (key == "realloc") {
      o.realloc = value == "1";
    } else if (key == "op" && value == "reduce_scatter") {
      o.op = Collective::ReduceScatter;
    } else if (key == "op" && value == "all_reduce") {
      o.op = Collective::AllReduce;
    } else if (key == "op" && value == "broadcast") {
      o.op = Collective::Broadcast;
    } else if (key == "json") {
      o.json = value;
    } else {
      throw Error(ErrorCode::InvalidUsage, "unknown option " + arg);
    }
  }
  if (o.cells < 1 || o.iterations < 1 || o.warmup < 0 || o.mib < 1) {
    throw Error(ErrorCode::InvalidUsage, "cells, iterations and mib must be positive, warmup not negative");
  }
  return o;
}

struct RankBuffers {
  DeviceBuffer send, recv;
};

std::vector<RankBuffers> allocate(const std::vector<int>& devices, std::size_t bytes) {
  std::vector<RankBuffers> buffers;
  for (int device : devices) {
    RankBuffers b{DeviceBuffer(device, bytes), DeviceBuffer(device, bytes)};
    DeviceGuard guard(device);
    PEERLINK_CUDA_CHECK(cudaMemset(b.send.data(), 0, bytes));
    PEERLINK_CUDA_CHECK(cudaMemset(b.recv.data(), 0, bytes));
    buffers.push_back(std::move(b));
  }
  return buffers;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Per rank: each chain's span from the rank's first block entering to the chain's last block finishing (us),
// its rounds per block (min-max) and thread 0's mean waits per block (kilocycles: stage, free, ready, pace).
std::string describeRank(const std::vector<CollTraceRecord>& records) {
  unsigned long long entered = ~0ull;
  for (const auto& r : records) entered = std::min(entered, r.enteredNs);
  struct Chain {
    unsigned long long finished = 0, minRounds = ~0ull, maxRounds = 0;
    double stage = 0, free = 0, ready = 0, pace = 0;
    int blocks = 0;
  };
  std::map<int, Chain> chains;
  for (const auto& r : records) {
    Chain& c = chains[r.chain];
    c.finished = std::max(c.finished, std::max(r.finishedNs, entered));
    c.minRounds = std::min(c.minRounds, r.rounds);
    c.maxRounds = std::max(c.maxRounds, r.rounds);
    c.stage += static_cast<double>(r.stageWait);
    c.free += static_cast<double>(r.freeWait);
    c.ready += static_cast<double>(r.readyWait);
    c.pace += static_cast<double>(r.paceWait);
    ++c.blocks;
  }
  std::vector<unsigned long long> ends;
  for (const auto& r : records) {
    if (r.finishedNs >= entered) ends.push_back(r.finishedNs - entered);  // 0: the block never finished its work
  }
  std::sort(ends.begin(), ends.end());
  std::string text =
      ends.empty() ? std::string()
                   : fmt::format(" blocks end {:.0f}/{:.0f}us", static_cast<double>(ends[ends.size() / 2]) / 1000.0,
                                 static_cast<double>(ends.back()) / 1000.0);
  for (const auto& [index, c] : chains) {
    text += fmt::format(" c{}:{:.0f}us r{}-{} w{:.0f}/{:.0f}/{:.0f}/{:.0f}", index,
                        static_cast<double>(c.finished - entered) / 1000.0, c.minRounds, c.maxRounds,
                        c.stage / c.blocks / 1000.0, c.free / c.blocks / 1000.0, c.ready / c.blocks / 1000.0,
                        c.pace / c.blocks / 1000.0);
  }
  return text;
}

void writeRecords(std::ofstream& out, const std::vector<CollTraceRecord>& records) {
  out << "[";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    out << (i ? "," : "")
        << fmt::format("[{},{},{},{},{},{},{},{},{},{}]", r.smid, r.chain, r.enteredNs, r.startedNs, r.finishedNs,
                       r.rounds, r.stageWait, r.freeWait, r.readyWait, r.paceWait);
  }
  out << "]";
}

int run(const Options& o) {
  int count = 0;
  PEERLINK_CUDA_CHECK(cudaGetDeviceCount(&count));
  std::vector<int> devices;
  for (int d = 0; d < count; ++d) devices.push_back(d);
  const int ranks = count;
  Communicator comm(devices);
  const std::size_t bytes = o.mib << 20;
  const std::size_t recvCount = bytes / sizeof(float) / static_cast<std::size_t>(ranks);
  const std::size_t wholeCount = bytes / sizeof(float);
  const bool scatter = o.op == Collective::ReduceScatter;
  // nccl-tests' bus bandwidth factors.
  const double busFactor = o.op == Collective::Broadcast ? 1.0
                           : scatter                     ? static_cast<double>(ranks - 1) / ranks
                                                         : 2.0 * (ranks - 1) / ranks;
  std::printf("%d GPUs, %s of %zu MiB per rank (f32 sum): %s\n", ranks, collectiveName(o.op), o.mib,
              comm.describeChoice(o.op, scatter ? recvCount * sizeof(float) : bytes).c_str());
  std::vector<RankBuffers> buffers = allocate(devices, bytes);
  std::vector<Stream> streams;
  std::vector<DeviceBuffer> traces;
  for (int rank = 0; rank < ranks; ++rank) {
    streams.emplace_back(devices[rank]);
    traces.emplace_back(devices[rank], kMaxRecords * sizeof(CollTraceRecord));
    DeviceGuard guard(devices[rank]);
    kernels::setCollTrace(static_cast<CollTraceRecord*>(traces.back().data()));
  }
  std::ofstream json;
  if (!o.json.empty()) {
    json.open(o.json);
    json << "{\"mib\":" << o.mib << ",\"ranks\":" << ranks << ",\"cells\":[";
  }
  for (int cell = 0; cell < o.cells; ++cell) {
    const bool inPlace = o.placement == "in" || (o.placement == "alt" && cell % 2 == 1);
    const int idleBlocks = o.perturb ? cell % 5 : 0;
    if (o.realloc && cell > 0) {
      buffers.clear();
      buffers = allocate(devices, bytes);
    }
    for (int rank = 0; rank < ranks; ++rank) {
      DeviceGuard guard(devices[rank]);
      PEERLINK_CUDA_CHECK(cudaMemset(traces[rank].data(), 0, kMaxRecords * sizeof(CollTraceRecord)));
      if (idleBlocks > 0) idleKernel<<<idleBlocks, 32, 0, streams[rank].get()>>>(20000);
      PEERLINK_CUDA_CHECK(cudaGetLastError());
    }
    const auto issue = [&] {
      for (int rank = 0; rank < ranks; ++rank) {
        const auto* send = static_cast<const float*>(buffers[rank].send.data());
        void* out = inPlace ? buffers[rank].send.data() : buffers[rank].recv.data();
        if (o.op == Collective::AllReduce) {
          comm.allReduce(rank, send, out, wholeCount, DataType::F32, ReduceOp::Sum, streams[rank].get());
          continue;
        }
        if (o.op == Collective::Broadcast) {
          comm.broadcast(rank, send, out, wholeCount, DataType::F32, 0, streams[rank].get());
          continue;
        }
        float* recv = inPlace ? static_cast<float*>(buffers[rank].send.data()) + rank * recvCount
                              : static_cast<float*>(buffers[rank].recv.data());
        comm.reduceScatter(rank, send, recv, recvCount, DataType::F32, ReduceOp::Sum, streams[rank].get());
      }
    };
    for (int i = 0; i < o.warmup; ++i) issue();
    std::vector<std::vector<Event>> marks(static_cast<std::size_t>(ranks));
    for (int rank = 0; rank < ranks; ++rank) {
      marks[rank].emplace_back(devices[rank]);
      PEERLINK_CUDA_CHECK(cudaEventRecord(marks[rank].back().get(), streams[rank].get()));
    }
    for (int i = 0; i < o.iterations; ++i) {
      issue();
      for (int rank = 0; rank < ranks; ++rank) {
        marks[rank].emplace_back(devices[rank]);
        PEERLINK_CUDA_CHECK(cudaEventRecord(marks[rank].back().get(), streams[rank].get()));
      }
    }
    for (int rank = 0; rank < ranks; ++rank) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(streams[rank].get()));
    comm.checkHealth();
    std::vector<double> us(static_cast<std::size_t>(o.iterations), 0.0);
    for (int rank = 0; rank < ranks; ++rank) {
      for (int i = 0; i < o.iterations; ++i) {
        float ms = 0;
        PEERLINK_CUDA_CHECK(cudaEventElapsedTime(&ms, marks[rank][i].get(), marks[rank][i + 1].get()));
        us[i] = std::max(us[i], static_cast<double>(ms) * 1000.0);
      }
    }
    const std::vector<double> steady(us.begin() + (o.iterations > 1 ? 1 : 0), us.end());
    std::printf("cell %2d %-6s idle %d: median %.1f us (first %.1f, %.1f-%.1f), busbw %.1f GB/s\n", cell,
                inPlace ? "in" : "out", idleBlocks, median(steady), us[0],
                *std::min_element(steady.begin(), steady.end()), *std::max_element(steady.begin(), steady.end()),
                static_cast<double>(bytes) * busFactor / (median(steady) * 1e3));
    if (json.is_open()) {
      json << (cell ? "," : "")
           << fmt::format("{{\"cell\":{},\"in_place\":{},\"idle_blocks\":{},\"us\":[", cell, inPlace ? "true" : "false",
                          idleBlocks);
      for (int i = 0; i < o.iterations; ++i) json << (i ? "," : "") << fmt::format("{:.2f}", us[i]);
      json << "],\"records\":[";
    }
    for (int rank = 0; rank < ranks; ++rank) {
      std::vector<CollTraceRecord> records(kMaxRecords);
      PEERLINK_CUDA_CHECK(
          cudaMemcpy(records.data(), traces[rank].data(), records.size() * sizeof(records[0]), cudaMemcpyDeviceToHost));
      records.erase(
          std::remove_if(records.begin(), records.end(), [](const CollTraceRecord& r) { return r.enteredNs == 0; }),
          records.end());
      std::printf("  rank %d (%zu blocks):%s\n", rank, records.size(), describeRank(records).c_str());
      if (json.is_open()) {
        json << (rank ? "," : "");
        writeRecords(json, records);
      }
    }
    if (json.is_open()) json << "]}";
    std::fflush(stdout);
  }
  if (json.is_open()) json << "]}\n";
  for (int rank = 0; rank < ranks; ++rank) {
    DeviceGuard guard(devices[rank]);
    kernels::setCollTrace(nullptr);
  }
  return 0;
}

}  // namespace
}  // namespace peerlink

int main(int argc, char** argv) {
  try {
    return peerlink::run(peerlink::parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peerlink_ring_trace: %s\n", e.what());
    return 1;
  }
}
