#include "nccl_api/world.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace peerlink::nccl {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// `items` is every local rank's queue: true when each holds at least one entry.
template <typename Queues>
bool everyRankHasOne(const Queues& queues) {
  return std::all_of(queues.begin(), queues.end(), [](const auto& queue) { return !queue.empty(); });
}

}  // namespace

std::size_t grownScratchCapacity(std::size_t capacity, std::size_t bytes) {
  if (bytes <= capacity) return 0;
  const std::size_t wanted = std::max({capacity * 2, bytes, kMiB});
  return (wanted + kMiB - 1) / kMiB * kMiB;
}

NativeWorld::NativeWorld(std::shared_ptr<WorldBackend> backend, Platform& platform, std::thread::id owner)
    : backend_(std::move(backend)), platform_(platform) {
  size_ = backend_->size();
  local_ = backend_->localRanks();
  for (const int rank : local_) devices_.push_back(backend_->device(rank));
  forgotten_.resize(local_.size(), false);
  queued_.resize(local_.size());
  lastCaller_.resize(local_.size(), owner);
  scratch_.resize(local_.size());
  windows_.resize(local_.size());
  splits_.resize(local_.size());
}

NativeWorld::~NativeWorld() {
  // The communicator first: its end waits for its own kernels, which may read the scratch; the blocks then go once no
  // GPU work of the process runs, or are held for later (Platform::release).
  backend_.reset();
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    for (void* block : scratch_[i].retired) platform_.release(devices_[i], block);
    for (void* block : scratch_[i].captured) platform_.release(devices_[i], block);
    if (scratch_[i].block != nullptr) platform_.release(devices_[i], scratch_[i].block);
  }
}

std::size_t NativeWorld::indexOf(int rank) const {
  const auto found = std::find(local_.begin(), local_.end(), rank);
  if (found == local_.end()) {
    throw Error(ErrorCode::Internal, fmt::format("rank {} is not one of this process's ranks", rank));
  }
  return static_cast<std::size_t>(found - local_.begin());
}

int NativeWorld::device(int rank) const {
  return devices_[indexOf(rank)];
}

void* NativeWorld::scratchFor(std::size_t index, std::size_t bytes, cudaStream_t stream) {
  Scratch& scratch = scratch_[index];
  const int device = devices_[index];
  if (platform_.capturing(stream)) {
    scratch.captured.push_back(platform_.allocate(device, bytes));
    return scratch.captured.back();
  }
  if (const std::size_t capacity = grownScratchCapacity(scratch.capacity, bytes)) {
    void* block = platform_.allocate(device, capacity);
    if (scratch.block != nullptr) scratch.retired.push_back(scratch.block);
    scratch.block = block;
    scratch.capacity = capacity;
  }
  // The block is reused call after call: a call on another stream first waits for the last one's work.
  if (scratch.used && scratch.lastStream != stream) platform_.orderAfter(device, stream, scratch.lastStream);
  scratch.used = true;
  scratch.lastStream = stream;
  return scratch.block;
}

void NativeWorld::transform(const CollectiveCall& call, const TransformStep& step, void* scratch) {
  const auto resolve = [&](const Place& place) -> void* {
    switch (place.where) {
      case Place::Where::Send: return static_cast<unsigned char*>(const_cast<void*>(call.send)) + place.offset;
      case Place::Where::Recv: return static_cast<unsigned char*>(call.recv) + place.offset;
      case Place::Where::Scratch: return static_cast<unsigned char*>(scratch) + place.offset;
      case Place::Where::None: break;
    }
    return nullptr;
  };
  TransformArgs args;
  args.kind = step.kind;
  args.type = call.ncclType;
  args.in = resolve(step.in);
  args.out = resolve(step.out);
  args.count = step.count;
  args.divisor = size_;
  const bool scales =
      step.kind == TransformStep::Kind::Scale || (step.kind == TransformStep::Kind::Widen && step.scaled);
  if (scales && call.scalar) {
    args.scaled = true;
    args.deviceScalar = call.scalar->device;
    std::memcpy(args.hostScalar, call.scalar->value, sizeof args.hostScalar);
  }
  platform_.transform(devices_[indexOf(call.rank)], args, call.stream);
}

