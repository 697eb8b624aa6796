// Bootstrap sockets between real processes: the child side of each test runs in a fork()ed process that
// reports through its exit code (and messages on the socket), never through gtest.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "child_process.hpp"
#include "core/private_directory.hpp"
#include "core/unix_socket.hpp"
#include "full_filesystem.hpp"
#include "peerlink/error.hpp"
#include "scratch_dir.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using namespace ::peerlink::testing;  // the forked-child harness

std::string text(const std::vector<std::uint8_t>& data) {
  return std::string(data.begin(), data.end());
}
void send(UnixConnection& connection, const std::string& message) {
  connection.sendMessage(message.data(), message.size(), kLong);
}

// Writes a raw frame header (and `extra` payload bytes) straight onto the socket.
void sendRawHeader(UnixConnection& connection, std::uint64_t size, std::size_t headerBytes, std::size_t extra) {
  UnixFrameHeader header;
  header.magic = kUnixFrameMagic;
  header.size = size;
  std::vector<char> raw(reinterpret_cast<char*>(&header), reinterpret_cast<char*>(&header) + headerBytes);
  raw.resize(headerBytes + extra, 'x');
  if (::send(connection.fd(), raw.data(), raw.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(raw.size())) {
    throw Error(ErrorCode::SystemError, "raw send");
  }
}

long long elapsedMs(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
}

class UnixSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/peerlink-test-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr) << std::strerror(errno);
    directory_ = name;
    options_.directory = directory_;
  }
  void TearDown() override {
    if (DIR* dir = ::opendir(directory_.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") ::unlink((directory_ + "/" + name).c_str());
      }
      ::closedir(dir);
    }
    ::rmdir(directory_.c_str());
  }
  std::string pathOf(const std::string& name) const { return directory_ + "/" + name; }

  std::string directory_;
  UnixListenerOptions options_;
};

TEST_F(UnixSocketTest, MessagesRoundTripBothWays) {
  UnixListener listener("round-trip.sock", options_);
  std::vector<std::uint8_t> big(4 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7 + 3);

  Child child([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    send(connection, "ping from child");
    if (text(connection.receiveMessage(kLong)) != "pong from parent") return kChildWrongResult;
    if (!connection.receiveMessage(kLong).empty()) return kChildWrongResult;
    const std::vector<std::uint8_t> echo = connection.receiveMessage(kLong);
    connection.sendMessage(echo.data(), echo.size(), kLong);
    return connection.peerUid() == ::geteuid() && connection.peerPid() == ::getppid() ? kChildOk : kChildWrongResult;
  });

  UnixConnection connection = listener.accept(kLong);
  EXPECT_EQ(connection.peerPid(), child.pid());
  EXPECT_EQ(connection.peerUid(), ::geteuid());
  EXPECT_EQ(connection.path(), listener.path());
  EXPECT_EQ(text(connection.receiveMessage(kLong)), "ping from child");
  send(connection, "pong from parent");
  connection.sendMessage(nullptr, 0, kLong);
  connection.sendMessage(big.data(), big.size(), kLong);
  EXPECT_TRUE(connection.receiveMessage(kLong) == big);
  EXPECT_EQ(child.wait(), kChildOk);
}

