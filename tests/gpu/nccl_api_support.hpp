// What the GPU tests of NCCL's API share: the library loaded by path in a forked child after that child's settings
// are set (the library reads them once, when it loads), values exact in every NCCL type (small integers, in {1,
// 2} where products or FP8 call for it), the host's reference of every collective, and one collective run and
// checked on the ranks a process drives.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "forked_roles.hpp"
#include "gpu_test_buffers.hpp"
#include "gpu_test_support.hpp"
#include "peerlink/error.hpp"

namespace peerlink::testing {

constexpr double kNcclStreamSeconds = 60;

/// The GPUs this machine has, counted by a child (this process never touches CUDA: it forks the tests' roles).
inline int gpuCount() {
  static const int count = [] {
    Pipe pipe;
    Child child("gpu probe", [&] {
      std::string why;
      pipe.send(std::to_string(cudaDevices(&why)));
      return kOk;
    });
    pipe.closeWrite();
    int found = 0;
    try {
      found = std::stoi(pipe.receive(kChildLimit));
    } catch (const std::exception&) {  // no answer: no GPU to test on
    }
    waitAll({&child}, std::chrono::seconds(30));
    return found;
  }();
  return count;
}

}  // namespace peerlink::testing

/// Skips the test with the reason where the machine has no GPU (ranks share GPUs where there are fewer).
#define PEERLINK_REQUIRE_ONE_GPU()                                                                         \
  do {                                                                                                     \
    if (::peerlink::testing::gpuCount() == 0) GTEST_SKIP() << "no CUDA GPU (the NCCL API tests need one)"; \
  } while (0)

namespace peerlink::testing {

struct NcclApi {
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclGetLastError) getLastError = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommInitRankConfig) commInitRankConfig = nullptr;
  decltype(&ncclCommInitAll) commInitAll = nullptr;
  decltype(&ncclCommSplit) commSplit = nullptr;
  decltype(&ncclCommFinalize) commFinalize = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclCommAbort) commAbort = nullptr;
  decltype(&ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&ncclCommCount) commCount = nullptr;
  decltype(&ncclCommUserRank) commUserRank = nullptr;
  decltype(&ncclCommWindowRegister) commWindowRegister = nullptr;
  decltype(&ncclCommWindowDeregister) commWindowDeregister = nullptr;
  decltype(&ncclMemAlloc) memAlloc = nullptr;
  decltype(&ncclMemFree) memFree = nullptr;
  decltype(&ncclRedOpCreatePreMulSum) redOpCreatePreMulSum = nullptr;
  decltype(&ncclRedOpDestroy) redOpDestroy = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclReduce) reduce = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  decltype(&ncclAlltoAll) allToAll = nullptr;
  decltype(&ncclGather) gather = nullptr;
  decltype(&ncclScatter) scatter = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;

  /// Throws Error naming `what` and ncclGetLastError when `result` is not ncclSuccess.
  void check(ncclResult_t result, const std::string& what) const {
    if (result != ncclSuccess) {
      throw Error(ErrorCode::RemoteError,
                  fmt::format("{} returned {}: {}", what, static_cast<int>(result), getLastError(nullptr)));
    }
  }
};

template <typename Function>
void bindNccl(void* library, const char* name, Function& target) {
  target = reinterpret_cast<Function>(::dlsym(library, name));
  if (target == nullptr) throw Error(ErrorCode::Internal, std::string("libpeerlink_nccl.so.2 lacks ") + name);
}

