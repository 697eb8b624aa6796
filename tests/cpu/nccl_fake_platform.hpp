// A fake of what the NCCL API's Shim drives (nccl_api/backend.hpp), for CPU tests: worlds and the platform record
// every call, in order, in one log the test reads; creation can be made to fail or to wait, or to end in the verdict
// of a rendezvous root that may forward. A fake real NCCL (a RealNccl of free functions over static state) stands in
// for what is forwarded.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/unique_id.hpp"
#include "bootstrap/verdict.hpp"
#include "nccl_api/shim.hpp"

namespace peerlink::nccl::testing {

/// One recorded call: `what` ("allReduce", "transform Widen", "groupEnd", ...) and its arguments.
struct Event {
  explicit Event(std::string what_, int world_ = -1, int rank_ = -1, const void* send_ = nullptr,
                 const void* recv_ = nullptr, std::size_t count_ = 0, DataType type_ = DataType::U8,
                 ReduceOp op_ = ReduceOp::Sum, int root_ = -1)
      : what(std::move(what_)),
        world(world_),
        rank(rank_),
        send(send_),
        recv(recv_),
        count(count_),
        type(type_),
        op(op_),
        root(root_) {}
  std::string what;
  int world = -1;  ///< which FakeWorld (creation order), -1 for the platform's own
  int rank = -1;
  const void* send = nullptr;
  const void* recv = nullptr;
  std::size_t count = 0;
  DataType type = DataType::U8;
  ReduceOp op = ReduceOp::Sum;
  int root = -1;  ///< root, or peer of send/recv
  TransformArgs transform;
};

struct EventLog {
  std::mutex mutex;
  std::vector<Event> events;
  void add(Event event) {
    const std::lock_guard<std::mutex> lock(mutex);
    events.push_back(std::move(event));
  }
  std::vector<Event> take() {
    const std::lock_guard<std::mutex> lock(mutex);
    std::vector<Event> taken;
    taken.swap(events);
    return taken;
  }
  std::vector<std::string> names() {
    std::vector<std::string> list;
    for (const Event& event : take())
      list.push_back(event.what + (event.rank >= 0 ? " r" + std::to_string(event.rank) : ""));
    return list;
  }
};

class FakeWorld : public WorldBackend {
 public:
  FakeWorld(std::shared_ptr<EventLog> log, int id, int nranks, std::vector<int> ranks, std::vector<int> devices)
      : log_(std::move(log)), id_(id), nranks_(nranks), ranks_(std::move(ranks)), devices_(std::move(devices)) {}

  int size() const override { return nranks_; }
  std::vector<int> localRanks() const override { return ranks_; }
  int device(int rank) const override {
    const auto found = std::find(ranks_.begin(), ranks_.end(), rank);
    if (found == ranks_.end()) throw Error(ErrorCode::InvalidUsage, "not a local rank");
    return devices_[static_cast<std::size_t>(found - ranks_.begin())];
  }
  void allReduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 cudaStream_t) override {
    if (insideAllReduce) insideAllReduce();
    record(Event("allReduce", id_, rank, send, recv, count, type, op, -1));
  }
  void broadcast(int rank, const void* send, void* recv, std::size_t count, DataType type, int root,
                 cudaStream_t) override {
    record(Event("broadcast", id_, rank, send, recv, count, type, ReduceOp::Sum, root));
  }
  void reduce(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              cudaStream_t) override {
    record(Event("reduce", id_, rank, send, recv, count, type, op, root));
  }
  void allGather(int rank, const void* send, void* recv, std::size_t count, DataType type, cudaStream_t) override {
    record(Event("allGather", id_, rank, send, recv, count, type, ReduceOp::Sum, -1));
  }
  void reduceScatter(int rank, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     cudaStream_t) override {
    record(Event("reduceScatter", id_, rank, send, recv, count, type, op, -1));
  }
  void allToAll(int rank, const void* send, void* recv, std::size_t count, DataType type, cudaStream_t) override {
    record(Event("allToAll", id_, rank, send, recv, count, type, ReduceOp::Sum, -1));
  }
  void send(int rank, const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t) override {
    record(Event("send", id_, rank, buffer, nullptr, count, type, ReduceOp::Sum, peer));
  }
  void recv(int rank, void* buffer, std::size_t count, DataType type, int peer, cudaStream_t) override {
    record(Event("recv", id_, rank, nullptr, buffer, count, type, ReduceOp::Sum, peer));
  }
  void groupStart() override { record(Event("groupStart", id_)); }
  void groupEnd() override { record(Event("groupEnd", id_)); }
  int registerWindow(const std::vector<void*>& buffers, const std::vector<std::size_t>& bytes) override {
    record(Event("registerWindow", id_, -1, buffers.empty() ? nullptr : buffers.front(),
                 buffers.size() > 1 ? buffers[1] : nullptr, bytes.empty() ? 0 : bytes.front()));
    return nextWindow_++;
  }
  void deregisterWindow(int window) override {
    record(Event("deregisterWindow", id_, -1, nullptr, nullptr, 0, DataType::U8, ReduceOp::Sum, window));
  }
  std::optional<Error> asyncError() override { return asyncError_; }
  std::vector<std::shared_ptr<WorldBackend>> split(const std::vector<int>& colors,
                                                   const std::vector<int>& keys) override;
  void abort() noexcept override {
    {
      const std::lock_guard<std::mutex> lock(abortMutex_);
      aborted_ = true;
    }
    abortSeen_.notify_all();
    log_->add(Event("abort", id_));
  }

