// peerlink::Communicator: the public API over the communicator's state. Each call is checked on its own,
// queued for its rank, and when every rank has a call queued the set is matched and launched
// (comm_validation, comm_launch). Send/recv calls are paired at groupEnd(), or, outside a group, as soon as
// the partner's call arrives. Any error thrown by a call discards every call not launched yet, so the
// communicator is ready for a fresh set afterwards.
#include "peerlink/communicator.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "coll/comm_health.hpp"
#include "coll/comm_launch.hpp"
#include "coll/comm_setup.hpp"
#include "coll/comm_state.hpp"
#include "coll/comm_validation.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

// An NVTX range named after the call, with the rank as its payload (a no-op without a tool attached).
class NvtxRange {
 public:
  NvtxRange(const char* name, int rank) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    attributes.payload.iValue = rank;
    nvtxRangePushEx(&attributes);
  }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

const char* rangeName(Collective collective, bool isSend) {
  switch (collective) {
    case Collective::AllReduce: return "peerlink allReduce";
    case Collective::Broadcast: return "peerlink broadcast";
    case Collective::Reduce: return "peerlink reduce";
    case Collective::AllGather: return "peerlink allGather";
    case Collective::ReduceScatter: return "peerlink reduceScatter";
    case Collective::AllToAll: return "peerlink allToAll";
    case Collective::SendRecv: return isSend ? "peerlink send" : "peerlink recv";
  }
  return "peerlink";
}

void discardPending(coll::CommState& state) {
  for (auto& queue : state.pending) queue.clear();
  state.group.clear();
  state.loose.clear();
}

// Runs `body`; on any error discards what is not launched yet, then rethrows.
template <typename Fn>
void discardingOnError(coll::CommState& state, Fn&& body) {
  try {
    body();
  } catch (...) {
    discardPending(state);
    throw;
  }
}

void submitCollective(coll::CommState& state, const coll::CallArgs& call) {
  coll::throwIfFailed(state);
  coll::validateCall(state, call);
  state.pending[static_cast<std::size_t>(call.rank)].push_back(call);
  for (;;) {
    for (const auto& queue : state.pending) {
      if (queue.empty()) return;
    }
    std::vector<coll::CallArgs> set;
    set.reserve(state.pending.size());
    for (auto& queue : state.pending) {
      set.push_back(queue.front());
      queue.pop_front();
    }
    const bool capturing = coll::checkSetMatches(state, set);
    coll::launchCollectiveSet(state, set, capturing);
  }
}

void submitPointToPoint(coll::CommState& state, const coll::CallArgs& call) {
  coll::throwIfFailed(state);
  coll::validateCall(state, call);
  if (state.groupDepth > 0) {
    state.group.push_back(call);
    return;
  }
  // Outside a group: the oldest waiting partner call, if any, completes a group of two.
  const auto partner = std::find_if(state.loose.begin(), state.loose.end(), [&](const coll::CallArgs& other) {
    return other.isSend != call.isSend && other.rank == call.peer && other.peer == call.rank;
  });
  if (partner == state.loose.end()) {
    state.loose.push_back(call);
    return;
  }
  const std::vector<coll::CallArgs> pair = {*partner, call};
  state.loose.erase(partner);
  coll::launchSendRecvPairs(state, coll::matchSendRecvs(state, pair));
}

}  // namespace

struct Communicator::State {
  std::mutex mutex;  // calls may come from one thread per rank
  coll::CommState comm;
};

Communicator::Communicator(const std::vector<int>& devices, Params params) : state_(std::make_unique<State>()) {
  coll::setupCommunicator(state_->comm, devices, params);
}

Communicator::~Communicator() {
  if (state_) coll::releaseCommunicator(state_->comm);
}

int Communicator::size() const noexcept {
  return state_->comm.nranks;
}

int Communicator::device(int rank) const {
  if (rank < 0 || rank >= state_->comm.nranks) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("Communicator::device: rank {} is out of range (ranks 0..{})",
                                                     rank, state_->comm.nranks - 1));
  }
  return state_->comm.devices[static_cast<std::size_t>(rank)];
}