/// Sets `settings` in this process's environment, then loads the library (call once per forked child).
inline NcclApi loadNccl(const std::vector<std::pair<std::string, std::string>>& settings) {
  for (const auto& [name, value] : settings) ::setenv(name.c_str(), value.c_str(), 1);
  void* library = ::dlopen(PEERLINK_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) throw Error(ErrorCode::Internal, std::string("dlopen: ") + ::dlerror());
  NcclApi api;
  bindNccl(library, "ncclGetVersion", api.getVersion);
  bindNccl(library, "ncclGetUniqueId", api.getUniqueId);
  bindNccl(library, "ncclGetLastError", api.getLastError);
  bindNccl(library, "ncclCommInitRank", api.commInitRank);
  bindNccl(library, "ncclCommInitRankConfig", api.commInitRankConfig);
  bindNccl(library, "ncclCommInitAll", api.commInitAll);
  bindNccl(library, "ncclCommSplit", api.commSplit);
  bindNccl(library, "ncclCommFinalize", api.commFinalize);
  bindNccl(library, "ncclCommDestroy", api.commDestroy);
  bindNccl(library, "ncclCommAbort", api.commAbort);
  bindNccl(library, "ncclCommGetAsyncError", api.commGetAsyncError);
  bindNccl(library, "ncclCommCount", api.commCount);
  bindNccl(library, "ncclCommUserRank", api.commUserRank);
  bindNccl(library, "ncclCommWindowRegister", api.commWindowRegister);
  bindNccl(library, "ncclCommWindowDeregister", api.commWindowDeregister);
  bindNccl(library, "ncclMemAlloc", api.memAlloc);
  bindNccl(library, "ncclMemFree", api.memFree);
  bindNccl(library, "ncclRedOpCreatePreMulSum", api.redOpCreatePreMulSum);
  bindNccl(library, "ncclRedOpDestroy", api.redOpDestroy);
  bindNccl(library, "ncclAllReduce", api.allReduce);
  bindNccl(library, "ncclBroadcast", api.broadcast);
  bindNccl(library, "ncclReduce", api.reduce);
  bindNccl(library, "ncclAllGather", api.allGather);
  bindNccl(library, "ncclReduceScatter", api.reduceScatter);
  bindNccl(library, "ncclAlltoAll", api.allToAll);
  bindNccl(library, "ncclGather", api.gather);
  bindNccl(library, "ncclScatter", api.scatter);
  bindNccl(library, "ncclSend", api.send);
  bindNccl(library, "ncclRecv", api.recv);
  bindNccl(library, "ncclGroupStart", api.groupStart);
  bindNccl(library, "ncclGroupEnd", api.groupEnd);
  return api;
}

// ---- values of every NCCL type ---------------------------------------------------------------------------

inline std::size_t ncclTypeBytes(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

inline bool ncclTypeIsFloat(ncclDataType_t type) {
  return type >= ncclFloat16 && type != ncclInt64 && type != ncclUint64;
}

inline void setValue(ncclDataType_t type, void* data, std::size_t i, double value) {
  auto* bytes = static_cast<unsigned char*>(data) + i * ncclTypeBytes(type);
  const auto put = [&](auto typed) { std::memcpy(bytes, &typed, sizeof typed); };
  switch (type) {
    case ncclInt8: return put(static_cast<std::int8_t>(value));
    case ncclUint8: return put(static_cast<std::uint8_t>(value));
    case ncclInt32: return put(static_cast<std::int32_t>(value));
    case ncclUint32: return put(static_cast<std::uint32_t>(value));
    case ncclInt64: return put(static_cast<std::int64_t>(value));
    case ncclUint64: return put(static_cast<std::uint64_t>(value));
    case ncclFloat16: return put(__float2half(static_cast<float>(value)));
    case ncclFloat32: return put(static_cast<float>(value));
    case ncclFloat64: return put(value);
    case ncclBfloat16: return put(__float2bfloat16(static_cast<float>(value)));
    case ncclFloat8e4m3: return put(__nv_fp8_e4m3(static_cast<float>(value)));
    case ncclFloat8e5m2: return put(__nv_fp8_e5m2(static_cast<float>(value)));
    default: break;
  }
}

inline double getValue(ncclDataType_t type, const void* data, std::size_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data) + i * ncclTypeBytes(type);
  const auto get = [&](auto typed) {
    std::memcpy(&typed, bytes, sizeof typed);
    return typed;
  };
  switch (type) {
    case ncclInt8: return get(std::int8_t{});
    case ncclUint8: return get(std::uint8_t{});
    case ncclInt32: return get(std::int32_t{});
    case ncclUint32: return get(std::uint32_t{});
    case ncclInt64: return static_cast<double>(get(std::int64_t{}));
    case ncclUint64: return static_cast<double>(get(std::uint64_t{}));
    case ncclFloat16: return __half2float(get(__half{}));
    case ncclFloat32: return get(float{});
    case ncclFloat64: return get(double{});
    case ncclBfloat16: return __bfloat162float(get(__nv_bfloat16{}));
    case ncclFloat8e4m3: return static_cast<float>(get(__nv_fp8_e4m3{}));
    case ncclFloat8e5m2: return static_cast<float>(get(__nv_fp8_e5m2{}));
    default: break;
  }
  return NAN;
}

