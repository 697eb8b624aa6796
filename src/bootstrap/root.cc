#include "bootstrap/root.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/frame.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/verdict.hpp"
#include "core/log.hpp"

namespace peerlink::bootstrap {
namespace {

using std::chrono::milliseconds;

// A reply must reach a rank even when the root is at its deadline; ranks read at once, so this is generous.
constexpr milliseconds kReplyTimeout{1000};
// Connections that have not said hello yet, beyond the world's size (strays, scanners).
constexpr std::size_t kSpareConnections = 64;
// A rank says hello as soon as it has connected: a connection silent this long (or a third of the root's timeout,
// if that is less) is a stray, closed so that strays cannot hold every slot until the deadline. The root looks for
// them at least this often.
constexpr milliseconds kHelloWithin{10000};
constexpr milliseconds kStraySweep{1000};

struct Connection {
  DeadlineClock::time_point accepted = DeadlineClock::now();
  FileDescriptor fd;
  FrameReader reader{kHelloBytes};
  std::string remote;          ///< address, for messages before the hello
  std::optional<Hello> hello;  ///< once accepted
  bool ready = false;
  std::string name() const { return hello ? describePeer(hello->identity) : "a connection from " + remote; }
};

enum class Phase { Gathering, Connecting, Failed, Done };

class Root {
 public:
  Root(const SocketAddress& bindAddress, const Token& token, milliseconds timeout, ForwardIdSource forwardId)
      : token_(token),
        timeout_(timeout),
        forwardId_(std::move(forwardId)),
        helloWithin_(std::min(kHelloWithin, timeout / 3)),
        start_(DeadlineClock::now()) {
    listener_ = listenTcp(bindAddress, kMaxBootstrapRanks, &bound_);
    address_ = formatAddress(bound_);
    wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_) throwSystemError("eventfd (bootstrap root)", errno);
    thread_ = std::thread([this] { run(); });
  }
  ~Root() {
    stop();
    if (thread_.joinable()) thread_.join();
  }
  Root(const Root&) = delete;
  Root& operator=(const Root&) = delete;

  void stop() noexcept {
    stopping_.store(true);
    wake();
  }
  /// Ends the root if no rank has arrived yet (its id was not used); a root some rank reached goes on.
  void retireIfUnused() noexcept {
    retiring_.store(true);
    wake();
  }
  bool serves(const Token& token) const noexcept { return sameToken(token, token_); }
  bool finished() const { return finished_.load(); }
  WireAddress address() const { return toWireAddress(bound_); }

 private:
  void run() noexcept {
    try {
      logInfo(LogSubsys::Init, "bootstrap root listening at {} (waits {})", address_, formatSeconds(timeout_));
      loop();
    } catch (const std::exception& error) {
      // Out of descriptors, or a bug: the ranks hear it now rather than at their deadline.
      try {
        fail({ErrorCode::Internal, fmt::format("the bootstrap root at {} stopped: {}", address_, error.what())});
      } catch (...) {
      }
    }
    connections_.clear();
    listener_.reset();
    finished_.store(true);
  }

  DeadlineClock::time_point deadline() const {
    if (phase_ == Phase::Connecting) return worldSent_ + timeout_ + kVerdictGrace;
    return firstArrival_.value_or(start_) + timeout_;
  }