TEST_F(UnixSocketTest, PassesFileDescriptors) {
  UnixListener listener("fd.sock", options_);
  const std::string content = "bytes only reachable through the passed descriptor";
  FileDescriptor memory(::memfd_create("peerlink-test", MFD_CLOEXEC));
  ASSERT_TRUE(memory.valid()) << std::strerror(errno);
  ASSERT_EQ(::write(memory.get(), content.data(), content.size()), static_cast<ssize_t>(content.size()));

  Child child([&] {
    memory.reset();  // the child must read through the received descriptor, not the inherited one
    UnixConnection connection = connectUnix(listener.path(), kLong);
    ReceivedFd received = connection.receiveFd(kLong);
    if (text(received.payload) != "memfd" || !received.fd) return kChildWrongResult;
    const int flags = ::fcntl(received.fd.get(), F_GETFD);
    if (flags < 0 || (flags & FD_CLOEXEC) == 0) return 2;
    std::vector<char> buffer(256);
    const ssize_t n = ::pread(received.fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0) return 3;
    connection.sendMessage(buffer.data(), static_cast<std::size_t>(n), kLong);
    return kChildOk;
  });

  UnixConnection connection = listener.accept(kLong);
  connection.sendFd(memory.get(), "memfd", 5, kLong);
  EXPECT_GE(::fcntl(memory.get(), F_GETFD), 0) << "sendFd must leave the caller's descriptor open";
  EXPECT_EQ(text(connection.receiveMessage(kLong)), content);
  EXPECT_EQ(child.wait(), kChildOk);
}

TEST_F(UnixSocketTest, FramesOfTheOtherKindAreRejected) {
  UnixListener listener("kinds.sock", options_);
  UnixConnection client = connectUnix(listener.path(), kLong);
  UnixConnection server = listener.accept(kLong);
  send(client, "plain");
  const Error noFd = expectError(ErrorCode::InvalidInput, [&] { server.receiveFd(kLong); });
  EXPECT_NE(std::string(noFd.what()).find("expected a file descriptor"), std::string::npos) << noFd.what();

  UnixConnection client2 = connectUnix(listener.path(), kLong);
  UnixConnection server2 = listener.accept(kLong);
  client2.sendFd(STDIN_FILENO, nullptr, 0, kLong);
  const Error fdSent = expectError(ErrorCode::InvalidInput, [&] { server2.receiveMessage(kLong); });
  EXPECT_NE(std::string(fdSent.what()).find("expected a message"), std::string::npos) << fdSent.what();
}

TEST_F(UnixSocketTest, SocketFileIsOwnerOnlyWhateverTheUmaskAndRemovedAfterwards) {
  const mode_t saved = ::umask(0);
  std::string path;
  {
    UnixListener listener("mode.sock", options_);
    EXPECT_EQ(::umask(saved), 0) << "the listener must restore the umask";
    path = listener.path();
    struct stat status {};
    ASSERT_EQ(::lstat(path.c_str(), &status), 0) << std::strerror(errno);
    EXPECT_TRUE(S_ISSOCK(status.st_mode));
    EXPECT_EQ(status.st_mode & 07777, 0600u) << std::oct << (status.st_mode & 07777);
    EXPECT_EQ(status.st_uid, ::geteuid());
  }
  struct stat status {};
  EXPECT_NE(::lstat(path.c_str(), &status), 0) << "the listener must unlink its socket";
}

TEST_F(UnixSocketTest, RefusesPeerWithForeignUid) {
  options_.allowedUid = ::geteuid() + 1;
  UnixListener listener("foreign.sock", options_);
  Child child([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    return childExpectsError(ErrorCode::RemoteError, "closed the connection",
                             [&] { connection.receiveMessage(kLong); });
  });
  const Error error = expectError(ErrorCode::RemoteError, [&] { listener.accept(kLong); });
  const std::string message = error.what();
  EXPECT_NE(message.find(fmt::format("refused connection from uid {}", ::geteuid())), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("only uid {} may connect", ::geteuid() + 1)), std::string::npos) << message;
  EXPECT_EQ(child.wait(), kChildOk);
}

TEST_F(UnixSocketTest, ConnectRefusesListenerWithForeignUid) {
  UnixListener listener("foreign-listener.sock", options_);
  const Error error =
      expectError(ErrorCode::RemoteError, [&] { connectUnix(listener.path(), kLong, ::geteuid() + 1); });
  const std::string message = error.what();
  EXPECT_NE(message.find(fmt::format("runs as uid {}", ::geteuid())), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("only uid {} is trusted", ::geteuid() + 1)), std::string::npos) << message;
}