/// A collective of NCCL's API (ncclGather and ncclScatter included).
enum class NcclCall { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll, Gather, Scatter };

inline const char* ncclCallName(NcclCall call) {
  static const char* const names[] = {"ncclAllReduce",     "ncclBroadcast", "ncclReduce", "ncclAllGather",
                                      "ncclReduceScatter", "ncclAlltoAll",  "ncclGather", "ncclScatter"};
  return names[static_cast<int>(call)];
}

inline bool ncclCallReduces(NcclCall call) {
  return call == NcclCall::AllReduce || call == NcclCall::Reduce || call == NcclCall::ReduceScatter;
}

struct NcclCase {
  NcclCall call = NcclCall::AllReduce;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  bool premul = false;        ///< a pre-multiplied sum, rank r's scalar (r % 2) + 1
  bool deviceScalar = false;  ///< premul: the scalar in device memory (ncclScalarDevice)
  std::size_t count = 1001;
  int root = 0;
  bool inPlace = false;

  std::string name() const {
    return fmt::format("{} of {} x type {} op {}{}{} root {}{}", ncclCallName(call), count, static_cast<int>(type),
                       static_cast<int>(op), premul ? " premul" : "", deviceScalar ? " (device scalar)" : "", root,
                       inPlace ? " in place" : "");
  }
};

/// Rank r's input element i: 1 or 2 where products or FP8 need tiny values, else 1..5 -- exact in every type.
inline double inputValue(const NcclCase& c, int rank, std::size_t i) {
  const bool tiny = c.op == ncclProd || c.type == ncclFloat8e4m3 || c.type == ncclFloat8e5m2;
  return tiny ? static_cast<double>((static_cast<std::size_t>(rank) + i) % 2 + 1)
              : static_cast<double>((static_cast<std::size_t>(rank) * 3 + i) % 5 + 1);
}

inline double premulScalar(int rank) {
  return static_cast<double>(rank % 2 + 1);
}

/// op over the ranks of their element i.
inline double reduced(const NcclCase& c, int nranks, std::size_t i) {
  double result = c.op == ncclProd ? 1 : c.op == ncclMax ? -1e300 : c.op == ncclMin ? 1e300 : 0;
  for (int r = 0; r < nranks; ++r) {
    const double x = inputValue(c, r, i) * (c.premul ? premulScalar(r) : 1.0);
    if (c.premul || c.op == ncclSum || c.op == ncclAvg) result += x;
    if (!c.premul && c.op == ncclProd) result *= x;
    if (!c.premul && c.op == ncclMax) result = std::max(result, x);
    if (!c.premul && c.op == ncclMin) result = std::min(result, x);
  }
  if (!c.premul && c.op == ncclAvg) {
    result = ncclTypeIsFloat(c.type) ? result / nranks : std::floor(result / nranks);
  }
  return result;
}

inline bool closeEnough(const NcclCase& c, double got, double want) {
  if (!c.premul && c.op == ncclAvg && ncclTypeIsFloat(c.type)) {
    const double relative = c.type == ncclFloat32 || c.type == ncclFloat64    ? 1e-6
                            : c.type == ncclFloat16 || c.type == ncclBfloat16 ? 1e-2
                                                                              : 0.13;  // FP8: 3 or 2 mantissa bits
    return std::fabs(got - want) <= relative * std::fabs(want);
  }
  return got == want;
}

/// One rank this process drives.
struct NcclRank {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
};