  void loop() {
    while (phase_ != Phase::Done) {
      closeSilentStrays();
      std::vector<pollfd> polled{{wake_.get(), POLLIN, 0}};
      if (listener_) polled.push_back({listener_.get(), POLLIN, 0});
      const std::size_t first = polled.size();
      for (const auto& connection : connections_) polled.push_back({connection->fd.get(), POLLIN, 0});
      const int wait = std::min(remainingMs(deadline()), static_cast<int>(kStraySweep.count()));
      const int ready = ::poll(polled.data(), polled.size(), wait);
      if (ready < 0 && errno != EINTR) throwSystemError("poll (bootstrap root)", errno);
      if (polled[0].revents != 0) {
        if (stopping_.load() || retiredUnused()) return;
        std::uint64_t count = 0;  // a retirement that came too late: read the wake-up, go on serving
        [[maybe_unused]] const ssize_t n = ::read(wake_.get(), &count, sizeof(count));
        continue;
      }
      if (ready <= 0) {
        if (DeadlineClock::now() >= deadline()) {
          onDeadline();
          return;
        }
        continue;
      }
      if (listener_ && polled[1].revents != 0) acceptAll();
      // The poll set's connections are the list's first ones: those accepted just now came after them.
      std::vector<Connection*> readable;
      auto it = connections_.begin();
      for (std::size_t i = first; i < polled.size() && it != connections_.end(); ++i, ++it) {
        if (polled[i].revents != 0) readable.push_back(it->get());
      }
      for (Connection* connection : readable) {
        if (phase_ == Phase::Done) break;
        if (connection->fd) serve(*connection);  // a failure may have closed it meanwhile
      }
      connections_.remove_if([](const auto& connection) { return !connection->fd; });
    }
  }

  void closeSilentStrays() {
    const auto now = DeadlineClock::now();
    for (const auto& connection : connections_) {
      if (connection->fd && !connection->hello && now - connection->accepted >= helloWithin_) {
        logWarn(LogSubsys::Init, "the bootstrap root at {} closed {}: no hello within {}", address_, connection->name(),
                formatSeconds(helloWithin_));
        connection->fd.reset();
      }
    }
    connections_.remove_if([](const auto& connection) { return !connection->fd; });
  }

  void acceptAll() {
    for (;;) {
      FileDescriptor fd = acceptTcp(listener_.get());
      if (!fd) return;
      if (connections_.size() >= static_cast<std::size_t>(nranks_ > 0 ? nranks_ : 1) + kSpareConnections) {
        continue;  // closed at once: a flood of strays must not exhaust this process's descriptors
      }
      auto connection = std::make_unique<Connection>();
      connection->remote = formatAddress(remoteAddress(fd.get()));
      connection->fd = std::move(fd);
      connections_.push_back(std::move(connection));
    }
  }

  void serve(Connection& connection) {
    const FrameReader::Status status = connection.reader.readFrom(connection.fd.get());
    try {
      while (connection.fd && phase_ != Phase::Done) {
        std::optional<Frame> frame = connection.reader.next();
        if (!frame) break;
        handle(connection, *frame);
      }
    } catch (const Error& error) {
      if (error.code() != ErrorCode::InvalidInput) throw;
      onProtocolError(connection, error.what());
      return;
    }
    if (status == FrameReader::Status::Closed && connection.fd) onClosed(connection);
  }

  void handle(Connection& connection, const Frame& frame) {
    if (!connection.hello) {
      if (frame.type != FrameType::Hello) {
        throw Error(ErrorCode::InvalidInput, fmt::format("a {} frame before the hello", frameTypeName(frame.type)));
      }
      onHello(connection, decodeHello(frame.payload.data(), frame.payload.size()));
      return;
    }
    if (phase_ == Phase::Connecting && frame.type == FrameType::Ready) {
      connection.ready = true;
      if (std::all_of(connections_.begin(), connections_.end(),
                      [](const auto& c) { return !c->fd || !c->hello || c->ready; })) {
        finish();
      }
      return;
    }
    if (frame.type == FrameType::Failure) {
      fail(decodeFailure(frame.payload.data(), frame.payload.size()));
      return;
    }
    throw Error(ErrorCode::InvalidInput, fmt::format("an unexpected {} frame", frameTypeName(frame.type)));
  }