  std::optional<Error> asyncError_;
  std::optional<Error> failNext_;         ///< thrown by the next recorded call
  std::function<void()> insideAllReduce;  ///< runs inside allReduce, before it is recorded (set before the calls)

  /// Waits until the world is aborted or `seconds` pass; whether it was.
  bool waitForAbort(double seconds) {
    std::unique_lock<std::mutex> lock(abortMutex_);
    return abortSeen_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return aborted_.load(); });
  }
  std::vector<std::weak_ptr<FakeWorld>>* children = nullptr;

 private:
  void record(Event event) {
    if (aborted_) throw Error(ErrorCode::RemoteError, "the communicator was aborted");
    if (failNext_) {
      const Error error = *failNext_;
      failNext_.reset();
      throw error;
    }
    log_->add(std::move(event));
  }
  std::shared_ptr<EventLog> log_;
  int id_;
  int nranks_;
  std::vector<int> ranks_;
  std::vector<int> devices_;
  int nextWindow_ = 1;
  std::atomic<bool> aborted_{false};
  std::mutex abortMutex_;
  std::condition_variable abortSeen_;
};

class FakePlatform : public Platform {
 public:
  explicit FakePlatform(std::shared_ptr<EventLog> log) : log_(std::move(log)) {}
  ~FakePlatform() override {
    for (void* block : allocations_) std::free(block);
  }

