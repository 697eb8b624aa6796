// Checks on collective calls (comm_validation.hpp).
#include "coll/comm_validation.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/driver_api.hpp"
#include "core/pointer_kind.hpp"
#include "peerlink/error.hpp"
#include "transport/copy_validation.hpp"

namespace peerlink::coll {
namespace {

[[noreturn]] void fail(const CommState& state, const CallArgs& call, const std::string& problem) {
  throw Error(ErrorCode::InvalidUsage, callLabel(state, call) + ": " + problem);
}

// A buffer of `bytes` the call uses: non-null, element-aligned, memory of the rank's GPU (or managed).
void checkBuffer(const CommState& state, const CallArgs& call, const void* pointer, std::size_t bytes,
                 const char* what) {
  if (bytes == 0) return;
  const int device = state.devices[static_cast<std::size_t>(call.rank)];
  if (pointer == nullptr) fail(state, call, fmt::format("{} buffer is null for {} bytes", what, bytes));
  if (reinterpret_cast<std::uintptr_t>(pointer) % dataTypeSize(call.type) != 0) {
    fail(state, call,
         fmt::format("{} buffer {} is not aligned to its {}-byte {} elements", what, pointer, dataTypeSize(call.type),
                     dataTypeName(call.type)));
  }
  const PointerKind kind = pointerKind(pointer);
  if (kind.type == cudaMemoryTypeUnregistered) {
    fail(state, call,
         fmt::format("{} buffer {} is not CUDA memory (plain host memory or a stale pointer)", what, pointer));
  }
  if (kind.type == cudaMemoryTypeHost) {
    fail(state, call, fmt::format("{} buffer {} is pinned host memory, not memory of GPU {}", what, pointer, device));
  }
  if (kind.type == cudaMemoryTypeDevice && kind.device != device) {
    fail(state, call,
         fmt::format("{} buffer {} belongs to GPU {}, not to the rank's GPU {}", what, pointer, kind.device, device));
  }
}

// send and recv either the in-place pair (send == recv + inPlaceOffset bytes) or disjoint.
void checkAliasing(const CommState& state, const CallArgs& call, std::size_t sendBytes, std::size_t recvBytes,
                   bool inPlaceAllowed, std::size_t inPlaceOffset) {
  if (sendBytes == 0 || recvBytes == 0 || call.send == nullptr || call.recv == nullptr) return;
  const auto send = reinterpret_cast<std::uintptr_t>(call.send);
  const auto recv = reinterpret_cast<std::uintptr_t>(call.recv);
  if (inPlaceAllowed && send == recv + inPlaceOffset) return;
  const bool overlap = send < recv ? recv - send < sendBytes : send - recv < recvBytes;
  if (!overlap) return;
  if (inPlaceAllowed) {
    fail(state, call,
         fmt::format("send buffer {} and recv buffer {} overlap without being the in-place pair (send == recv + {} "
                     "bytes)",
                     call.send, call.recv, inPlaceOffset));
  }
  fail(state, call,
       fmt::format("send buffer {} and recv buffer {} overlap; {} needs disjoint buffers", call.send, call.recv,
                   callName(call.collective)));
}

// The stream's capture status, asked of the driver. Inside an eager set on 4x H100 the runtime's stream
// check (cudaStreamIsCapturing, cudaStreamGetDevice) took 390-450 ns per call and the set's capture check
// 640-780 ns, several times what the same queries cost in a loop; in a loop the driver's take a third of the
// runtime's time. The runtime answers where the driver refuses (the null
// stream on a thread with no current context, say); nullopt where neither can.
std::optional<cudaStreamCaptureStatus> captureStatus(cudaStream_t stream) {
  static_assert(static_cast<int>(CU_STREAM_CAPTURE_STATUS_ACTIVE) == static_cast<int>(cudaStreamCaptureStatusActive) &&
                    static_cast<int>(CU_STREAM_CAPTURE_STATUS_INVALIDATED) ==
                        static_cast<int>(cudaStreamCaptureStatusInvalidated),
                "the driver's and the runtime's capture statuses have the same values");
  CUstreamCaptureStatus driverStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driverApi().streamIsCapturing(reinterpret_cast<CUstream>(stream), &driverStatus) == CUDA_SUCCESS) {
    return static_cast<cudaStreamCaptureStatus>(driverStatus);
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t error = cudaStreamIsCapturing(stream, &status);
  cudaGetLastError();
  if (error != cudaSuccess) return std::nullopt;
  return status;
}

void checkStream(const CommState& state, const CallArgs& call) {
  if (call.stream == nullptr || call.stream == cudaStreamLegacy || call.stream == cudaStreamPerThread) return;
  const auto rank = static_cast<std::size_t>(call.rank);
  const int device = state.devices[rank];
  // cudaStreamGetDevice is refused while the stream is being captured (cudaErrorStreamCaptureUnsupported
  // on CUDA 13, measured on the 4xH200), and a refused call can invalidate the capture: a capturing stream
  // was already checked by the eager calls that preceded the capture, or fails when the graph is launched.
  const std::optional<cudaStreamCaptureStatus> capture = captureStatus(call.stream);
  if (capture && *capture != cudaStreamCaptureStatusNone) return;
  // A stream of the rank's GPU's primary context (every stream the runtime makes) passes on the driver's
  // answer alone; any other, or a refusal, goes to the runtime, which names the stream's GPU.
  CUcontext context = nullptr;
  const CUcontext own = rank < state.ranks.size() ? state.ranks[rank].context : nullptr;
  if (own != nullptr && driverApi().streamGetCtx(reinterpret_cast<CUstream>(call.stream), &context) == CUDA_SUCCESS &&
      context == own) {
    return;
  }
  int streamDevice = -1;
  const cudaError_t status = cudaStreamGetDevice(call.stream, &streamDevice);
  cudaGetLastError();
  if (status != cudaSuccess) fail(state, call, "the stream is not a valid CUDA stream (" + cudaErrorText(status) + ")");
  if (streamDevice != device) {
    fail(state, call, fmt::format("the stream belongs to GPU {}, not to the rank's GPU {}", streamDevice, device));
  }
}

}  // namespace

bool streamCapturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (const auto status = captureStatus(stream)) {
    capture = *status;
  } else {
    PEERLINK_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));  // throws the runtime's error
  }
  return capture == cudaStreamCaptureStatusActive;
}

