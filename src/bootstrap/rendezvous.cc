// connectBootstrap: a rank's side of the rendezvous (root.hpp draws the protocol), then the connections
// between ranks: each rank connects to every lower rank and accepts every higher one, each connection opened
// with the connecting rank's hello, checked against the world table.
#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/error_context.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/peer_links.hpp"
#include "bootstrap/root.hpp"
#include "bootstrap/socket_bootstrap.hpp"
#include "bootstrap/tcp.hpp"
#include "bootstrap/unique_id.hpp"
#include "bootstrap/verdict.hpp"
#include "core/log.hpp"
#include "peerlink/version.hpp"

namespace peerlink {
namespace bootstrap {
namespace {

using std::chrono::milliseconds;

// The world table: one hello per rank and a count.
constexpr std::size_t kMaxWorldBytes = 4 + kHelloBytes * kMaxBootstrapRanks;
constexpr milliseconds kReportTimeout{1000};

// One rank's rendezvous, its state in one place so that every failure path closes everything (RAII).
class Rendezvous {
 public:
  Rendezvous(const UniqueIdContents& id, int rank, int nranks, const BootstrapOptions& options)
      : id_(id), rank_(rank), nranks_(nranks), options_(options), root_(formatWireAddress(id.root)) {}

  std::unique_ptr<Bootstrap> run() {
    const auto start = DeadlineClock::now();
    reachRoot(deadlineAfter(options_.deadline));
    const std::vector<Hello> world = awaitWorld(deadlineAfter(options_.deadline) + kVerdictGrace);
    const auto meshDeadline = deadlineAfter(options_.deadline);
    std::vector<PeerSocket> sockets(static_cast<std::size_t>(nranks_));
    connectLower(world, sockets, meshDeadline);
    acceptHigher(world, sockets, meshDeadline);
    writeFrame(root_fd(), FrameType::Ready, 0, nullptr, 0, deadlineAfter(kReportTimeout), rootName());
    awaitGo(meshDeadline + 2 * kVerdictGrace);

    std::vector<PeerIdentity> peers;
    for (const Hello& hello : world) peers.push_back(hello.identity);
    for (std::size_t peer = 0; peer < world.size(); ++peer) {
      // Watch a peer's pid only on the same host (as PEERLINK_HOSTID says) where its pid names the same process
      // here, and never this process itself.
      sockets[peer].watchPid = world[peer].identity.hostId == self_.identity.hostId &&
                               world[peer].pidScope == self_.pidScope && world[peer].identity.pid != self_.identity.pid;
    }
    logInfo(LogSubsys::Init, "bootstrap rank {} of {}: connected to every peer through {} in {} ms", rank_, nranks_,
            root_, std::chrono::duration_cast<milliseconds>(DeadlineClock::now() - start).count());
    auto links = std::make_unique<PeerLinks>(rank_, peers, std::move(sockets));
    return makeSocketBootstrap(rank_, std::move(peers), std::move(links), options_.deadline);
  }

 private:
  int root_fd() const { return rootSocket_.get(); }
  std::string rootName() const { return "the bootstrap root at " + root_; }
  std::string me() const { return fmt::format("rank {}", rank_); }

  void reachRoot(DeadlineClock::time_point deadline) {
    std::string lastError = "no attempt";
    std::optional<FileDescriptor> socket =
        prefixErrors(fmt::format("{} cannot reach the bootstrap root at {}: ", me(), root_),
                     [&] { return connectTcp(fromWireAddress(id_.root), deadline, &lastError); });
    if (!socket) {
      throw Error(ErrorCode::Timeout,
                  fmt::format("{} could not reach the bootstrap root at {} within {}: {} (is the process that made the "
                              "unique id still running, and is that address reachable from this host?)",
                              me(), root_, formatSeconds(options_.deadline), lastError));
    }
    rootSocket_ = std::move(*socket);
    // Listen where the root was reached from: that interface routes to the other ranks' networks too.
    SocketAddress local = localAddress(root_fd());
    local.setPort(0);
    SocketAddress bound;
    listener_ = listenTcp(local, kMaxBootstrapRanks, &bound);

    self_.peerlinkVersion = kVersion;
    self_.token = id_.token;
    self_.nranks = nranks_;
    self_.identity = localPeerIdentity(rank_, options_);
    self_.pidScope = localPidScope();
    self_.listenAddress = toWireAddress(bound);
    self_.forwarding = options_.forwarding;
    const std::vector<std::uint8_t> hello = encodeHello(self_);
    writeFrame(root_fd(), FrameType::Hello, 0, hello.data(), hello.size(), deadline + kVerdictGrace, rootName());
  }