  std::shared_ptr<WorldBackend> createWorld(const UniqueId& id, int nranks, const std::vector<int>& ranks,
                                            const std::vector<int>& devices, const Params&,
                                            ForwardAbility forwarding) override {
    log_->add(Event("createWorld", -1, ranks.empty() ? -1 : ranks.front(), nullptr, nullptr, ranks.size(), DataType::U8,
                    ReduceOp::Sum, nranks));
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      toldRoots.push_back(forwarding);
    }
    {
      std::unique_lock<std::mutex> lock(gateMutex_);
      ++waiting_;
      gateChanged_.notify_all();
      gateChanged_.wait(lock, [&] { return gateOpen_; });
      --waiting_;
    }
    if (failCreation) throw *failCreation;
    // A rendezvous root's verdict reaches only the ranks of an id whose root may forward, as in the library.
    if (forwardVerdict && bootstrap::decodeUniqueId(id).mayForward) {
      rootForwards(id, *forwardVerdict, ranks.front(), forwarding);
    }
    return made(nranks, ranks, devices);
  }
  std::shared_ptr<WorldBackend> createLocalWorld(const std::vector<int>& devices, const Params&) override {
    log_->add(Event("createLocalWorld", -1, -1, nullptr, nullptr, devices.size()));
    if (failCreation) throw *failCreation;
    std::vector<int> ranks;
    for (int r = 0; r < static_cast<int>(devices.size()); ++r) ranks.push_back(r);
    return made(static_cast<int>(devices.size()), ranks, devices);
  }
  UniqueId makeId(const Params&, bootstrap::ForwardIdSource forwardId) override {
    const int serial = ++ids_;
    bootstrap::UniqueIdContents contents;
    contents.root.bytes = {127, 0, 0, 1};
    contents.root.port = static_cast<std::uint16_t>(1000 + serial % 60000);
    std::memcpy(contents.token.data(), &serial, sizeof serial);
    contents.mayForward = forwardId != nullptr;
    const UniqueId id = bootstrap::encodeUniqueId(contents);
    if (forwardId != nullptr) {
      const std::lock_guard<std::mutex> lock(rootsMutex_);
      roots_[keyOf(id)].source = std::move(forwardId);
    }
    return id;
  }
  /// Logs "retireId" with the id's serial (makeId's count) as its rank, or -1 for an id that is not peerlink's.
  void retireId(const UniqueId& id) noexcept override {
    int serial = -1;
    try {
      std::memcpy(&serial, bootstrap::decodeUniqueId(id).token.data(), sizeof serial);
    } catch (const Error&) {
    }
    log_->add(Event("retireId", -1, serial));
  }
  int currentDevice() override { return device; }
  void setCurrentDevice(int to) override { device = to; }
  int deviceCount() override { return 4; }
  void* memAlloc(std::size_t bytes) override { return allocate(device, bytes); }
  void memFree(void* pointer) override { release(device, pointer); }
  void* allocate(int, std::size_t bytes) override {
    void* block = std::calloc(1, bytes);
    const std::lock_guard<std::mutex> lock(mutex_);
    allocations_.push_back(block);
    return block;
  }
  void release(int, void* pointer) noexcept override {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = std::find(allocations_.begin(), allocations_.end(), pointer);
    if (found != allocations_.end()) {
      std::free(pointer);
      allocations_.erase(found);
    }
  }
  void transform(int, const TransformArgs& args, cudaStream_t) override {
    static const char* const kinds[] = {"Scale", "Widen", "Narrow", "Divide", "Copy"};
    Event event(std::string("transform ") + kinds[static_cast<int>(args.kind)]);
    event.send = args.in;
    event.recv = args.out;
    event.count = args.count;
    event.transform = args;
    log_->add(event);
  }
  void copy(int, void* destination, const void* source, std::size_t bytes, cudaStream_t) override {
    log_->add(Event("copy", -1, -1, source, destination, bytes));
  }
  void orderAfter(int, cudaStream_t, cudaStream_t) override { log_->add(Event("orderAfter")); }
  bool capturing(cudaStream_t stream) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::find(capturingStreams.begin(), capturingStreams.end(), stream) != capturingStreams.end();
  }

  /// Creation waits until the gate is open (a test of two threads creating one world); open by default.
  void closeGate() {
    const std::lock_guard<std::mutex> lock(gateMutex_);
    gateOpen_ = false;
  }
  void openGate() {
    const std::lock_guard<std::mutex> lock(gateMutex_);
    gateOpen_ = true;
    gateChanged_.notify_all();
  }
  bool waitForCreator() {
    std::unique_lock<std::mutex> lock(gateMutex_);
    return gateChanged_.wait_for(lock, std::chrono::seconds(10), [&] { return waiting_ > 0; });
  }
  std::size_t allocations() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return allocations_.size();
  }

  int device = 0;
  std::vector<cudaStream_t> capturingStreams;  ///< the streams capturing() says are being captured into a graph
  std::optional<Error> failCreation;
  /// Set: creating a world of an id whose root may forward ends in that root's answer for several hosts, with this
  /// reason (rootForwards).
  std::optional<std::string> forwardVerdict;
  /// What each createWorld told the root of whether this process can follow a forward, in order.
  std::vector<ForwardAbility> toldRoots;
  std::vector<std::weak_ptr<FakeWorld>> worlds;  ///< every world made, in order (split's too)

 private:
  std::shared_ptr<WorldBackend> made(int nranks, const std::vector<int>& ranks, const std::vector<int>& devices) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto world = std::make_shared<FakeWorld>(log_, static_cast<int>(worlds.size()), nranks, ranks, devices);
    world->children = &worlds;
    worlds.push_back(world);
    return world;
  }
  // A rendezvous root that may forward, of an id some FakePlatform made: its ForwardIdSource, and its answer once
  // it gave one (a root decides once for every rank of its world, of every process).
  struct FakeRoot {
    bootstrap::ForwardIdSource source;
    std::vector<std::uint8_t> forward;  ///< the Forward frame's payload
    std::optional<bootstrap::Failure> failure;
  };
  static std::string keyOf(const UniqueId& id) { return std::string(id.bytes, id.bytes + kUniqueIdBytes); }
  // As the id's root answers a rank when its ranks are on several hosts: where this rank said it cannot follow, the
  // refusal (its source unasked); else it asks its source for the real NCCL's id the first time and sends that
  // (through the frame's codec), or the failure naming why there is none.
  [[noreturn]] static void rootForwards(const UniqueId& id, const std::string& reason, int rank,
                                        ForwardAbility forwarding) {
    const std::string address = bootstrap::formatWireAddress(bootstrap::decodeUniqueId(id).root);
    const std::lock_guard<std::mutex> lock(rootsMutex_);
    const auto found = roots_.find(keyOf(id));
    if (found == roots_.end()) throw Error(ErrorCode::Internal, "test: no FakePlatform made this id's root");
    FakeRoot& root = found->second;
    if (forwarding != ForwardAbility::Able && root.forward.empty() && !root.failure) {
      root.failure = bootstrap::refusedWorldFailure(
          address, {bootstrap::WorldServer::Refused,
                    fmt::format("{}, which only the real NCCL serves, but rank {} has no real NCCL to forward to: {}",
                                reason, rank, bootstrap::whyUnableToForward(forwarding))});
    }
    if (root.forward.empty() && !root.failure) {
      try {
        root.forward = bootstrap::encodeForward(reason, root.source());
      } catch (const std::exception& error) {
        root.failure = bootstrap::forwardIdFailure(address, reason, error);
      }
    }
    if (root.failure) throw Error(root.failure->code, root.failure->message);
    throw bootstrap::ForwardedWorld(address, bootstrap::decodeForward(root.forward.data(), root.forward.size()));
  }
  static inline std::atomic<int> ids_{0};  // ids of every FakePlatform differ: their roots are process-wide
  static inline std::mutex rootsMutex_;
  static inline std::map<std::string, FakeRoot> roots_;

  std::shared_ptr<EventLog> log_;
  std::mutex mutex_;
  std::vector<void*> allocations_;
  std::mutex gateMutex_;
  std::condition_variable gateChanged_;
  bool gateOpen_ = true;
  int waiting_ = 0;
};