  void onHello(Connection& connection, Hello hello) {
    if (!sameToken(hello.token, token_)) {
      const std::string refusal = fmt::format(
          "the bootstrap root at {} refused {}: its unique id's token is not this root's (an id of an earlier run, "
          "or of another job?)",
          address_, describePeer(hello.identity));
      refusals_.push_back(describePeer(hello.identity) + " with another token");
      logWarn(LogSubsys::Init, "{}", refusal);
      reply(connection, FrameType::Failure, encodeFailure({ErrorCode::InvalidUsage, refusal}));
      drainAndClose(connection.fd);
      return;
    }
    if (phase_ == Phase::Failed) {
      reply(connection, FrameType::Failure, encodeFailure(failure_));
      drainAndClose(connection.fd);
      return;
    }
    if (!firstArrival_) {
      firstArrival_ = DeadlineClock::now();
      nranks_ = hello.nranks;
      slots_.assign(static_cast<std::size_t>(nranks_), std::nullopt);
      reference_ = hello;
    }
    const std::string who = describePeer(hello.identity);
    const std::string first = describePeer(reference_.identity);
    if (hello.nranks != nranks_) {
      connection.hello = std::move(hello);
      fail({ErrorCode::InvalidUsage, fmt::format("{} says the world has {} ranks, {} says {}: give every rank the "
                                                 "same world size",
                                                 who, connection.hello->nranks, first, nranks_)});
      return;
    }
    if (hello.peerlinkVersion != reference_.peerlinkVersion) {
      connection.hello = std::move(hello);
      fail({ErrorCode::InvalidUsage,
            fmt::format("{} runs peerlink {}, {} runs peerlink {}: run one peerlink version on every rank", who,
                        connection.hello->peerlinkVersion, first, reference_.peerlinkVersion)});
      return;
    }
    auto& slot = slots_[static_cast<std::size_t>(hello.identity.rank)];
    if (slot) {
      const std::string holder = describePeer(slot->identity);
      const int rank = hello.identity.rank;
      connection.hello = std::move(hello);
      fail({ErrorCode::InvalidUsage,
            fmt::format("{} and {} both claim rank {}: give each process its own rank", holder, who, rank)});
      return;
    }
    slot = hello;
    connection.hello = std::move(hello);
    connection.reader.setMaxPayload(kMaxFailureText + 4);
    if (std::all_of(slots_.begin(), slots_.end(), [](const auto& s) { return s.has_value(); })) sendWorld();
  }

  void sendWorld() {
    std::vector<Hello> world;
    for (const auto& slot : slots_) world.push_back(*slot);
    listener_.reset();  // every rank is here: later connections are refused by the kernel
    if (forwardId_ != nullptr && forwarded(world)) return;
    const std::vector<std::uint8_t> bytes = encodeWorld(world);
    // Connections that have not said hello yet stay until they do: a second claimant of a rank must still hear
    // that the world failed because of it.
    for (auto& connection : connections_) {
      if (connection->fd && connection->hello) reply(*connection, FrameType::World, bytes);
    }
    worldSent_ = DeadlineClock::now();
    phase_ = Phase::Connecting;
    logInfo(LogSubsys::Init, "bootstrap root at {}: all {} ranks arrived in {} ms", address_, nranks_,
            std::chrono::duration_cast<milliseconds>(worldSent_ - *firstArrival_).count());
  }

  // The decision over every rank's hello, taken here once for the world. Several hosts, every rank able to follow:
  // the real NCCL is asked for an id now (the only time this root asks), every rank hears Forward with it -- or, when
  // there is none, a Failure saying why. Several hosts and some rank unable to follow: every rank hears the refusal,
  // and the real NCCL is never asked. Either way the rendezvous is over (each rank closes its connection; this root
  // ends). One host: false, and the world table follows.
  bool forwarded(const std::vector<Hello>& world) {
    const ServerVerdict verdict = chooseWorldServer(world);
    logInfo(LogSubsys::Init, "bootstrap root at {}: {}: {}", address_, verdict.reason,
            verdict.server == WorldServer::Peerlink   ? "peerlink serves the world"
            : verdict.server == WorldServer::RealNccl ? "every rank goes to the real NCCL, with an id this root asks "
                                                        "it for"
                                                      : "the world is refused");
    if (verdict.server == WorldServer::Peerlink) return false;
    std::vector<std::uint8_t> bytes;
    if (verdict.server == WorldServer::Refused) {
      fail(refusedWorldFailure(address_, verdict));
    } else {
      try {
        bytes = encodeForward(verdict.reason, forwardId_());
      } catch (const std::exception& error) {
        fail(forwardIdFailure(address_, verdict.reason, error));
      } catch (...) {
        fail(forwardIdFailure(address_, verdict.reason, std::runtime_error("an exception of an unknown type")));
      }
    }
    if (!bytes.empty()) {
      for (auto& connection : connections_) {
        if (connection->fd && connection->hello) reply(*connection, FrameType::Forward, bytes);
      }
    }
    phase_ = Phase::Done;  // every rank is here and has its answer: nobody else comes
    return true;
  }