void NativeWorld::callBackend(const CollectiveCall& call, const void* send, void* recv) {
  const DataType type = call.plan ? call.plan->call.type : call.type;
  const ReduceOp op = call.plan ? call.plan->call.op : ReduceOp::Sum;
  const std::size_t count = call.plan ? call.plan->call.count : call.count;
  if (size_ == 1) {
    // A world of one: every collective's result is its input. As NCCL, queue nothing for a call in place and a
    // copy otherwise: peerlink's kernel there, moving nothing of use, lengthened the gaps between the application's
    // own kernels (a DDP step's backward pass in a world of one: 2.4 us against 1.4,
    // bench/results/2026-12-01-h200-world-of-one).
    if (send != recv && count > 0) {
      platform_.copy(devices_[indexOf(call.rank)], recv, send, count * dataTypeSize(type), call.stream);
    }
    return;
  }
  switch (call.collective) {
    case Collective::AllReduce: backend_->allReduce(call.rank, send, recv, count, type, op, call.stream); return;
    case Collective::Broadcast: backend_->broadcast(call.rank, send, recv, count, type, call.root, call.stream); return;
    case Collective::Reduce: backend_->reduce(call.rank, send, recv, count, type, op, call.root, call.stream); return;
    case Collective::AllGather: backend_->allGather(call.rank, send, recv, count, type, call.stream); return;
    case Collective::ReduceScatter:
      backend_->reduceScatter(call.rank, send, recv, count, type, op, call.stream);
      return;
    case Collective::AllToAll: backend_->allToAll(call.rank, send, recv, count, type, call.stream); return;
    case Collective::SendRecv: break;
  }
  throw Error(ErrorCode::Internal, "NativeWorld: send/recv is not a collective set");
}

void NativeWorld::issue(const CollectiveCall& call, std::vector<Issued>& issued) {
  if (!call.plan) {
    callBackend(call, call.send, call.recv);
    return;
  }
  const CallPlan& plan = *call.plan;
  void* scratch = plan.scratchBytes > 0 ? scratchFor(indexOf(call.rank), plan.scratchBytes, call.stream) : nullptr;
  for (const TransformStep& step : plan.before) transform(call, step, scratch);
  const auto pointer = [&](const Place& place) -> void* {
    switch (place.where) {
      case Place::Where::Send: return const_cast<void*>(call.send);
      case Place::Where::Recv: return call.recv;
      case Place::Where::Scratch: return static_cast<unsigned char*>(scratch) + place.offset;
      case Place::Where::None: break;
    }
    return nullptr;
  };
  callBackend(call, pointer(plan.call.send), pointer(plan.call.recv));
  if (!plan.after.empty()) issued.push_back({&call, scratch});
}

void NativeWorld::runAfter(const Issued& issued) {
  for (const TransformStep& step : issued.call->plan->after) transform(*issued.call, step, issued.scratch);
}

void NativeWorld::abort(int rank) noexcept {
  backend_->abort();
  try {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_.empty()) stopped_ = fmt::format("rank {} aborted the communicator (ncclCommAbort)", rank);
    for (auto& queue : queued_) queue.clear();
  } catch (...) {  // no memory for the text: peerlink's own abort still fails the calls
  }
}

void NativeWorld::forget(int rank) {
  const std::lock_guard<std::mutex> lock(mutex_);
  forgotten_[indexOf(rank)] = true;
  for (auto& queue : queued_) queue.clear();
}

void NativeWorld::submit(const CollectiveCall& call) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t index = indexOf(call.rank);
  if (!stopped_.empty()) throw Error(ErrorCode::RemoteError, stopped_);
  for (std::size_t i = 0; i < local_.size(); ++i) {
    if (forgotten_[i]) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("rank {} of this process was destroyed: a collective needs a call from every rank, so "
                              "this one cannot complete",
                              local_[i]));
    }
  }
  queued_[index].push_back(call);
  lastCaller_[index] = std::this_thread::get_id();
  while (everyRankHasOne(queued_)) {
    std::vector<CollectiveCall> set;
    for (auto& queue : queued_) {
      set.push_back(queue.front());
      queue.pop_front();
    }
    std::vector<Issued> withAfter;
    try {
      for (const CollectiveCall& member : set) issue(member, withAfter);
      // peerlink launched the set at its last call: what comes after goes behind those kernels.
      for (const Issued& member : withAfter) runAfter(member);
    } catch (...) {
      for (auto& queue : queued_) queue.clear();
      throw;
    }
  }
}