// A split as peerlink's: per color a new world of the members ordered by key then rank; our ranks of it are local.
inline std::vector<std::shared_ptr<WorldBackend>> FakeWorld::split(const std::vector<int>& colors,
                                                                   const std::vector<int>& keys) {
  record(Event("split", id_));
  std::map<int, std::vector<std::pair<int, int>>> members;  // color -> (key, old rank), local ranks only
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    if (colors[i] >= 0) members[colors[i]].emplace_back(keys[i], ranks_[i]);
  }
  std::map<int, std::shared_ptr<FakeWorld>> worlds;
  for (auto& [color, list] : members) {
    std::sort(list.begin(), list.end());
    std::vector<int> newRanks;
    std::vector<int> newDevices;
    for (std::size_t j = 0; j < list.size(); ++j) {
      newRanks.push_back(static_cast<int>(j));
      newDevices.push_back(device(list[j].second));
    }
    auto world = std::make_shared<FakeWorld>(log_, static_cast<int>(children->size()), static_cast<int>(list.size()),
                                             newRanks, newDevices);
    world->children = children;
    children->push_back(world);
    worlds[color] = world;
  }
  std::vector<std::shared_ptr<WorldBackend>> result;
  for (std::size_t i = 0; i < ranks_.size(); ++i) result.push_back(colors[i] >= 0 ? worlds[colors[i]] : nullptr);
  return result;
}

/// The parts of a Shim over a FakePlatform, without the real NCCL, with settings from `variables`.
inline ShimParts fakeParts(const std::shared_ptr<EventLog>& log, FakePlatform** platform,
                           const std::map<std::string, std::string>& variables = {}) {
  ShimParts parts;
  auto made = std::make_unique<FakePlatform>(log);
  *platform = made.get();
  parts.platform = std::move(made);
  parts.settings = apiSettingsFrom(Params::fromMap(variables));
  parts.realFailure = "no real NCCL in this test";
  return parts;
}

/// A unique id of peerlink's, as ncclGetUniqueId returns it.
inline ncclUniqueId newId(Shim& shim) {
  ncclUniqueId id{};
  EXPECT_EQ(shim.getUniqueId(&id), ncclSuccess);
  return id;
}

}  // namespace peerlink::nccl::testing
