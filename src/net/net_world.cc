// NetWorld and NetGroup (net_world.hpp).
#include "net/net_world.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/cpu_affinity.hpp"
#include "core/log.hpp"
#include "net/net_path.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

// What every rank tells the others at creation: fixed size, so one all-gather of bytes carries it.
struct WireIdentity {
  std::uint64_t hostId;
  std::int32_t pid;
  std::uint32_t uid;
  char hostName[64];
};

int tagBaseOf(const std::vector<int>& members, int maxTag) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const int member : members) hash = (hash ^ static_cast<std::uint64_t>(member)) * 1099511628211ull;
  return static_cast<int>(hash % static_cast<std::uint64_t>(maxTag / 2));
}

}  // namespace

NetOptions NetOptions::fromParams(const Params& params) {
  NetOptions options;
  options.timeout = std::chrono::milliseconds(params.getInt("PEERLINK_NET_TIMEOUT_MS"));
  options.chunkBytes = static_cast<std::size_t>(params.getInt("PEERLINK_NET_CHUNK_BYTES"));
  const std::string reduce = params.getString("PEERLINK_NET_REDUCE");
  options.reduce = reduce == "HOST" ? NetReduce::Host : reduce == "GPU" ? NetReduce::Gpu : NetReduce::Auto;
  options.identity = BootstrapOptions::fromParams(params);
  options.asyncCalls = params.getString("PEERLINK_NET_ASYNC") == "ON";
  return options;
}

struct NetWorld::Job {
  std::function<void()> work;
  std::atomic<bool> done{false};  ///< set under the mutex; read without it while the caller lingers
  std::exception_ptr error;
  bool detached = false;                ///< nobody waits for it (an async or a queued call's)
  std::optional<AsyncTickets> tickets;  ///< async calls' (submitAsync says what becomes of them)
  std::function<void()> finally;        ///< run once it ran or was skipped, after the world's state says how
};

NetGroup::NetGroup(NetWorld& world, std::vector<int> members, std::string name)
    : world_(world), members_(std::move(members)), name_(std::move(name)) {
  const auto at = std::find(members_.begin(), members_.end(), world.rank());
  if (at == members_.end()) {
    throw Error(ErrorCode::InvalidUsage,
                "net group " + name_ + ": rank " + std::to_string(world.rank()) + " is not one of its members");
  }
  for (const int member : members_) {
    if (member < 0 || member >= world.size()) {
      throw Error(ErrorCode::InvalidUsage, "net group " + name_ + ": rank " + std::to_string(member) +
                                               " is not a rank of a world of " + std::to_string(world.size()));
    }
  }
  me_ = static_cast<int>(at - members_.begin());
  tagBase_ = tagBaseOf(members_, world.p2p_->maxTag());
}

CallContext NetGroup::context(const char* what) {
  CallContext context;
  MemberRun& run = context.run;
  run.p2p = world_.p2p_.get();
  run.members = members_;
  run.me = me_;
  // Calls of one group are numbered alike on every member; the tag keeps a late message of one call from
  // matching the next.
  // kPiecesInFlight tags each: run.tag and those after it.
  const auto tags = static_cast<std::uint64_t>(world_.p2p_->maxTag()) - kPiecesInFlight;
  run.tag = 1 + static_cast<int>((static_cast<std::uint64_t>(tagBase_) + kPiecesInFlight * calls_++) % tags);
  run.timeout = world_.options_.timeout;
  run.name = std::string(what) + " of " + name_;
  // The world, not this group: an async call's job may outlive its group.
  run.describe = [world = &world_](int rank) { return world->describe(rank); };
  run.lost = [world = &world_] { return world->lostWhy(); };
  context.queuedTime = &world_.queuedTime_;
  context.path = world_.options_.path;
  context.chunkBytes = world_.options_.chunkBytes;
  context.device = world_.device_.get();
  context.slots = &world_.slots_;
  context.staged = world_.stagedMemory_.get();
  context.stagedOnHost = world_.stagedOnHost_.get();
  context.gpuReduceMinBytes = world_.options_.gpuReduceMinBytes;
  context.caller = world_.callerMemory_.get();
  context.awaitCopiesOut = !world_.options_.copiesOutInStreamOrder;
  return context;
}