std::string NativeWorld::abandonUnmatchedBy(std::thread::id caller) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int> waiting;
  std::vector<int> missing;
  for (std::size_t i = 0; i < local_.size(); ++i) {
    if (!queued_[i].empty()) {
      waiting.push_back(local_[i]);
    } else {
      if (lastCaller_[i] != caller) return {};  // another thread drives this rank: it may still call
      missing.push_back(local_[i]);
    }
  }
  if (waiting.empty()) return {};
  for (auto& queue : queued_) queue.clear();
  return fmt::format(
      "ranks {} called a collective that ranks {} of this process never called; a set needs one "
      "call per local rank (inside ncclGroupStart/End when one thread drives several); the calls "
      "were dropped",
      fmt::join(waiting, ", "), fmt::join(missing, ", "));
}

void NativeWorld::requestWindow(int rank, void* buffer, std::size_t bytes, const std::shared_ptr<WindowSlot>& slot) {
  const std::lock_guard<std::mutex> lock(mutex_);
  windows_[indexOf(rank)].push_back({buffer, bytes, slot});
  while (everyRankHasOne(windows_)) {
    std::vector<WindowRequest> set;
    for (auto& queue : windows_) {
      set.push_back(queue.front());
      queue.pop_front();
    }
    std::vector<void*> buffers;
    std::vector<std::size_t> sizes;
    for (const WindowRequest& request : set) {
      buffers.push_back(request.buffer);
      sizes.push_back(request.bytes);
    }
    try {
      const int id = backend_->registerWindow(buffers, sizes);
      for (const WindowRequest& request : set) {
        request.slot->id = id;
        request.slot->done = true;
      }
    } catch (const std::exception& error) {
      for (const WindowRequest& request : set) {
        request.slot->failure = failureOf(error, "ncclCommWindowRegister");
        request.slot->done = true;
      }
      throw;
    }
  }
}

void NativeWorld::requestWindowRemoval(int rank, int id) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto entry =
      std::find_if(removals_.begin(), removals_.end(), [&](const auto& removal) { return removal.first == id; });
  if (entry == removals_.end()) {
    removals_.emplace_back(id, std::vector<bool>(local_.size(), false));
    entry = removals_.end() - 1;
  }
  entry->second[indexOf(rank)] = true;
  if (std::all_of(entry->second.begin(), entry->second.end(), [](bool asked) { return asked; })) {
    removals_.erase(entry);
    backend_->deregisterWindow(id);
  }
}

void NativeWorld::requestSplit(int rank, int color, int key, const std::shared_ptr<SplitSlot>& slot) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t index = indexOf(rank);
  if (splits_[index]) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("ncclCommSplit: rank {} asked again before the other ranks of this process split", rank));
  }
  splits_[index] = SplitRequest{color, key, slot};
  if (std::all_of(splits_.begin(), splits_.end(), [](const auto& request) { return request.has_value(); })) {
    completeSplit();
  }
}

void NativeWorld::completeSplit() {
  std::vector<SplitRequest> requests;
  for (auto& request : splits_) {
    requests.push_back(*request);
    request.reset();
  }
  std::vector<int> colors;
  std::vector<int> keys;
  for (const SplitRequest& request : requests) {
    colors.push_back(request.color);
    keys.push_back(request.key);
  }
  try {
    const std::vector<std::shared_ptr<WorldBackend>> made = backend_->split(colors, keys);
    // One shim world per new communicator; its local ranks are ours of that color ordered by (key, old rank), as
    // peerlink ranks the new world.
    std::map<WorldBackend*, std::shared_ptr<NativeWorld>> worlds;
    std::map<WorldBackend*, std::vector<std::size_t>> members;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (made[i] == nullptr) continue;
      if (!worlds.count(made[i].get()))
        worlds[made[i].get()] = std::make_shared<NativeWorld>(made[i], platform_, std::this_thread::get_id());
      members[made[i].get()].push_back(i);
    }
    for (auto& [backend, indexes] : members) {
      std::stable_sort(indexes.begin(), indexes.end(),
                       [&](std::size_t a, std::size_t b) { return requests[a].key < requests[b].key; });
      const std::shared_ptr<NativeWorld>& world = worlds[backend];
      for (std::size_t j = 0; j < indexes.size(); ++j) {
        const std::shared_ptr<SplitSlot>& slot = requests[indexes[j]].slot;
        if (slot == nullptr) continue;
        slot->world = world;
        slot->rank = world->localRanks()[j];
      }
    }
    for (const SplitRequest& request : requests) {
      if (request.slot != nullptr) request.slot->done = true;
    }
  } catch (const std::exception& error) {
    for (const SplitRequest& request : requests) {
      if (request.slot == nullptr) continue;
      request.slot->failure = failureOf(error, "ncclCommSplit");
      request.slot->done = true;
    }
    throw;
  }
}

}  // namespace peerlink::nccl