/// Runs `c` on every rank of `ranks` (inside one group when there are several) with buffers from ncclMemAlloc,
/// then checks each rank's output against the host's reference; "" when right, else what was wrong.
inline std::string runNcclCase(const NcclApi& api, const std::vector<NcclRank>& ranks, int nranks, const NcclCase& c) {
  const auto n = static_cast<std::size_t>(nranks);
  const std::size_t bytes = ncclTypeBytes(c.type);
  // Elements of the whole send and recv buffers.
  const bool wideSend =
      c.call == NcclCall::ReduceScatter || c.call == NcclCall::AllToAll || c.call == NcclCall::Scatter;
  const bool wideRecv = c.call == NcclCall::AllGather || c.call == NcclCall::AllToAll || c.call == NcclCall::Gather;
  const std::size_t sendCount = wideSend ? n * c.count : c.count;
  const std::size_t recvCount = wideRecv ? n * c.count : c.count;
  struct Buffers {
    void* sendMemory = nullptr;  // the allocations, freed at the end
    void* recvMemory = nullptr;
    void* send = nullptr;  // what the call gets
    void* recv = nullptr;
    void* scalar = nullptr;
    ncclRedOp_t op = ncclSum;
  };
  std::vector<Buffers> buffers(ranks.size());
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const NcclRank& me = ranks[k];
    PEERLINK_CUDA_CHECK(cudaSetDevice(me.device));
    Buffers& b = buffers[k];
    const std::size_t recvBytes = std::max(recvCount, sendCount) * bytes;
    api.check(api.memAlloc(&b.recvMemory, recvBytes + 64), "ncclMemAlloc");
    api.check(api.memAlloc(&b.sendMemory, sendCount * bytes + 64), "ncclMemAlloc");
    PEERLINK_CUDA_CHECK(cudaMemset(b.recvMemory, 0, recvBytes));
    b.send = b.sendMemory;
    b.recv = b.recvMemory;
    if (c.inPlace) {
      // NCCL's in-place layouts: the rank's own part of the wider buffer, or the same buffer.
      auto* whole = static_cast<unsigned char*>(b.recvMemory);
      const std::size_t own = c.count * bytes * static_cast<std::size_t>(me.rank);
      const std::size_t rootPart = c.count * bytes * static_cast<std::size_t>(c.root);
      const bool root = me.rank == c.root;
      switch (c.call) {
        case NcclCall::AllGather: b.send = whole + own; break;
        case NcclCall::ReduceScatter:
          b.send = whole;
          b.recv = whole + own;
          break;
        case NcclCall::Gather:
          if (root) b.send = whole + rootPart;
          break;
        case NcclCall::Scatter:
          if (root) {
            b.send = whole;
            b.recv = whole + rootPart;
          }
          break;
        default: b.send = whole; break;
      }
    }
    std::vector<unsigned char> input(sendCount * bytes);
    for (std::size_t i = 0; i < sendCount; ++i) setValue(c.type, input.data(), i, inputValue(c, me.rank, i));
    PEERLINK_CUDA_CHECK(cudaMemcpy(b.send, input.data(), input.size(), cudaMemcpyHostToDevice));
    b.op = c.op;
    if (c.premul) {
      unsigned char value[8] = {};
      setValue(c.type, value, 0, premulScalar(me.rank));
      void* where = value;
      if (c.deviceScalar) {
        PEERLINK_CUDA_CHECK(cudaMalloc(&b.scalar, 8));
        PEERLINK_CUDA_CHECK(cudaMemcpy(b.scalar, value, 8, cudaMemcpyHostToDevice));
        where = b.scalar;
      }
      api.check(api.redOpCreatePreMulSum(&b.op, where, c.type,
                                         c.deviceScalar ? ncclScalarDevice : ncclScalarHostImmediate, me.comm),
                "ncclRedOpCreatePreMulSum");
    }
  }
  if (ranks.size() > 1) api.check(api.groupStart(), "ncclGroupStart");
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const NcclRank& me = ranks[k];
    const Buffers& b = buffers[k];
    ncclResult_t result = ncclSuccess;
    switch (c.call) {
      case NcclCall::AllReduce:
        result = api.allReduce(b.send, b.recv, c.count, c.type, b.op, me.comm, me.stream);
        break;
      case NcclCall::Broadcast:
        result = api.broadcast(b.send, b.recv, c.count, c.type, c.root, me.comm, me.stream);
        break;
      case NcclCall::Reduce:
        result = api.reduce(b.send, b.recv, c.count, c.type, b.op, c.root, me.comm, me.stream);
        break;
      case NcclCall::AllGather: result = api.allGather(b.send, b.recv, c.count, c.type, me.comm, me.stream); break;
      case NcclCall::ReduceScatter:
        result = api.reduceScatter(b.send, b.recv, c.count, c.type, b.op, me.comm, me.stream);
        break;
      case NcclCall::AllToAll: result = api.allToAll(b.send, b.recv, c.count, c.type, me.comm, me.stream); break;
      case NcclCall::Gather: result = api.gather(b.send, b.recv, c.count, c.type, c.root, me.comm, me.stream); break;
      case NcclCall::Scatter: result = api.scatter(b.send, b.recv, c.count, c.type, c.root, me.comm, me.stream); break;
    }
    api.check(result, c.name());
    if (c.premul) api.check(api.redOpDestroy(b.op, me.comm), "ncclRedOpDestroy");  // right after the call: allowed
  }
  if (ranks.size() > 1) api.check(api.groupEnd(), "ncclGroupEnd");
  std::string problem;
  for (std::size_t k = 0; k < ranks.size() && problem.empty(); ++k) {
    const NcclRank& me = ranks[k];
    PEERLINK_CUDA_CHECK(cudaSetDevice(me.device));
    if (!finishes(me.stream, kNcclStreamSeconds)) {
      problem = fmt::format("{}: rank {}'s stream did not finish", c.name(), me.rank);
      break;
    }
    ncclResult_t async = ncclSuccess;
    api.check(api.commGetAsyncError(me.comm, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess) {
      problem = fmt::format("{}: rank {}: asynchronous error {}: {}", c.name(), me.rank, static_cast<int>(async),
                            api.getLastError(me.comm));
      break;
    }
    const bool hasOutput = (c.call != NcclCall::Reduce && c.call != NcclCall::Gather) || me.rank == c.root;
    if (!hasOutput) continue;
    std::vector<unsigned char> output(recvCount * bytes);
    PEERLINK_CUDA_CHECK(cudaMemcpy(output.data(), buffers[k].recv, output.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < recvCount && problem.empty(); ++i) {
      const std::size_t block = i / std::max<std::size_t>(c.count, 1);
      const std::size_t within = i % std::max<std::size_t>(c.count, 1);
      const std::size_t own = static_cast<std::size_t>(me.rank) * c.count;
      double want = 0;
      switch (c.call) {
        case NcclCall::AllReduce:
        case NcclCall::Reduce: want = reduced(c, nranks, i); break;
        case NcclCall::ReduceScatter: want = reduced(c, nranks, own + i); break;
        case NcclCall::Broadcast: want = inputValue(c, c.root, i); break;
        case NcclCall::AllGather:
        case NcclCall::Gather: want = inputValue(c, static_cast<int>(block), within); break;
        case NcclCall::AllToAll: want = inputValue(c, static_cast<int>(block), own + within); break;
        case NcclCall::Scatter: want = inputValue(c, c.root, own + i); break;
      }
      const double got = getValue(c.type, output.data(), i);
      if (!closeEnough(c, got, want)) {
        problem = fmt::format("{}: rank {} element {}: {} where {} was due", c.name(), me.rank, i, got, want);
      }
    }
  }
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    PEERLINK_CUDA_CHECK(cudaSetDevice(ranks[k].device));
    api.check(api.memFree(buffers[k].recvMemory), "ncclMemFree");
    api.check(api.memFree(buffers[k].sendMemory), "ncclMemFree");
    if (buffers[k].scalar != nullptr) PEERLINK_CUDA_CHECK(cudaFree(buffers[k].scalar));
  }
  return problem;
}

}  // namespace peerlink::testing