const char* callName(Collective collective, bool isSend) {
  switch (collective) {
    case Collective::AllReduce: return "allReduce";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
    case Collective::AllGather: return "allGather";
    case Collective::ReduceScatter: return "reduceScatter";
    case Collective::AllToAll: return "allToAll";
    case Collective::SendRecv: return isSend ? "send" : "recv";
  }
  return "?";
}

std::string callLabel(const CommState& state, const CallArgs& call) {
  if (call.rank < 0 || call.rank >= state.nranks) {
    return fmt::format("{} on rank {}", callName(call.collective, call.isSend), call.rank);
  }
  return fmt::format("{} on rank {} (GPU {})", callName(call.collective, call.isSend), call.rank,
                     state.devices[static_cast<std::size_t>(call.rank)]);
}

void validateCall(const CommState& state, const CallArgs& call) {
  if (call.rank < 0 || call.rank >= state.nranks) {
    fail(state, call,
         fmt::format("rank {} is out of range (the communicator has ranks 0..{})", call.rank, state.nranks - 1));
  }
  if (!state.world.isLocal(call.rank)) {
    fail(state, call,
         fmt::format("rank {} lives in another process ({}); call it there", call.rank,
                     state.world.describe(call.rank)));
  }
  checkStream(state, call);
  if (reduces(call.collective) && !reduceOpSupported(call.type, call.op)) {
    fail(state, call,
         fmt::format("{} is not defined for {} (avg is for floating-point types only)", reduceOpName(call.op),
                     dataTypeName(call.type)));
  }
  if (hasRoot(call.collective) && (call.root < 0 || call.root >= state.nranks)) {
    fail(state, call, fmt::format("root {} is out of range (ranks 0..{})", call.root, state.nranks - 1));
  }
  const auto n = static_cast<std::size_t>(state.nranks);
  const std::size_t size = dataTypeSize(call.type);
  if (call.count > std::numeric_limits<std::size_t>::max() / (size * n)) {
    fail(state, call, fmt::format("count {} overflows the byte size", call.count));
  }
  const std::size_t bytes = call.count * size;
  const bool isRoot = call.rank == call.root;
  switch (call.collective) {
    case Collective::AllReduce:
      checkBuffer(state, call, call.send, bytes, "send");
      if (call.recv != call.send) checkBuffer(state, call, call.recv, bytes, "recv");  // in place: checked
      checkAliasing(state, call, bytes, bytes, true, 0);
      break;
    case Collective::Broadcast:
      if (isRoot) checkBuffer(state, call, call.send, bytes, "send");
      checkBuffer(state, call, call.recv, bytes, "recv");
      if (isRoot) checkAliasing(state, call, bytes, bytes, true, 0);
      break;
    case Collective::Reduce:
      checkBuffer(state, call, call.send, bytes, "send");
      if (isRoot) checkBuffer(state, call, call.recv, bytes, "recv");
      if (isRoot) checkAliasing(state, call, bytes, bytes, true, 0);
      break;
    case Collective::AllGather:
      checkBuffer(state, call, call.send, bytes, "send");
      checkBuffer(state, call, call.recv, bytes * n, "recv");
      checkAliasing(state, call, bytes, bytes * n, true, bytes * static_cast<std::size_t>(call.rank));
      break;
    case Collective::ReduceScatter: {
      checkBuffer(state, call, call.send, bytes * n, "send");
      checkBuffer(state, call, call.recv, bytes, "recv");
      // In place: recv == send + rank * bytes, i.e. send == recv - rank * bytes.
      const auto send = reinterpret_cast<std::uintptr_t>(call.send);
      const auto recv = reinterpret_cast<std::uintptr_t>(call.recv);
      if (bytes == 0 || recv != send + bytes * static_cast<std::size_t>(call.rank)) {
        checkAliasing(state, call, bytes * n, bytes, false, 0);
      }
      break;
    }
    case Collective::AllToAll:
      checkBuffer(state, call, call.send, bytes * n, "send");
      checkBuffer(state, call, call.recv, bytes * n, "recv");
      checkAliasing(state, call, bytes * n, bytes * n, false, 0);
      break;
    case Collective::SendRecv:
      if (call.peer < 0 || call.peer >= state.nranks) {
        fail(state, call, fmt::format("peer {} is out of range (ranks 0..{})", call.peer, state.nranks - 1));
      }

      checkBuffer(state, call, call.isSend ? call.send : call.recv, bytes, "buffer");
      break;
  }
}