TEST_F(UnixSocketTest, AcceptTimesOutWhenNobodyConnects) {
  UnixListener listener("lonely.sock", options_);
  const auto start = Clock::now();
  const Error error = expectError(ErrorCode::Timeout, [&] { listener.accept(200ms); });
  const long long elapsed = elapsedMs(start);
  EXPECT_GE(elapsed, 200);
  EXPECT_LT(elapsed, 2000);
  const std::string message = error.what();
  EXPECT_NE(message.find("accept"), std::string::npos) << message;
  EXPECT_NE(message.find(listener.path()), std::string::npos) << message;
  EXPECT_NE(message.find("200 ms"), std::string::npos) << message;
}

TEST_F(UnixSocketTest, ReceiveTimesOutWhenPeerIsSilent) {
  UnixListener listener("silent.sock", options_);
  Child child([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    return text(connection.receiveMessage(kLong)) == "done" ? kChildOk : kChildWrongResult;
  });
  UnixConnection connection = listener.accept(kLong);
  const auto start = Clock::now();
  const Error error = expectError(ErrorCode::Timeout, [&] { connection.receiveMessage(200ms); });
  const long long elapsed = elapsedMs(start);
  EXPECT_GE(elapsed, 200);
  EXPECT_LT(elapsed, 2000);
  const std::string message = error.what();
  EXPECT_NE(message.find("receiveMessage"), std::string::npos) << message;
  EXPECT_NE(message.find(listener.path()), std::string::npos) << message;
  EXPECT_NE(message.find("200 ms"), std::string::npos) << message;
  send(connection, "done");
  EXPECT_EQ(child.wait(), kChildOk);
}

TEST_F(UnixSocketTest, PeerDyingMidFrameIsRemoteErrorNotAHang) {
  struct Case {
    std::size_t headerBytes, extra;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {sizeof(UnixFrameHeader) / 2, 0,
       fmt::format("after {} of {} frame header bytes", sizeof(UnixFrameHeader) / 2, sizeof(UnixFrameHeader))},
      {sizeof(UnixFrameHeader), 10, "after 10 of 1000 payload bytes"},
  };
  UnixListener listener("dying.sock", options_);
  for (const Case& c : cases) {
    Child child([&] {
      UnixConnection connection = connectUnix(listener.path(), kLong);
      sendRawHeader(connection, 1000, c.headerBytes, c.extra);
      ::_exit(kChildOk);
      return kChildOk;
    });
    UnixConnection connection = listener.accept(kLong);
    const auto start = Clock::now();
    const Error error = expectError(ErrorCode::RemoteError, [&] { connection.receiveMessage(kLong); });
    EXPECT_LT(elapsedMs(start), 2000);
    EXPECT_NE(std::string(error.what()).find(c.expected), std::string::npos) << error.what();
    EXPECT_EQ(child.wait(), kChildOk);
  }
}

TEST_F(UnixSocketTest, SendingToAClosedPeerIsRemoteErrorNotSigpipe) {
  UnixListener listener("closed.sock", options_);
  Child child([&] {
    connectUnix(listener.path(), kLong);
    return kChildOk;
  });
  UnixConnection connection = listener.accept(kLong);
  ASSERT_EQ(child.wait(), kChildOk);
  const Error error = expectError(ErrorCode::RemoteError, [&] { send(connection, "anyone there?"); });
  EXPECT_NE(std::string(error.what()).find("closed the connection"), std::string::npos) << error.what();
}

TEST_F(UnixSocketTest, ConnectTimesOutWhenNobodyListens) {
  const std::string path = pathOf("nobody.sock");
  const auto start = Clock::now();
  const Error error = expectError(ErrorCode::Timeout, [&] { connectUnix(path, 300ms); });
  const long long elapsed = elapsedMs(start);
  EXPECT_GE(elapsed, 300);
  EXPECT_LT(elapsed, 2000);
  const std::string message = error.what();
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("300 ms"), std::string::npos) << message;
}