  // The root's next frame; a Failure is thrown as the error it carries (the same line on every rank).
  Frame awaitRoot(DeadlineClock::time_point deadline, const std::string& waitingFor) {
    std::optional<Frame> frame = prefixErrors(fmt::format("{} waiting for {}: ", me(), waitingFor), [&] {
      return readFrameBefore(root_fd(), rootReader_, deadline, rootName());
    });
    if (!frame) {
      throw Error(ErrorCode::Timeout,
                  fmt::format("{}: {} sent no answer within {} while this rank waited for {} "
                              "(is the root's process stopped?)",
                              me(), rootName(), formatSeconds(options_.deadline + kVerdictGrace), waitingFor));
    }
    if (frame->type == FrameType::Failure) {
      const Failure failure = decodeFailure(frame->payload.data(), frame->payload.size());
      throw Error(failure.code, failure.message);
    }
    return std::move(*frame);
  }

  std::vector<Hello> awaitWorld(DeadlineClock::time_point deadline) {
    const Frame frame = awaitRoot(deadline, fmt::format("the other ranks of {}", nranks_));
    // Only a root of an id that may forward decides who serves the world (verdict.hpp).
    if (frame.type == FrameType::Forward && id_.mayForward) {
      throw ForwardedWorld(root_, decodeForward(frame.payload.data(), frame.payload.size()));
    }
    if (frame.type != FrameType::World) {
      throw Error(ErrorCode::InvalidInput, fmt::format("{}: {} sent a {} frame, not the world table", me(), rootName(),
                                                       frameTypeName(frame.type)));
    }
    std::vector<Hello> world = decodeWorld(frame.payload.data(), frame.payload.size(), nranks_, id_.token);
    if (world[static_cast<std::size_t>(rank_)].identity.pid != self_.identity.pid) {
      throw Error(ErrorCode::InvalidInput, fmt::format("{}: the world table gives this rank to {}", me(),
                                                       describePeer(world[static_cast<std::size_t>(rank_)].identity)));
    }
    return world;
  }

  void connectLower(const std::vector<Hello>& world, std::vector<PeerSocket>& sockets,
                    DeadlineClock::time_point deadline) {
    const std::vector<std::uint8_t> hello = encodeHello(self_);
    for (int peer = 0; peer < rank_; ++peer) {
      const Hello& them = world[static_cast<std::size_t>(peer)];
      const std::string address = formatWireAddress(them.listenAddress);
      std::string lastError = "no attempt";
      std::optional<FileDescriptor> socket;
      try {
        socket = connectTcp(fromWireAddress(them.listenAddress), deadline, &lastError);
      } catch (const Error& error) {
        lastError = error.what();
      }
      if (!socket) {
        giveUp(ErrorCode::Timeout,
               fmt::format("{} could not connect to {} at {} within {}: {}", me(), describePeer(them.identity), address,
                           formatSeconds(options_.deadline), lastError));
      }
      writeFrame(socket->get(), FrameType::Hello, 0, hello.data(), hello.size(), deadline, describePeer(them.identity));
      sockets[static_cast<std::size_t>(peer)].fd = std::move(*socket);
    }
  }