void checkStreamsApart(const CommState& state, const CallArgs* const* calls, std::size_t count) {
  // The null stream is the GPU's legacy default stream whichever way it is named.
  const auto streamOf = [](const CallArgs& call) { return call.stream == nullptr ? cudaStreamLegacy : call.stream; };
  for (std::size_t a = 0; a < count; ++a) {
    for (std::size_t b = a + 1; b < count; ++b) {
      const CallArgs& x = *calls[a];
      const CallArgs& y = *calls[b];
      const int device = state.devices[static_cast<std::size_t>(x.rank)];
      if (device < 0 || device != state.devices[static_cast<std::size_t>(y.rank)] || streamOf(x) != streamOf(y)) {
        continue;  // another process's rank, another GPU or another stream
      }
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: ranks {} and {} both run on GPU {} and were given the same stream ({}): their "
                              "kernels would run one after the other, each waiting for the other until the "
                              "deadline; give each rank on a GPU its own stream; nothing was launched",
                              callLabel(state, y), x.rank, y.rank, device,
                              streamOf(x) == cudaStreamLegacy ? "the null stream" : "one stream"));
    }
  }
}

bool checkSetMatches(const CommState& state, const std::vector<CallArgs>& set) {
  const CallArgs& first = set[static_cast<std::size_t>(state.localRanks().front())];
  std::array<const CallArgs*, kernels::kCollMaxRanks> local{};  // no allocation on an eager set's path
  std::size_t locals = 0;
  for (const int rank : state.localRanks()) local[locals++] = &set[static_cast<std::size_t>(rank)];
  checkStreamsApart(state, local.data(), locals);
  int firstCapturing = -1;
  for (const int rank : state.localRanks()) {
    const CallArgs& call = set[static_cast<std::size_t>(rank)];
    const auto mismatch = [&](const std::string& what, const std::string& mine, const std::string& theirs) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: its {} ({}) differs from rank {}'s {} ({}); calls are matched in order, so the "
                              "ranks' calls of this set disagree; nothing was launched",
                              callLabel(state, call), what, mine, first.rank, what, theirs));
    };
    if (call.collective != first.collective) {
      mismatch("collective", callName(call.collective), callName(first.collective));
    }
    if (call.count != first.count) mismatch("count", std::to_string(call.count), std::to_string(first.count));
    if (call.type != first.type) mismatch("data type", dataTypeName(call.type), dataTypeName(first.type));
    const bool reduction = reduces(call.collective);
    if (reduction && call.op != first.op) mismatch("op", reduceOpName(call.op), reduceOpName(first.op));
    if (hasRoot(call.collective) && call.root != first.root) {
      mismatch("root", std::to_string(call.root), std::to_string(first.root));
    }
    const int capturing = streamCapturing(call.stream) ? 1 : 0;
    if (firstCapturing < 0) firstCapturing = capturing;
    if (capturing != firstCapturing) {
      throw Error(
          ErrorCode::InvalidUsage,
          fmt::format("{}: its stream is {}being captured into a graph while rank {}'s is {}; capture every "
                      "rank's stream of a collective or none",
                      callLabel(state, call), capturing ? "" : "not ", first.rank, firstCapturing ? "" : "not"));
    }
  }
  return firstCapturing == 1;
}