TEST_F(UnixSocketTest, ConnectWaitsForALateListener) {
  const std::string name = "late.sock";
  Child child([&] {
    std::this_thread::sleep_for(150ms);
    UnixListener listener(name, options_);
    UnixConnection connection = listener.accept(kLong);
    return text(connection.receiveMessage(kLong)) == "hello" ? kChildOk : kChildWrongResult;
  });
  UnixConnection connection = connectUnix(pathOf(name), kLong);
  EXPECT_EQ(connection.peerPid(), child.pid());
  send(connection, "hello");
  EXPECT_EQ(child.wait(), kChildOk);
  struct stat status {};
  EXPECT_NE(::lstat(pathOf(name).c_str(), &status), 0) << "the child's listener must unlink its socket";
}

TEST_F(UnixSocketTest, OversizedFramesAreRejected) {
  UnixListener listener("big.sock", options_);
  Child child([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    sendRawHeader(connection, kMaxUnixMessageBytes + 1, sizeof(UnixFrameHeader), 0);
    return text(connection.receiveMessage(kLong)) == "done" ? kChildOk : kChildWrongResult;
  });
  UnixConnection connection = listener.accept(kLong);
  const Error received = expectError(ErrorCode::InvalidInput, [&] { connection.receiveMessage(kLong); });
  EXPECT_NE(std::string(received.what()).find(std::to_string(kMaxUnixMessageBytes)), std::string::npos)
      << received.what();

  const std::vector<std::uint8_t> tooBig(kMaxUnixMessageBytes + 1);
  const Error sent =
      expectError(ErrorCode::InvalidUsage, [&] { connection.sendMessage(tooBig.data(), tooBig.size(), kLong); });
  EXPECT_NE(std::string(sent.what()).find("more than"), std::string::npos) << sent.what();
  send(connection, "done");  // nothing of the refused message went out
  EXPECT_EQ(child.wait(), kChildOk);
}

TEST_F(UnixSocketTest, PathsThatDoNotFitAreRejected) {
  const std::size_t limit = sizeof(sockaddr_un{}.sun_path) - 1;
  const std::string longest(limit - directory_.size() - 1, 'n');
  EXPECT_NO_THROW(UnixListener(longest, options_));
  const Error error = expectError(ErrorCode::InvalidUsage, [&] { UnixListener(longest + "n", options_); });
  EXPECT_NE(std::string(error.what()).find("is " + std::to_string(limit + 1) + " bytes long"), std::string::npos)
      << error.what();
  expectError(ErrorCode::InvalidUsage, [&] { connectUnix(pathOf(longest + "n"), 100ms); });
  expectError(ErrorCode::InvalidUsage, [&] { UnixListener("sub/dir.sock", options_); });
  expectError(ErrorCode::InvalidUsage, [&] { UnixListener("", options_); });
}

TEST_F(UnixSocketTest, ALiveListenerIsNeverReplaced) {
  UnixListener first("taken.sock", options_);
  const Error error = expectError(ErrorCode::SystemError, [&] { UnixListener("taken.sock", options_); });
  EXPECT_NE(std::string(error.what()).find("bind(" + first.path() + ")"), std::string::npos) << error.what();
  UnixConnection client = connectUnix(first.path(), kLong);
  EXPECT_EQ(first.accept(kLong).peerPid(), ::getpid());
}

TEST_F(UnixSocketTest, ExtremeTimeoutsNeitherOverflowNorBlock) {
  UnixListener listener("extreme.sock", options_);
  Child child([&] {
    std::this_thread::sleep_for(50ms);
    UnixConnection connection = connectUnix(listener.path(), milliseconds::max());
    std::this_thread::sleep_for(50ms);
    send(connection, "x");
    return text(connection.receiveMessage(kLong)) == "done" ? kChildOk : kChildWrongResult;
  });
  UnixConnection connection = listener.accept(milliseconds::max());  // must wait, not time out at once
  EXPECT_EQ(text(connection.receiveMessage(milliseconds::max())), "x");
  expectError(ErrorCode::Timeout, [&] { connection.receiveMessage(milliseconds(-5)); });
  expectError(ErrorCode::Timeout, [&] { listener.accept(0ms); });
  send(connection, "done");
  EXPECT_EQ(child.wait(), kChildOk);
}