void NetGroup::run(const NetCall& call) {
  const CallContext made = [&] {
    const std::lock_guard<std::mutex> numbering(world_.numbering_);
    return context(collectiveName(call.collective));  // calls are numbered on the caller's thread
  }();
  world_.submitAndWait([&] { runCall(made, call); });
}

void NetGroup::allReduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int avgDivisor) {
  run({Collective::AllReduce, count, type, op, avgDivisor, 0, send, recv});
}
void NetGroup::allGather(const void* send, void* recv, std::size_t count, DataType type) {
  run({Collective::AllGather, count, type, ReduceOp::Sum, 0, 0, send, recv});
}
void NetGroup::reduceScatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             int avgDivisor) {
  run({Collective::ReduceScatter, count, type, op, avgDivisor, 0, send, recv});
}
void NetGroup::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) {
  run({Collective::Broadcast, count, type, ReduceOp::Sum, 0, root, send, recv});
}
void NetGroup::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                      int avgDivisor) {
  run({Collective::Reduce, count, type, op, avgDivisor, root, send, recv});
}
void NetGroup::allToAll(const void* send, void* recv, std::size_t count, DataType type) {
  run({Collective::AllToAll, count, type, ReduceOp::Sum, 0, 0, send, recv});
}
void NetGroup::sendRecv(const std::vector<PeerOp>& ops, DataType type) {
  const CallContext made = [&] {
    const std::lock_guard<std::mutex> numbering(world_.numbering_);
    return context("send/recv");  // calls are numbered on the caller's thread
  }();
  world_.submitAndWait([&] { runPeerOps(made, ops, type); });
}

NetWorld::NetWorld(std::unique_ptr<PointToPoint> p2p, NetOptions options, std::unique_ptr<DeviceAccess> device,
                   std::unique_ptr<LocalMemory> callerMemory)
    : p2p_(std::move(p2p)),
      options_(std::move(options)),
      device_(std::move(device)),
      callerMemory_(std::move(callerMemory)),
      stagedMemory_(options_.reduce == NetReduce::Host ? nullptr : device_->stagedMemory()),
      stagedOnHost_(stagedMemory_ && options_.reduce == NetReduce::Auto ? std::make_unique<HostMemory>() : nullptr),
      slots_(*device_),
      queuedSlots_(*device_),
      asyncMemory_(std::make_unique<HostMemory>()) {
  stagedOnDevice_ = stagedMemory_ != nullptr;
  if (!stagedMemory_) stagedMemory_ = std::make_unique<HostMemory>();
  asyncFlags_ = new (device_->allocateHost(sizeof(AsyncFlags))) AsyncFlags();
  askedTickets_ = std::make_unique<AskedTickets>(asyncFlags_->computations);
  peers_.resize(static_cast<std::size_t>(size()));
  for (int r = 0; r < size(); ++r) peers_[static_cast<std::size_t>(r)] = PeerIdentity{r, 0, "?", 0, 0};
  thread_ = std::thread([this] { progress(); });
  try {
    const PeerIdentity me = localPeerIdentity(rank(), options_.identity);
    WireIdentity mine{};
    mine.hostId = me.hostId;
    mine.pid = me.pid;
    mine.uid = me.uid;
    std::strncpy(mine.hostName, me.hostName.c_str(), sizeof(mine.hostName) - 1);
    std::vector<WireIdentity> all(static_cast<std::size_t>(size()));
    std::vector<int> everyone(static_cast<std::size_t>(size()));
    for (int r = 0; r < size(); ++r) everyone[static_cast<std::size_t>(r)] = r;
    // The identities travel on the direct path in host memory, whatever the world's path is.
    HostMemory memory;
    NetGroup world(*this, everyone, "the world");
    submitAndWait([&] {
      CallContext context = world.context("identities");
      context.path = NetPath::Direct;
      context.caller = &memory;
      runCall(context,
              {Collective::AllGather, sizeof(WireIdentity), DataType::U8, ReduceOp::Sum, 0, 0, &mine, all.data()});
    });
    for (int r = 0; r < size(); ++r) {
      const WireIdentity& wire = all[static_cast<std::size_t>(r)];
      peers_[static_cast<std::size_t>(r)] =
          PeerIdentity{r, wire.hostId, std::string(wire.hostName, strnlen(wire.hostName, sizeof(wire.hostName))),
                       wire.pid, wire.uid};
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
    leakStaged();
    device_->freeHost(asyncFlags_);  // no async call was made
    throw;
  }
}

NetWorld::~NetWorld() {
  bool leaked = false;
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (!broken_.empty()) leakStaged();
    leaked = leaked_;
    kept = keptForCaller_;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The async slots take MPI's messages like the staged path's (kept where the world broke); the flags only the
  // caller's kernels (kept where they may still run).
  if (!leaked) {
    for (const StagingSlots::Slot& slot : asyncSlots_) {
      for (std::byte* memory : {slot.input, slot.output, slot.scratch}) {
        if (memory != nullptr) device_->freeHost(memory);
      }
    }
  }
  if (!kept) device_->freeHost(asyncFlags_);
}

void NetWorld::breakWith(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!broken_.empty()) return;
  broken_ = why;
  leakStaged();
}

