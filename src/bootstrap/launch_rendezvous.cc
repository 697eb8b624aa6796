// connectLaunchBootstrap: ranks started by a launcher meet without an id passed, through a private file on
// one machine or at a well-known address across machines (chooseLaunchRendezvous decides).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "bootstrap/identity.hpp"
#include "bootstrap/root.hpp"
#include "bootstrap/unique_id.hpp"
#include "core/log.hpp"
#include "core/private_directory.hpp"
#include "core/unix_socket.hpp"
#include "peerlink/launch.hpp"

namespace peerlink {
namespace {

using std::chrono::milliseconds;

std::string idFilePath(const std::string& directory, const std::string& jobKey) {
  return fmt::format("{}/job-{:016x}.id", directory, bootstrap::fnv1a64(jobKey));
}

// Writes the id where the others look, atomically (a reader sees all of it or nothing). Returns the file's inode.
ino_t publishId(const std::string& path, const UniqueId& id) {
  const std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
  FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!file) throwSystemError(fmt::format("open({})", temporary), errno);
  const std::string text = uniqueIdToString(id) + "\n";
  if (::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throwSystemError(fmt::format("write({})", temporary), error);
  }
  struct stat status {};
  ::fstat(file.get(), &status);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throwSystemError(fmt::format("rename({}, {})", temporary, path), error);
  }
  return status.st_ino;
}

// Removes the id file once this rank is done with it, if it is still the one it wrote.
class PublishedId {
 public:
  PublishedId(std::string path, ino_t inode) : path_(std::move(path)), inode_(inode) {}
  ~PublishedId() {
    struct stat status {};
    if (::lstat(path_.c_str(), &status) == 0 && status.st_ino == inode_) ::unlink(path_.c_str());
  }
  PublishedId(const PublishedId&) = delete;
  PublishedId& operator=(const PublishedId&) = delete;

 private:
  std::string path_;
  ino_t inode_;
};

// Waits for rank 0's id file: a regular file of this uid, mode 0600, holding an id.
UniqueId awaitId(const std::string& path, int rank, milliseconds deadline) {
  const auto end = deadlineAfter(deadline);
  milliseconds pause{5};
  for (;;) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) == 0) {
      if (!S_ISREG(status.st_mode) || status.st_uid != ::geteuid() || (status.st_mode & 077) != 0) {
        throw Error(ErrorCode::SystemError,
                    fmt::format("rank {}: {} is not a private file of uid {} (uid {}, mode {:04o}): remove it", rank,
                                path, ::geteuid(), status.st_uid, status.st_mode & 07777));
      }
      std::ifstream file(path);
      std::stringstream text;
      text << file.rdbuf();
      try {
        return uniqueIdFromString(text.str());
      } catch (const Error& error) {
        throw Error(ErrorCode::InvalidInput,
                    fmt::format("rank {}: {} does not hold a unique id: {}", rank, path, error.what()));
      }
    }
    const auto left = end - DeadlineClock::now();
    if (left <= DeadlineClock::duration::zero()) {
      throw Error(ErrorCode::Timeout,
                  fmt::format("rank {} found no bootstrap id from rank 0 at {} within {} (has rank 0 started? every "
                              "rank must run on this machine as uid {})",
                              rank, path, bootstrap::formatSeconds(deadline), ::geteuid()));
    }
    std::this_thread::sleep_for(std::min<DeadlineClock::duration>(left, pause));
    pause = std::min(pause * 2, milliseconds(100));
  }
}

// Address mode's token: anyone who knows the job key can compute it (docs/bootstrap.md says so).
bootstrap::Token tokenFromJobKey(const std::string& jobKey) {
  bootstrap::Token token{};
  const std::uint64_t halves[2] = {bootstrap::fnv1a64("peerlink-token-a:" + jobKey),
                                   bootstrap::fnv1a64("peerlink-token-b:" + jobKey)};
  for (std::size_t i = 0; i < token.size(); ++i) token[i] = static_cast<std::uint8_t>(halves[i / 8] >> (8 * (i % 8)));
  return token;
}

}  // namespace

std::unique_ptr<Bootstrap> connectLaunchBootstrap(const LaunchEnvironment& launch, const Params& params,
                                                  const LaunchBootstrapOptions& options) {
  if (launch.launcher == Launcher::None) {
    throw Error(ErrorCode::InvalidUsage,
                "no launcher's variables (torchrun, Open MPI, PMI, Slurm) are set: start the "
                "ranks with a launcher, or pass a unique id");
  }
  const std::string setting = params.getString("PEERLINK_BOOTSTRAP_ADDR");
  const LaunchRendezvous choice = chooseLaunchRendezvous(launch, setting);
  const std::string jobKey = launch.jobKey.empty() ? fmt::format("parent:{}", ::getppid()) : launch.jobKey;
  const milliseconds timeout = options.bootstrap.deadline;

  if (choice.kind == LaunchRendezvous::Kind::File) {
    const std::string directory = privateDirectory(options.directory.empty() ? runtimeDirectory() : options.directory,
                                                   fmt::format("peerlink-bootstrap-{}", ::geteuid()));
    const std::string path = idFilePath(directory, jobKey);
    logInfo(LogSubsys::Init, "bootstrap under {}: rank {} of {} meets through {} ({})", launcherName(launch.launcher),
            launch.rank, launch.size, path, choice.reason);
    if (launch.rank != 0)
      return connectBootstrap(awaitId(path, launch.rank, timeout), launch.rank, launch.size, options.bootstrap);
    // Every rank is on this machine: loopback unless PEERLINK_BOOTSTRAP_ADDR names an interface.
    const bootstrap::SocketAddress bind = bootstrap::rootBindAddress(setting.empty() ? "127.0.0.1" : setting, {});
    const UniqueId id = bootstrap::startRootForId(bind, bootstrap::randomToken(), timeout);
    const PublishedId published(path, publishId(path, id));
    return connectBootstrap(id, 0, launch.size, options.bootstrap);
  }

  const bootstrap::SocketAddress address = bootstrap::resolveAddress(choice.address, 0, "the rendezvous address");
  logInfo(LogSubsys::Init, "bootstrap under {}: rank {} of {} meets at {} ({}; authenticated by the job key only)",
          launcherName(launch.launcher), launch.rank, launch.size, bootstrap::formatAddress(address), choice.reason);
  bootstrap::UniqueIdContents contents;
  contents.token = tokenFromJobKey(jobKey);
  contents.root = bootstrap::toWireAddress(address);
  if (launch.rank == 0) {
    // Bound to every interface: the name other machines resolve may be an address this one does not list for it
    // (Debian maps its own hostname to 127.0.1.1).
    bootstrap::SocketAddress any;
    any.storage.ss_family = static_cast<sa_family_t>(address.family());
    any.length = address.length;
    any.setPort(address.port());
    bootstrap::startRoot(any, contents.token, timeout);
  }
  return connectBootstrap(bootstrap::encodeUniqueId(contents), launch.rank, launch.size, options.bootstrap);
}

}  // namespace peerlink