  void finish() {
    for (auto& connection : connections_) {
      if (connection->fd && connection->hello) reply(*connection, FrameType::Go, {});
    }
    phase_ = Phase::Done;
    logInfo(LogSubsys::Init, "bootstrap root at {}: the world of {} ranks is connected", address_, nranks_);
  }

  // The rendezvous cannot succeed: every rank that said hello hears why, the same line.
  void fail(const Failure& failure) {
    failure_ = failure;
    logWarn(LogSubsys::Init, "bootstrap root at {}: {}", address_, failure.message);
    const std::vector<std::uint8_t> bytes = encodeFailure(failure);
    for (auto& connection : connections_) {
      // A connection whose hello is not read yet stays: it is answered with this failure when it is.
      if (!connection->hello) continue;
      if (connection->fd) reply(*connection, FrameType::Failure, bytes);
      drainAndClose(connection->fd);
    }
    // While ranks may still be arriving, stay to tell them; once the world was complete nobody else comes.
    phase_ = phase_ == Phase::Gathering ? Phase::Failed : Phase::Done;
  }

  void onClosed(Connection& connection) {
    if (!connection.hello || phase_ == Phase::Failed) {
      connection.fd.reset();
      return;
    }
    const std::string who = describePeer(connection.hello->identity);
    connection.fd.reset();
    fail({ErrorCode::RemoteError,
          fmt::format("{} left during the bootstrap: its connection to the root at {} closed{} (was it killed?)", who,
                      address_, closeDetail(connection.reader.closeReason()))});
  }

  void onProtocolError(Connection& connection, const std::string& problem) {
    const std::string message =
        fmt::format("the bootstrap root at {} cannot serve {}: {}", address_, connection.name(), problem);
    logWarn(LogSubsys::Init, "{}", message);
    if (connection.hello && phase_ != Phase::Failed) {
      connection.fd.reset();
      fail({ErrorCode::InvalidInput, message});
      return;
    }
    refusals_.push_back(fmt::format("{} ({})", connection.name(), problem));
    reply(connection, FrameType::Failure, encodeFailure({ErrorCode::InvalidInput, message}));
    drainAndClose(connection.fd);
  }

  void onDeadline() {
    if (phase_ == Phase::Failed) return;  // everyone who came has heard why
    if (!firstArrival_) {
      logWarn(LogSubsys::Init, "bootstrap root at {}: no rank arrived within {}", address_, formatSeconds(timeout_));
      return;
    }
    std::vector<int> missing;
    std::vector<int> arrived;
    std::string message;
    if (phase_ == Phase::Gathering) {
      for (int rank = 0; rank < nranks_; ++rank)
        (slots_[static_cast<std::size_t>(rank)] ? arrived : missing).push_back(rank);
      message =
          fmt::format("{} of {} never reached the bootstrap root at {} within {} (arrived: {})", describeRanks(missing),
                      nranks_, address_, formatSeconds(timeout_), formatRankRanges(arrived));
      if (!refusals_.empty()) {
        message += fmt::format("; it refused {} connection{}: {}", refusals_.size(), plural(refusals_.size()),
                               fmt::join(refusals_, "; "));
      }
    } else {
      for (const auto& connection : connections_) {
        if (connection->fd && connection->hello && !connection->ready) {
          missing.push_back(connection->hello->identity.rank);
        }
      }
      std::sort(missing.begin(), missing.end());
      message = fmt::format(
          "{} of {} did not finish connecting to their peers within {} of the bootstrap root at {} "
          "sending everyone's address",
          describeRanks(missing), nranks_, formatSeconds(timeout_ + kVerdictGrace), address_);
    }
    fail({ErrorCode::Timeout, message});
  }