void NetWorld::leakStaged() noexcept {
  slots_.leak();
  queuedSlots_.leak();
  stagedMemory_->leak();
  if (stagedOnHost_) stagedOnHost_->leak();
  asyncMemory_->leak();
  leaked_ = true;
}

void NetWorld::keepPinnedMemory() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  leakStaged();
  keptForCaller_ = true;
}

std::string NetWorld::describe(int rank) const {
  if (rank < 0 || rank >= size()) return "rank " + std::to_string(rank);
  return describePeer(peers_[static_cast<std::size_t>(rank)]);
}

NetGroup& NetWorld::node() {
  if (!node_) {
    const coll::NodeGrid g = grid();
    const int node = g.nodeOf(rank());
    std::vector<int> members;
    for (int l = 0; l < g.ranksPerNode; ++l) members.push_back(g.rankOf(node, l));
    node_ = group(members,
                  "node " + std::to_string(node) + " (host " + peers_[static_cast<std::size_t>(rank())].hostName + ")");
  }
  return *node_;
}

NetGroup& NetWorld::rail() {
  if (!rail_) {
    const coll::NodeGrid g = grid();
    const int local = g.localOf(rank());
    std::vector<int> members;
    for (int i = 0; i < g.nodes; ++i) members.push_back(g.rankOf(i, local));
    rail_ = group(members, "rail " + std::to_string(local));
  }
  return *rail_;
}

std::unique_ptr<NetGroup> NetWorld::group(std::vector<int> members, std::string name) {
  return std::unique_ptr<NetGroup>(new NetGroup(*this, std::move(members), std::move(name)));
}

void NetWorld::peerLost(int rank, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lost_.empty()) lost_ = why.empty() ? describe(rank) + " is gone" : why;
}

std::string NetWorld::lostWhy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

void NetWorld::failFrom(std::uint64_t ticket) noexcept {
  std::atomic<std::uint64_t>& failed = asyncFlags_->failedFrom.value;
  std::uint64_t seen = failed.load(std::memory_order_relaxed);
  while ((seen == 0 || seen > ticket) &&
         !failed.compare_exchange_weak(seen, ticket, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

std::pair<std::uint64_t, double> NetWorld::queuedCallTime() const {
  const std::uint64_t calls = queuedTime_.calls.load(std::memory_order_acquire);
  return {calls, static_cast<double>(queuedTime_.nanoseconds.load(std::memory_order_relaxed)) * 1e-9};
}

void NetWorld::resetQueuedCallTime() {
  queuedTime_.calls.store(0, std::memory_order_relaxed);
  queuedTime_.nanoseconds.store(0, std::memory_order_relaxed);
}

void NetWorld::releaseThrough(std::uint64_t ticket) noexcept {
  // (Never backwards: a job submitted out of ticket order, which failFrom marked failed, may come after.)
  std::atomic<std::uint64_t>& release = asyncFlags_->release.value;
  if (ticket > release.load(std::memory_order_relaxed)) release.store(ticket, std::memory_order_release);
}

std::unique_lock<std::mutex> NetWorld::lockNumbering() {
  return std::unique_lock<std::mutex>(numbering_);
}

std::string NetWorld::brokenBy() const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.empty()) return broken_;
  }
  const std::uint64_t gaveUp = asyncFlags_->gaveUp.value.load(std::memory_order_acquire);
  if (gaveUp == 0) return {};
  if (gaveUp == kNoTicket) {
    return "a CUDA graph's call across nodes got no ticket from its graph's start within twice " +
           std::to_string(options_.timeout.count()) +
           " ms (PEERLINK_NET_TIMEOUT_MS): its results were not copied to the caller's buffers";
  }
  return "the kernel of async call " + std::to_string(gaveUp) + " stopped waiting for the transport after twice " +
         std::to_string(options_.timeout.count()) +
         " ms (PEERLINK_NET_TIMEOUT_MS): its results were not copied to the caller's buffers";
}