namespace {

void submit(std::mutex& mutex, coll::CommState& state, const coll::CallArgs& call) {
  const NvtxRange range(rangeName(call.collective, call.isSend), call.rank);
  const std::lock_guard<std::mutex> lock(mutex);
  discardingOnError(state, [&] {
    if (call.collective == Collective::SendRecv) {
      submitPointToPoint(state, call);
    } else {
      submitCollective(state, call);
    }
  });
}

coll::CallArgs makeCall(Collective which, int rank, const void* send, void* recv, std::size_t count, DataType type,
                        ReduceOp op, int root, cudaStream_t stream) {
  coll::CallArgs call;
  call.collective = which;
  call.rank = rank;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.type = type;
  call.op = op;
  call.root = root;
  call.stream = stream;
  return call;
}

}  // namespace

void Communicator::allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             cudaStream_t stream) {
  submit(state_->mutex, state_->comm, makeCall(Collective::AllReduce, rank, send, recv, count, type, op, 0, stream));
}

void Communicator::broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                             cudaStream_t stream) {
  submit(state_->mutex, state_->comm,
         makeCall(Collective::Broadcast, rank, send, recv, count, type, ReduceOp::Sum, root, stream));
}

void Communicator::reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                          int root, cudaStream_t stream) {
  submit(state_->mutex, state_->comm, makeCall(Collective::Reduce, rank, send, recv, count, type, op, root, stream));
}

void Communicator::allGather(int rank, const void* send, void* recv, std::size_t sendCount, DataType type,
                             cudaStream_t stream) {
  submit(state_->mutex, state_->comm,
         makeCall(Collective::AllGather, rank, send, recv, sendCount, type, ReduceOp::Sum, 0, stream));
}

void Communicator::reduceScatter(int rank, const void* send, void* recv, std::size_t recvCount, DataType type,
                                 ReduceOp op, cudaStream_t stream) {
  submit(state_->mutex, state_->comm,
         makeCall(Collective::ReduceScatter, rank, send, recv, recvCount, type, op, 0, stream));
}

void Communicator::allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type,
                            cudaStream_t stream) {
  submit(state_->mutex, state_->comm,
         makeCall(Collective::AllToAll, rank, send, recv, count, type, ReduceOp::Sum, 0, stream));
}

void Communicator::send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  coll::CallArgs call = makeCall(Collective::SendRecv, rank, buffer, nullptr, count, type, ReduceOp::Sum, 0, stream);
  call.peer = peer;
  call.isSend = true;
  submit(state_->mutex, state_->comm, call);
}

void Communicator::recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  coll::CallArgs call = makeCall(Collective::SendRecv, rank, nullptr, buffer, count, type, ReduceOp::Sum, 0, stream);
  call.peer = peer;
  call.isSend = false;
  submit(state_->mutex, state_->comm, call);
}

void Communicator::groupStart() {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  ++state_->comm.groupDepth;
}

void Communicator::groupEnd() {
  const NvtxRange range("peerlink groupEnd", -1);
  const std::lock_guard<std::mutex> lock(state_->mutex);
  coll::CommState& comm = state_->comm;
  if (comm.groupDepth == 0) throw Error(ErrorCode::InvalidUsage, "groupEnd: no group is open (groupStart first)");
  if (--comm.groupDepth > 0) return;
  std::vector<coll::CallArgs> calls;
  calls.swap(comm.group);
  if (calls.empty()) return;
  discardingOnError(comm, [&] { coll::launchSendRecvPairs(comm, coll::matchSendRecvs(comm, calls)); });
}

std::string Communicator::describeChoice(Collective collective, std::size_t bytes) const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  const CollectiveChoice choice = coll::callChoice(state_->comm, collective, bytes, Fact::No, Fact::Yes);
  return std::string(algorithmName(choice.algorithm)) + " (" + kernelName(choice.kernel) + "): " + reasonText(choice);
}

void Communicator::checkHealth() {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  coll::throwIfFailed(state_->comm);
}

}  // namespace peerlink