  void reply(Connection& connection, FrameType type, const std::vector<std::uint8_t>& payload) noexcept {
    try {
      writeFrame(connection.fd.get(), type, 0, payload.data(), payload.size(), deadlineAfter(kReplyTimeout),
                 connection.name());
    } catch (const Error& error) {
      logWarn(LogSubsys::Init, "bootstrap root at {}: {}", address_, error.what());
    }
  }

  void wake() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  }

  bool retiredUnused() {
    if (!retiring_.load() || firstArrival_) return false;
    logInfo(LogSubsys::Init, "bootstrap root at {}: retired unused (the ranks meet at another id's root)", address_);
    return true;
  }

  const Token token_;
  const milliseconds timeout_;
  const ForwardIdSource forwardId_;  ///< set: this root decides who serves the world (forwarded)
  const milliseconds helloWithin_;   ///< a connection silent this long is a stray (closeSilentStrays)
  const DeadlineClock::time_point start_;
  FileDescriptor listener_;
  SocketAddress bound_;
  std::string address_;
  FileDescriptor wake_;
  std::list<std::unique_ptr<Connection>> connections_;

  Phase phase_ = Phase::Gathering;
  std::optional<DeadlineClock::time_point> firstArrival_;
  DeadlineClock::time_point worldSent_{};
  int nranks_ = 0;
  Hello reference_;
  std::vector<std::optional<Hello>> slots_;
  std::vector<std::string> refusals_;
  Failure failure_;

  std::atomic<bool> finished_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> retiring_{false};
  std::thread thread_;
};

// The roots this process runs. Process state, not options: a root outlives the call that made its id.
class RootRegistry {
 public:
  ~RootRegistry() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (::getpid() != owner_) {
      forgetInherited();
      return;
    }
    for (auto& root : roots_) root->stop();
    roots_.clear();
  }
  void add(std::unique_ptr<Root> root) {
    std::lock_guard<std::mutex> lock(mutex_);
    reapFinished();
    roots_.push_back(std::move(root));
  }
  int running() {
    std::lock_guard<std::mutex> lock(mutex_);
    reapFinished();
    return static_cast<int>(roots_.size());
  }
  bool retire(const Token& token) {
    std::lock_guard<std::mutex> lock(mutex_);
    reapFinished();
    for (auto& root : roots_) {
      if (!root->serves(token)) continue;
      root->retireIfUnused();
      return true;
    }
    return false;
  }

 private:
  void reapFinished() {
    if (::getpid() != owner_) {
      forgetInherited();
      return;
    }
    roots_.remove_if([](const auto& root) { return root->finished(); });
  }
  // A forked child has copies of the parent's roots but not their threads: it must neither join nor destroy
  // them, so it leaks the objects (their sockets stay open in the child only until it exits).
  void forgetInherited() {
    for (auto& root : roots_) (void)root.release();
    roots_.clear();
    owner_ = ::getpid();
  }

  std::mutex mutex_;
  std::list<std::unique_ptr<Root>> roots_;
  pid_t owner_ = ::getpid();
};

RootRegistry& registry() {
  static RootRegistry roots;
  return roots;
}

}  // namespace

WireAddress startRoot(const SocketAddress& bindAddress, const Token& token, milliseconds timeout,
                      ForwardIdSource forwardId) {
  auto root = std::make_unique<Root>(bindAddress, token, timeout, std::move(forwardId));
  const WireAddress address = root->address();
  registry().add(std::move(root));
  return address;
}

int runningRoots() {
  return registry().running();
}

bool retireRoot(const Token& token) {
  return registry().retire(token);
}

}  // namespace peerlink::bootstrap