Error NetWorld::brokenError(const std::string& why) const {
  return Error(ErrorCode::RemoteError, "net: an earlier call failed (" + why +
                                           "); the transport between nodes cannot be used again: make a new one");
}

void NetWorld::makeAsyncSlots() {
  for (StagingSlots::Slot& slot : asyncSlots_) {
    for (std::byte** memory : {&slot.input, &slot.output, &slot.scratch}) {
      if (*memory == nullptr) *memory = static_cast<std::byte*>(device_->allocateHost(kAsyncSlotBytes));
    }
  }
}

// Handing a call to the progress thread and back costs two thread wake-ups (tens of microseconds each on a busy
// machine: more than a small call's messages take), so each side lingers a while before it sleeps: the caller for
// its job to finish, the progress thread for the next job, which a caller's next call usually brings at once.
namespace {
constexpr std::chrono::microseconds kLinger{200};

template <typename Ready>
bool lingerFor(Ready ready) {
  const auto end = std::chrono::steady_clock::now() + kLinger;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::yield();
  }
  return true;
}
}  // namespace

// The caller waits without a deadline of its own: every wait the job makes has one, so the job ends.
void NetWorld::submitAndWait(const std::function<void()>& work) {
  auto job = std::make_shared<Job>();
  job->work = work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.empty()) {
      throw brokenError(broken_);
    }
    queue_.push_back(job);
    queued_.store(queue_.size(), std::memory_order_release);
  }
  changed_.notify_all();
  if (!lingerFor([&] { return job->done.load(std::memory_order_acquire); })) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return job->done.load(std::memory_order_relaxed); });
  }
  std::lock_guard<std::mutex> lock(mutex_);  // the job's error was written under it
  if (job->error) std::rethrow_exception(job->error);
}

void NetWorld::submitAsync(std::function<void()> work, std::optional<AsyncTickets> tickets,
                           std::function<void()> finally) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  job->detached = true;
  job->tickets = tickets;
  job->finally = std::move(finally);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(job);
    queued_.store(queue_.size(), std::memory_order_release);
  }
  changed_.notify_all();
}

void NetWorld::progress() {
  if (options_.progressCpus) {
    try {
      setCurrentThreadCpus(*options_.progressCpus);
    } catch (const Error& error) {
      logInfo(LogSubsys::Coll, "CPU affinity of the MPI progress thread: left as is ({})", error.what());
    }
  }
  for (;;) {
    lingerFor([&] { return queued_.load(std::memory_order_acquire) > 0 || stopping_.load(std::memory_order_acquire); });
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::shared_ptr<Job> job = queue_.front();
    queue_.pop_front();
    queued_.store(queue_.size(), std::memory_order_release);
    lock.unlock();
    std::exception_ptr error;
    std::string breaks;  // a failure between processes leaves messages in flight: the world is not usable again
    try {
      // An async call queued before the world broke ends at once: its peers are not running it either.
      if (job->detached) {
        const std::string broken = brokenBy();
        if (!broken.empty()) throw brokenError(broken);
      }
      job->work();
    } catch (const Error& e) {
      error = std::current_exception();
      // Nobody waits for an async call's job: any error of one breaks the world, so that the next call reports it.
      if (e.code() != ErrorCode::InvalidUsage || job->detached) breaks = e.what();
    } catch (const std::exception& e) {
      error = std::current_exception();
      breaks = e.what();
    } catch (...) {
      error = std::current_exception();
      breaks = "a job of the transport threw something that is not an exception";
    }
    lock.lock();
    // Messages of the failed call may still land in the pinned memory: nothing frees it from now on.
    if (!breaks.empty() && broken_.empty()) {
      broken_ = breaks;
      leakStaged();
    }
    job->error = error;
    job->done.store(true, std::memory_order_release);
    lock.unlock();
    // After the world's state: a caller that sees the ticket and then asks brokenBy() learns how the call ended.
    if (job->tickets) {
      if (error) failFrom(job->tickets->first);
      releaseThrough(job->tickets->last);
    }
    if (job->finally) job->finally();
    changed_.notify_all();
  }
}

}  // namespace peerlink::net