std::vector<SendRecvPair> matchSendRecvs(const CommState& state, const std::vector<CallArgs>& calls) {
  std::vector<SendRecvPair> pairs;
  std::vector<bool> used(calls.size(), false);
  for (std::size_t s = 0; s < calls.size(); ++s) {
    if (!calls[s].isSend) continue;
    const CallArgs& send = calls[s];
    std::size_t match = calls.size();
    for (std::size_t r = 0; r < calls.size(); ++r) {
      if (!used[r] && !calls[r].isSend && calls[r].rank == send.peer && calls[r].peer == send.rank) {
        match = r;
        break;
      }
    }
    if (match == calls.size()) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: no matching recv on rank {} from rank {}; nothing of the group was launched",
                              callLabel(state, send), send.peer, send.rank));
    }
    const CallArgs& recv = calls[match];
    if (recv.count != send.count || recv.type != send.type) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: sends {} x {} to rank {}, whose recv expects {} x {}; nothing was launched",
                              callLabel(state, send), send.count, dataTypeName(send.type), send.peer, recv.count,
                              dataTypeName(recv.type)));
    }
    used[s] = used[match] = true;
    pairs.push_back({send, recv});
  }
  for (std::size_t r = 0; r < calls.size(); ++r) {
    if (!used[r]) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("{}: no matching send from rank {} to rank {}; nothing of the group was launched",
                              callLabel(state, calls[r]), calls[r].peer, calls[r].rank));
    }
  }
  return pairs;
}

bool checkGroupCapture(const CommState& state, const std::vector<SendRecvPair>& pairs) {
  std::array<bool, kernels::kCollMaxRanks> checked{};  // no allocation on an eager group's path
  const CallArgs* first = nullptr;
  bool firstCapturing = false;
  const auto check = [&](const CallArgs& call) {
    bool& done = checked[static_cast<std::size_t>(call.rank)];
    if (done) return;  // a rank gives one stream to all its calls of a group (launchSendRecvPairs checks)
    done = true;
    const bool capturing = streamCapturing(call.stream);
    if (first == nullptr) {
      first = &call;
      firstCapturing = capturing;
    } else if (capturing != firstCapturing) {
      throw Error(
          ErrorCode::InvalidUsage,
          fmt::format("{}: its stream is {}being captured into a graph while rank {}'s is {}; capture the "
                      "streams of every rank in a send/recv group or none; nothing of the group was launched",
                      callLabel(state, call), capturing ? "" : "not ", first->rank, firstCapturing ? "" : "not"));
    }
  };
  std::array<const CallArgs*, kernels::kCollMaxRanks> byRank{};  // one call per rank
  std::size_t ranks = 0;
  for (const SendRecvPair& pair : pairs) {
    for (const CallArgs* call : {&pair.send, &pair.recv}) {
      if (!checked[static_cast<std::size_t>(call->rank)]) byRank[ranks++] = call;
      check(*call);
    }
  }
  checkStreamsApart(state, byRank.data(), ranks);
  return firstCapturing;
}

}  // namespace peerlink::coll