// Listeners go where no other user can plant a name first: a directory of this uid, mode 0700.
TEST(UnixSocketDirectory, DefaultIsPrivateToThisUser) {
  const std::string directory = defaultSocketDirectory();
  EXPECT_EQ(directory, runtimeDirectory() + "/peerlink-" + std::to_string(::geteuid()));
  struct stat status {};
  ASSERT_EQ(::lstat(directory.c_str(), &status), 0) << directory;
  EXPECT_TRUE(S_ISDIR(status.st_mode));
  EXPECT_EQ(status.st_uid, ::geteuid());
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  const UnixListener listener("peerlink-default-" + std::to_string(::getpid()) + ".sock");
  EXPECT_EQ(listener.path().rfind(directory + "/", 0), 0u) << listener.path();
  ASSERT_EQ(::lstat(listener.path().c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
}

TEST(UnixSocketDirectory, WhatIsNotPrivateIsRefusedNotUsed) {
  ScratchDir scratch;
  const std::string made = privateDirectory(scratch / "", "mine");
  EXPECT_EQ(made, scratch / "mine");
  EXPECT_EQ(privateDirectory(scratch / "", "mine"), made);  // found again as it is
  const auto refused = [&](const std::string& name, const std::string& needle) {
    const Error error = expectError(ErrorCode::SystemError, [&] { privateDirectory(scratch / "", name); });
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("remove it"), std::string::npos) << error.what();
  };
  ASSERT_EQ(::mkdir((scratch / "open").c_str(), 0755), 0);
  refused("open", "mode 0755");
  ASSERT_EQ(::symlink(made.c_str(), (scratch / "link").c_str()), 0);
  refused("link", "a symbolic link");
  const int file = ::open((scratch / "file").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  ::close(file);
  refused("file", "not a directory");
  if (::geteuid() == 0) {  // someone else's directory, as root can make one
    ASSERT_EQ(::mkdir((scratch / "theirs").c_str(), 0700), 0);
    ASSERT_EQ(::chown((scratch / "theirs").c_str(), 12345, 12345), 0);
    refused("theirs", "owned by uid 12345");
  }
}

// No room for the directory or the socket: the error says which file system is full, never a hang or a crash.
TEST(UnixSocketDirectory, AFullFileSystemIsNamed) {
  ScratchDir scratch;
  const std::string full = scratch / "full";
  ASSERT_EQ(::mkdir(full.c_str(), 0700), 0);
  Child probe([&] { return mountFullTmpfs(full).empty() ? kChildOk : kChildWrongResult; });
  if (probe.wait() != kChildOk) {
    Child why([&] {
      std::fprintf(stderr, "%s\n", mountFullTmpfs(full).c_str());
      return kChildOk;
    });
    why.wait();
    GTEST_SKIP() << "cannot mount a full tmpfs here (needs root; the reason is on stderr)";
  }
  Child child([&] {
    if (!mountFullTmpfs(full).empty()) return kChildWrongResult;
    const int directory = childExpectsError(ErrorCode::SystemError, "has no room for a directory",
                                            [&] { privateDirectory(full, "peerlink-0"); });
    if (directory != kChildOk) return directory;
    UnixListenerOptions options;
    options.directory = full;
    return childExpectsError(ErrorCode::SystemError, "No space left on device (the file system is full",
                             [&] { UnixListener("a.sock", options); });
  });
  EXPECT_EQ(child.wait(), kChildOk);
}

}  // namespace
}  // namespace peerlink
