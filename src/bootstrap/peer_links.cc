#include "bootstrap/peer_links.hpp"

#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "bootstrap/hello.hpp"
#include "core/log.hpp"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every Linux architecture (since 5.3)
#endif

namespace peerlink::bootstrap {
namespace {

FileDescriptor openPidfd(pid_t pid) {
  // No ptrace rights needed (unlike pidfd_getfd); ENOSYS on kernels before 5.3, where the connection's end
  // alone tells that a peer exited.
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return FileDescriptor(fd >= 0 ? static_cast<int>(fd) : -1);
}

}  // namespace

PeerLinks::PeerLinks(int self, std::vector<PeerIdentity> peers, std::vector<PeerSocket> sockets)
    : self_(self), peers_(std::move(peers)), owner_(::getpid()) {
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) throwSystemError("eventfd (bootstrap watchdog)", errno);
  for (std::size_t rank = 0; rank < sockets.size(); ++rank) {
    auto link = std::make_unique<Link>();
    link->fd = std::move(sockets[rank].fd);
    link->reader = std::move(sockets[rank].reader);
    if (!link->reader) link->reader = std::make_unique<FrameReader>(kMaxBootstrapMessageBytes);
    link->reader->setMaxPayload(kMaxBootstrapMessageBytes);
    if (static_cast<int>(rank) != self && sockets[rank].watchPid) link->pidfd = openPidfd(peers_[rank].pid);
    link->reading = link->fd.valid();
    links_.push_back(std::move(link));
  }
  thread_ = std::thread([this] { watch(); });
}

PeerLinks::~PeerLinks() {
  if (::getpid() != owner_) {
    // A forked child holds copies of these objects but not the watchdog thread, and its eventfd is the parent's:
    // waking it would stop the parent's watchdog. Leave the thread object alone (leaked) and close our copies.
    new std::thread(std::move(thread_));
    return;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  for (auto& link : links_) drainAndClose(link->fd);
}

void PeerLinks::send(int peer, FrameType type, std::int32_t tag, const void* data, std::size_t size,
                     DeadlineClock::time_point deadline) {
  Link& link = *links_.at(static_cast<std::size_t>(peer));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (link.state != State::Live) throw Error(ErrorCode::RemoteError, link.why);
  }
  std::lock_guard<std::timed_mutex> sending(link.sendMutex);
  writeFrame(link.fd.get(), type, tag, data, size, deadline, describePeer(peers_[static_cast<std::size_t>(peer)]));
}

void PeerLinks::sendFarewell(int peer, FrameType type, const std::vector<std::uint8_t>& payload,
                             DeadlineClock::time_point deadline) noexcept {
  try {
    Link& link = *links_.at(static_cast<std::size_t>(peer));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (link.state == State::Departed) return;
    }
    // Another thread may be sending to this peer, and stay in its send until its own (much later) deadline when
    // the peer reads nothing: the farewell is skipped past its deadline rather than hold up an abort.
    std::unique_lock<std::timed_mutex> sending(link.sendMutex, std::defer_lock);
    if (!sending.try_lock_until(deadline)) return;
    writeFrame(link.fd.get(), type, 0, payload.data(), payload.size(), deadline,
               describePeer(peers_[static_cast<std::size_t>(peer)]));
  } catch (...) {
  }
}

void PeerLinks::deliverToSelf(std::int32_t tag, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mailboxes_[{self_, tag}].emplace_back(bytes, bytes + size);
  }
  arrived_.notify_all();
}

std::vector<std::vector<std::uint8_t>> PeerLinks::receiveFromEach(
    const std::vector<int>& from, std::int32_t tag, DeadlineClock::time_point deadline, const std::string& operation,
    const std::function<std::string(const std::vector<int>& missing)>& timeoutMessage) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (!selfAborted_.empty()) {
      throw Error(ErrorCode::RemoteError, fmt::format("{}: this rank aborted ({})", operation, selfAborted_));
    }
    std::vector<int> missing;
    for (const int peer : from) {
      auto box = mailboxes_.find({peer, tag});
      if (box != mailboxes_.end() && !box->second.empty()) continue;
      const Link& link = *links_[static_cast<std::size_t>(peer)];
      if (peer != self_ && link.state != State::Live) {
        throw Error(ErrorCode::RemoteError, fmt::format("{}: {}", operation, link.why));
      }
      missing.push_back(peer);
    }
    if (missing.empty()) break;
    if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout && DeadlineClock::now() >= deadline) {
      throw Error(ErrorCode::Timeout, timeoutMessage(missing));
    }
  }
  std::vector<std::vector<std::uint8_t>> messages;
  for (const int peer : from) {
    auto& box = mailboxes_[{peer, tag}];
    messages.push_back(std::move(box.front()));
    box.pop_front();
  }
  return messages;
}

void PeerLinks::markSelfAborted(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    selfAborted_ = reason.empty() ? "no reason given" : reason;
  }
  arrived_.notify_all();
}

std::string PeerLinks::selfAborted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return selfAborted_;
}