  void acceptHigher(const std::vector<Hello>& world, std::vector<PeerSocket>& sockets,
                    DeadlineClock::time_point deadline) {
    struct Pending {
      FileDescriptor fd;
      std::unique_ptr<FrameReader> reader = std::make_unique<FrameReader>(kHelloBytes);
    };
    std::vector<Pending> pending;
    int expected = nranks_ - 1 - rank_;
    while (expected > 0) {
      std::vector<pollfd> polled{{root_fd(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
      for (const Pending& item : pending) polled.push_back({item.fd.get(), POLLIN, 0});
      const int ready = ::poll(polled.data(), polled.size(), remainingMs(deadline));
      if (ready < 0 && errno != EINTR) throwSystemError("poll (bootstrap rendezvous)", errno);
      if (ready == 0 && DeadlineClock::now() >= deadline) {
        std::vector<int> missing;
        for (int peer = rank_ + 1; peer < nranks_; ++peer) {
          if (!sockets[static_cast<std::size_t>(peer)].fd) missing.push_back(peer);
        }
        giveUp(ErrorCode::Timeout,
               fmt::format("{} of {} did not connect to {} at {} within {}", describeRanks(missing), nranks_, me(),
                           formatWireAddress(self_.listenAddress), formatSeconds(options_.deadline)));
      }
      if (ready <= 0) continue;
      // The root speaks now only to say the rendezvous failed elsewhere.
      if (polled[0].revents != 0) awaitRoot(deadline, "its peers to connect");
      if (polled[1].revents != 0) {
        while (FileDescriptor fd = acceptTcp(listener_.get())) pending.push_back({std::move(fd)});
      }
      for (std::size_t i = 2; i < polled.size(); ++i) {
        if (polled[i].revents == 0) continue;
        Pending& item = pending[i - 2];
        const Admission admission = admit(world, sockets, item.fd.get(), *item.reader);
        if (admission.kind == Admission::Refused) item.fd.reset();
        if (admission.kind == Admission::Admitted) {
          sockets[static_cast<std::size_t>(admission.peer)].fd = std::move(item.fd);
          sockets[static_cast<std::size_t>(admission.peer)].reader = std::move(item.reader);
          --expected;
        }
      }
      pending.erase(std::remove_if(pending.begin(), pending.end(), [](const Pending& item) { return !item.fd; }),
                    pending.end());
    }
  }

  // The rank whose hello arrived on `fd`, once it checks out; Waiting while it has not arrived; Refused for a
  // stranger (bad bytes, another token, not a higher rank, an identity that is not the world table's).
  struct Admission {
    enum Kind { Waiting, Admitted, Refused } kind = Waiting;
    int peer = -1;
  };
  Admission admit(const std::vector<Hello>& world, const std::vector<PeerSocket>& sockets, int fd,
                  FrameReader& reader) {
    std::string problem;
    try {
      const bool closed = reader.readFrom(fd) == FrameReader::Status::Closed;
      const std::optional<Frame> frame = reader.next();
      if (!frame) {
        if (!closed) return {};
        problem = "it closed before its hello";
      } else {
        if (frame->type != FrameType::Hello) throw Error(ErrorCode::InvalidInput, "not a hello");
        const Hello hello = decodeHello(frame->payload.data(), frame->payload.size());
        const int peer = hello.identity.rank;
        if (!sameToken(hello.token, id_.token)) {
          problem = "another token";
        } else if (hello.nranks != nranks_ || peer <= rank_ || sockets[static_cast<std::size_t>(peer)].fd) {
          problem = fmt::format("it claims rank {} of {}", peer, hello.nranks);
        } else if (hello.identity.pid != world[static_cast<std::size_t>(peer)].identity.pid ||
                   hello.identity.hostId != world[static_cast<std::size_t>(peer)].identity.hostId) {
          problem = fmt::format("it claims to be {}, the world table says {}", describePeer(hello.identity),
                                describePeer(world[static_cast<std::size_t>(peer)].identity));
        } else {
          return {Admission::Admitted, peer};
        }
      }
    } catch (const Error& error) {
      problem = error.what();
    }
    logWarn(LogSubsys::Init, "bootstrap {}: refused a connection from {}: {}", me(), formatAddress(remoteAddress(fd)),
            problem);
    return {Admission::Refused, -1};
  }

  // The root's failure line, when it sends one before `deadline`; nothing when it is silent or gone.
  std::optional<Failure> rootVerdict(DeadlineClock::time_point deadline) {
    try {
      while (std::optional<Frame> frame = readFrameBefore(root_fd(), rootReader_, deadline, rootName())) {
        if (frame->type == FrameType::Failure) return decodeFailure(frame->payload.data(), frame->payload.size());
      }
    } catch (const Error&) {
    }
    return std::nullopt;
  }

  // Tells the root why this rank cannot go on, then throws the root's verdict (the first failure it heard, the
  // same line every rank prints) or, when the root says nothing in time, this rank's own.
  [[noreturn]] void giveUp(ErrorCode code, const std::string& message) {
    try {
      const std::vector<std::uint8_t> failure = encodeFailure({code, message});
      writeFrame(root_fd(), FrameType::Failure, 0, failure.data(), failure.size(), deadlineAfter(kReportTimeout),
                 rootName());
    } catch (const Error&) {
    }
    if (const std::optional<Failure> verdict = rootVerdict(deadlineAfter(kVerdictGrace))) {
      throw Error(verdict->code, verdict->message);
    }
    throw Error(code, message);
  }

  void awaitGo(DeadlineClock::time_point deadline) {
    const Frame frame = awaitRoot(deadline, "every rank to connect to its peers");
    if (frame.type != FrameType::Go) {
      throw Error(ErrorCode::InvalidInput,
                  fmt::format("{}: {} sent a {} frame, not go", me(), rootName(), frameTypeName(frame.type)));
    }
  }

  const UniqueIdContents id_;
  const int rank_;
  const int nranks_;
  const BootstrapOptions options_;
  const std::string root_;
  FileDescriptor rootSocket_;
  FrameReader rootReader_{kMaxWorldBytes};
  FileDescriptor listener_;
  Hello self_;
};

}  // namespace
}  // namespace bootstrap

using std::chrono::milliseconds;

void checkBootstrapPeer(const char* call, int rank, int size, int peer, int tag) {
  if (peer < 0 || peer >= size) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("bootstrap {} on rank {}: peer {} is outside the world of {} ranks", call, rank, peer, size));
  }
  if (tag < 0) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("bootstrap {} on rank {}: tag {} is negative (tags below 0 are the bootstrap's own)", call,
                            rank, tag));
  }
}

void checkBootstrapData(const char* call, const void* data, std::size_t bytes) {
  if (data == nullptr && bytes > 0) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("bootstrap {}: null data of {} bytes", call, bytes));
  }
  if (bytes > kMaxBootstrapMessageBytes) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("bootstrap {}: {} bytes is more than the {} one message may carry",
                                                     call, bytes, kMaxBootstrapMessageBytes));
  }
}

BootstrapOptions BootstrapOptions::fromParams(const Params& params) {
  BootstrapOptions options;
  options.deadline = milliseconds(params.getInt("PEERLINK_BOOTSTRAP_TIMEOUT_MS"));
  options.hostId = params.getString("PEERLINK_HOSTID");
  return options;
}

std::unique_ptr<Bootstrap> connectBootstrap(const UniqueId& id, int rank, int nranks, const BootstrapOptions& options) {
  if (nranks < 1 || nranks > kMaxBootstrapRanks) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("connectBootstrap: a world of {} ranks (1 to {} allowed)", nranks, kMaxBootstrapRanks));
  }
  if (rank < 0 || rank >= nranks) {
    throw Error(
        ErrorCode::InvalidUsage,
        fmt::format("connectBootstrap: rank {} is outside the world of {} ranks (0 to {})", rank, nranks, nranks - 1));
  }
  if (options.deadline <= milliseconds::zero()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("connectBootstrap: the deadline must be positive ({} ms given)", options.deadline.count()));
  }
  const bootstrap::UniqueIdContents contents = bootstrap::decodeUniqueId(id);
  return bootstrap::Rendezvous(contents, rank, nranks, options).run();
}

}  // namespace peerlink