void PeerLinks::onPeerLost(PeerLostCallback callback) {
  std::vector<std::pair<int, std::string>> lost;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    callback_ = callback;
    for (std::size_t rank = 0; rank < links_.size(); ++rank) {
      if (links_[rank]->state == State::Lost) lost.emplace_back(static_cast<int>(rank), links_[rank]->why);
    }
  }
  if (!callback) return;
  std::lock_guard<std::mutex> serial(callbackMutex_);
  for (const auto& [rank, why] : lost) callback(rank, why);
}

void PeerLinks::watch() noexcept {
  try {
    for (;;) {
      std::vector<pollfd> polled{{wake_.get(), POLLIN, 0}};
      std::vector<std::pair<int, bool>> owners;  // (rank, is the pidfd)
      for (std::size_t rank = 0; rank < links_.size(); ++rank) {
        Link& link = *links_[rank];
        if (link.reading) {
          polled.push_back({link.fd.get(), POLLIN, 0});
          owners.emplace_back(static_cast<int>(rank), false);
        }
        if (link.pidfd) {
          polled.push_back({link.pidfd.get(), POLLIN, 0});
          owners.emplace_back(static_cast<int>(rank), true);
        }
      }
      // The one wait without a deadline in the bootstrap: this thread serves until its owner stops it (the
      // destructor writes the eventfd), as a server's accept loop does.
      if (::poll(polled.data(), polled.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throwSystemError("poll (bootstrap watchdog)", errno);
      }
      if (polled[0].revents != 0) return;
      std::vector<std::pair<int, std::string>> lost;
      for (std::size_t i = 1; i < polled.size(); ++i) {
        if (polled[i].revents == 0) continue;
        const auto [rank, isPidfd] = owners[i - 1];
        Link& link = *links_[static_cast<std::size_t>(rank)];
        if (!isPidfd) {
          if (link.reading) readPeer(rank, lost);
          continue;
        }
        // The process ended. What it sent before is in the socket's buffer: file it before saying it is gone.
        if (link.reading) readPeer(rank, lost);
        link.pidfd.reset();
        markGone(rank, State::Lost, fmt::format("{} exited", describePeer(peers_[static_cast<std::size_t>(rank)])),
                 lost);
      }
      report(lost);
    }
  } catch (const std::exception& error) {
    logWarn(LogSubsys::Init, "bootstrap watchdog of rank {} stopped: {}", self_, error.what());
  }
}

void PeerLinks::readPeer(int peer, std::vector<std::pair<int, std::string>>& lost) {
  Link& link = *links_[static_cast<std::size_t>(peer)];
  const std::string who = describePeer(peers_[static_cast<std::size_t>(peer)]);
  const FrameReader::Status status = link.reader->readFrom(link.fd.get());
  bool filed = false;
  try {
    while (std::optional<Frame> frame = link.reader->next()) {
      if (frame->type == FrameType::Data) {
        std::lock_guard<std::mutex> lock(mutex_);
        mailboxes_[{peer, frame->tag}].push_back(std::move(frame->payload));
        filed = true;
      } else if (frame->type == FrameType::Abort) {
        const Failure failure = decodeFailure(frame->payload.data(), frame->payload.size());
        markGone(peer, State::Lost, fmt::format("{} aborted: {}", who, failure.message), lost);
      } else if (frame->type == FrameType::Bye) {
        markGone(peer, State::Departed, fmt::format("{} has closed its bootstrap", who), lost);
      } else {
        throw Error(ErrorCode::InvalidInput, fmt::format("an unexpected {} frame", frameTypeName(frame->type)));
      }
    }
  } catch (const Error& error) {
    if (error.code() != ErrorCode::InvalidInput) throw;
    link.reading = false;
    markGone(peer, State::Lost, fmt::format("{} broke the bootstrap protocol: {}", who, error.what()), lost);
  }
  if (filed) arrived_.notify_all();
  if (status == FrameReader::Status::Closed && link.reading) {
    link.reading = false;
    markGone(peer, State::Lost,
             fmt::format("{} exited: its bootstrap connection closed without a goodbye{}", who,
                         closeDetail(link.reader->closeReason())),
             lost);
  }
}

void PeerLinks::markGone(int peer, State state, const std::string& why,
                         std::vector<std::pair<int, std::string>>& lost) {
  bool news = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Link& link = *links_[static_cast<std::size_t>(peer)];
    if (link.state != State::Live) return;  // the first cause wins; a goodbye before the end is no loss
    link.state = state;
    link.why = why;
    // A rank that aborted is leaving: its peers going away is what it expects, not news to report.
    news = state == State::Lost && selfAborted_.empty();
  }
  arrived_.notify_all();
  if (news) {
    logWarn(LogSubsys::Init, "bootstrap rank {}: {}", self_, why);
    lost.emplace_back(peer, why);
  }
}

void PeerLinks::report(const std::vector<std::pair<int, std::string>>& lost) {
  if (lost.empty()) return;
  PeerLostCallback callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    callback = callback_;
  }
  if (!callback) return;
  std::lock_guard<std::mutex> serial(callbackMutex_);
  for (const auto& [rank, why] : lost) {
    try {
      callback(rank, why);
    } catch (const std::exception& error) {
      logWarn(LogSubsys::Init, "bootstrap rank {}: the peer-lost callback threw: {}", self_, error.what());
    }
  }
}

}  // namespace peerlink::bootstrap
