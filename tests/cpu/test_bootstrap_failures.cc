// The bootstrap failing, with real processes on loopback: a rank that never arrives, a wrong token, a
// duplicated rank, a different world size, a different peerlink version, a rank killed mid-bootstrap, a root
// nobody can reach, strangers talking to the root. Every waiting rank prints the same line, at once or at the
// deadline, and the root ends.
#include <signal.h>
#include <unistd.h>

#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bootstrap/frame.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/tcp.hpp"
#include "bootstrap/unique_id.hpp"
#include "bootstrap_test_support.hpp"
#include "peerlink/version.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using namespace ::peerlink::testing;

constexpr auto kDeadline = 1000ms;

class BootstrapFailure : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_TRUE(rootsEndWithin(5s)) << "a bootstrap root is still running"; }
};

// A child that joins as `rank` of `nranks` and reports how it failed (kChildWrongResult when it did not).
ProcessWorld::Body failingRank(int rank, int nranks, std::chrono::milliseconds deadline = kDeadline) {
  return [=](const UniqueId& id, const Reporter& reporter) {
    return reportError(reporter, [&] { connectBootstrap(id, rank, nranks, optionsWith(deadline)); });
  };
}

// A child that joins and expects success.
ProcessWorld::Body succeedingRank(int rank, int nranks) {
  return [=](const UniqueId& id, const Reporter& reporter) {
    auto bootstrap = connectBootstrap(id, rank, nranks, optionsWith(3000ms));
    bootstrap->barrier();
    reporter.say("ok");
    return kChildOk;
  };
}

// succeedingRank(rank, nranks) that first sleeps `delay` (to arrive after something the test does).
ProcessWorld::Body lateRank(int rank, int nranks, std::chrono::milliseconds delay) {
  return [=](const UniqueId& id, const Reporter& reporter) {
    std::this_thread::sleep_for(delay);
    return succeedingRank(rank, nranks)(id, reporter);
  };
}

// The same id with another token: an id of another run, pointing at this root.
UniqueId withOtherToken(const UniqueId& id) {
  bootstrap::UniqueIdContents contents = bootstrap::decodeUniqueId(id);
  contents.token[0] ^= 0xff;
  return bootstrap::encodeUniqueId(contents);
}

TEST_F(BootstrapFailure, RankThatNeverArrivesIsNamedByEveryWaitingRank) {
  ProcessWorld world;
  for (const int rank : {0, 1, 3}) world.spawn(failingRank(rank, 4));  // rank 2 never comes
  const UniqueId id = makeUniqueId(loopbackParams(kDeadline));
  const auto start = Clock::now();
  world.start(id);
  const auto outcomes = world.finish();
  const long long elapsed = msSince(start);
  const std::string expected = fmt::format(
      "Timeout: rank 2 of 4 never reached the bootstrap root at {} within 1 s (arrived: 0-1, 3)", uniqueIdAddress(id));
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.exitCode, kChildOk);
    EXPECT_EQ(outcome.report, expected);
  }
  EXPECT_GE(elapsed, 900);
  EXPECT_LT(elapsed, 3000);
  EXPECT_TRUE(rootsEndWithin(1s));
}

TEST_F(BootstrapFailure, WrongTokenIsRefusedAtOnceAndTheWorldGoesOn) {
  ProcessWorld world;
  world.spawn(succeedingRank(0, 2));
  world.spawn([](const UniqueId& id, const Reporter& reporter) {
    const auto start = Clock::now();
    const int result = reportError(reporter, [&] { connectBootstrap(withOtherToken(id), 1, 2, optionsWith(3000ms)); });
    return result == kChildOk && msSince(start) < 1000 ? kChildOk : kChildWrongResult;
  });
  world.spawn(lateRank(1, 2, 200ms));  // after the stale one
  const UniqueId id = makeUniqueId(loopbackParams(3000ms));
  world.start(id);
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "ok");
  EXPECT_EQ(outcomes[2].report, "ok");
  EXPECT_EQ(outcomes[1].exitCode, kChildOk);
  EXPECT_TRUE(contains(outcomes[1].report, fmt::format("InvalidUsage: the bootstrap root at {} refused rank 1 (host",
                                                       uniqueIdAddress(id))));
  EXPECT_TRUE(contains(outcomes[1].report,
                       "its unique id's token is not this root's (an id of an earlier run, or of "
                       "another job?)"));
}

TEST_F(BootstrapFailure, RefusedTokensAreListedWhenTheRankNeverCame) {
  ProcessWorld world;
  world.spawn(failingRank(0, 2));
  world.spawn([](const UniqueId& id, const Reporter& reporter) {
    return reportError(reporter, [&] { connectBootstrap(withOtherToken(id), 1, 2, optionsWith(kDeadline)); });
  });
  world.start(makeUniqueId(loopbackParams(kDeadline)));
  const auto outcomes = world.finish();
  EXPECT_TRUE(contains(outcomes[0].report, "Timeout: rank 1 of 2 never reached"));
  EXPECT_TRUE(contains(outcomes[0].report, "(arrived: 0); it refused 1 connection: rank 1 (host"));
  EXPECT_TRUE(contains(outcomes[0].report, "with another token"));
}

TEST_F(BootstrapFailure, DuplicatedRankFailsEveryRankAtOnceNamingBoth) {
  ProcessWorld world;
  world.spawn(failingRank(0, 3, 3000ms));
  world.spawn(failingRank(1, 3, 3000ms));
  world.spawn(failingRank(1, 3, 3000ms));
  const auto start = Clock::now();
  world.start(makeUniqueId(loopbackParams(3000ms)));
  const auto outcomes = world.finish();
  EXPECT_LT(msSince(start), 2000);  // at once, not at the deadline
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.exitCode, kChildOk);
    EXPECT_EQ(outcome.report, outcomes[0].report);  // the same line everywhere
  }
  const std::string& line = outcomes[0].report;
  EXPECT_EQ(line.rfind("InvalidUsage: rank 1 (host ", 0), 0u) << line;
  EXPECT_TRUE(contains(line, "both claim rank 1: give each process its own rank"));
  // Both claimants named by pid; rank 0 is not.
  EXPECT_EQ(std::count(line.begin(), line.end(), '('), 2) << line;
}

TEST_F(BootstrapFailure, DifferentWorldSizeFailsNamingBothRanks) {
  ProcessWorld world;
  world.spawn(failingRank(0, 3, 3000ms));
  world.spawn(failingRank(1, 2, 3000ms));
  const auto start = Clock::now();
  world.start(makeUniqueId(loopbackParams(3000ms)));
  const auto outcomes = world.finish();
  EXPECT_LT(msSince(start), 2000);
  EXPECT_EQ(outcomes[0].report, outcomes[1].report);
  const std::string& line = outcomes[0].report;
  const bool oneFirst = line.find("rank 0 (host") < line.find("rank 1 (host");
  EXPECT_TRUE(contains(line, oneFirst ? "says the world has 3 ranks" : "says the world has 2 ranks"));
  EXPECT_TRUE(contains(
      line, oneFirst ? "says 2: give every rank the same world size" : "says 3: give every rank the same world size"));
  EXPECT_EQ(line.rfind("InvalidUsage: ", 0), 0u) << line;
}

TEST_F(BootstrapFailure, RankKilledMidBootstrapFailsTheOthersAtOnce) {
  ProcessWorld world;
  world.spawn(failingRank(0, 4, 3000ms));
  world.spawn(failingRank(1, 4, 3000ms));
  world.spawn([](const UniqueId& id, const Reporter&) {
    std::thread killer([] {
      std::this_thread::sleep_for(300ms);  // it has said hello and waits for rank 3
      ::raise(SIGKILL);
    });
    killer.detach();
    connectBootstrap(id, 2, 4, optionsWith(3000ms));
    return kChildWrongResult;
  });
  const auto start = Clock::now();
  world.start(makeUniqueId(loopbackParams(3000ms)));
  const auto outcomes = world.finish();
  EXPECT_LT(msSince(start), 2000);
  EXPECT_EQ(outcomes[2].exitCode, 128 + SIGKILL);
  for (const int rank : {0, 1}) {
    const std::string& line = outcomes[static_cast<std::size_t>(rank)].report;
    EXPECT_EQ(line.rfind("RemoteError: rank 2 (host ", 0), 0u) << line;
    EXPECT_TRUE(contains(line, "left during the bootstrap: its connection to the root at 127.0.0.1:"));
    EXPECT_TRUE(contains(line, "was it killed?"));
  }
}

TEST_F(BootstrapFailure, UnreachableRootIsNamedWithTheErrno) {
  const bootstrap::SocketAddress bound = freeLoopbackPort();  // nobody listens there
  bootstrap::UniqueIdContents contents;
  contents.token = bootstrap::randomToken();
  contents.root = bootstrap::toWireAddress(bound);
  const auto start = Clock::now();
  const Error error = expectError(
      ErrorCode::Timeout, [&] { connectBootstrap(bootstrap::encodeUniqueId(contents), 0, 2, optionsWith(300ms)); });
  EXPECT_GE(msSince(start), 300);
  EXPECT_LT(msSince(start), 1500);
  EXPECT_EQ(std::string(error.what()),
            fmt::format("rank 0 could not reach the bootstrap root at {} within 300 ms: Connection refused (is the "
                        "process that made the unique id still running, and is that address reachable from this "
                        "host?)",
                        bootstrap::formatAddress(bound)));
}

// A raw client of the root: connects, sends `frame` bytes, returns the root's Failure text ("" if none).
std::string talkToRoot(const UniqueId& id, const std::vector<std::uint8_t>& bytes) {
  const auto address = bootstrap::fromWireAddress(bootstrap::decodeUniqueId(id).root);
  auto socket = bootstrap::connectTcp(address, deadlineAfter(2000ms), nullptr);
  if (!socket) return "no connection";
  bootstrap::FrameReader reader(bootstrap::kMaxFailureText + 4);
  [[maybe_unused]] const ssize_t n = ::send(socket->get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  try {
    const auto frame = bootstrap::readFrameBefore(socket->get(), reader, deadlineAfter(2000ms), "root");
    if (!frame || frame->type != bootstrap::FrameType::Failure) return "";
    return bootstrap::decodeFailure(frame->payload.data(), frame->payload.size()).message;
  } catch (const Error& error) {
    return std::string("closed: ") + error.what();
  }
}

std::vector<std::uint8_t> helloFrame(const bootstrap::Hello& hello) {
  std::vector<std::uint8_t> bytes = bootstrap::encodeFrameHeader(
      {bootstrap::FrameType::Hello, 0, static_cast<std::uint32_t>(bootstrap::kHelloBytes)});
  const std::vector<std::uint8_t> body = bootstrap::encodeHello(hello);
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

bootstrap::Hello helloFor(const UniqueId& id, int rank, int nranks) {
  bootstrap::Hello hello;
  hello.peerlinkVersion = kVersion;
  hello.token = bootstrap::decodeUniqueId(id).token;
  hello.nranks = nranks;
  hello.identity = localPeerIdentity(rank, BootstrapOptions{});
  hello.pidScope = 1;
  hello.listenAddress = bootstrap::decodeUniqueId(id).root;  // never used: the rendezvous fails first
  return hello;
}

TEST_F(BootstrapFailure, StrangersAreTurnedAwayAndTheWorldGoesOn) {
  ProcessWorld world;
  world.spawn(succeedingRank(0, 2));
  world.spawn(lateRank(1, 2, 300ms));  // after the strangers
  const UniqueId id = makeUniqueId(loopbackParams(3000ms));
  world.start(id);
  // Garbage, an HTTP request, and a frame before any hello: each refused with the reason.
  EXPECT_TRUE(contains(talkToRoot(id, std::vector<std::uint8_t>(64, 0x41)), "magic 0x41414141"));
  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_TRUE(
      contains(talkToRoot(id, std::vector<std::uint8_t>(http.begin(), http.end())), "not a peerlink bootstrap peer"));
  EXPECT_TRUE(
      contains(talkToRoot(id, bootstrap::encodeFrameHeader({bootstrap::FrameType::Ready, 0, 0})), "before the hello"));
  // A hello announcing more bytes than a hello has.
  EXPECT_TRUE(contains(talkToRoot(id, bootstrap::encodeFrameHeader({bootstrap::FrameType::Data, 0, 1 << 30})),
                       "more than the 172 allowed here"));
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "ok");
  EXPECT_EQ(outcomes[1].report, "ok");
}

TEST_F(BootstrapFailure, DifferentPeerlinkVersionFailsNamingBoth) {
  ProcessWorld world;
  world.spawn(failingRank(0, 2, 3000ms));
  const UniqueId id = makeUniqueId(loopbackParams(3000ms));
  world.start(id);
  std::this_thread::sleep_for(200ms);  // rank 0 first
  bootstrap::Hello old = helloFor(id, 1, 2);
  old.peerlinkVersion = "0.0.9";
  const std::string heard = talkToRoot(id, helloFrame(old));
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "InvalidUsage: " + heard);
  EXPECT_TRUE(contains(heard, fmt::format("rank 1 (host {}, pid {}) runs peerlink 0.0.9, rank 0 (host",
                                          old.identity.hostName, ::getpid())));
  EXPECT_TRUE(contains(heard, fmt::format("runs peerlink {}: run one peerlink version on every rank", kVersion)));
}

TEST_F(BootstrapFailure, AnotherProtocolIsToldWhyAndTheWorldGoesOn) {
  ProcessWorld world;
  world.spawn(succeedingRank(0, 2));
  world.spawn(lateRank(1, 2, 300ms));
  const UniqueId id = makeUniqueId(loopbackParams(3000ms));
  world.start(id);
  std::vector<std::uint8_t> future = helloFrame(helloFor(id, 1, 2));
  future[bootstrap::kFrameHeaderBytes + 4] = bootstrap::kBootstrapProtocolVersion + 1;
  const std::string heard = talkToRoot(id, future);
  EXPECT_TRUE(contains(heard, fmt::format("bootstrap protocol {} (from peerlink {})",
                                          bootstrap::kBootstrapProtocolVersion + 1, kVersion)));
  // Protocol 1's hello, of a rank that says nothing of following a forward: a reserved zero there.
  std::vector<std::uint8_t> past = helloFrame(helloFor(id, 1, 2));
  past[bootstrap::kFrameHeaderBytes + 4] = 1;
  past[bootstrap::kFrameHeaderBytes + 6] = 0;
  EXPECT_TRUE(contains(talkToRoot(id, past),
                       fmt::format("bootstrap protocol 1 (from peerlink {}); this peerlink speaks protocol {}",
                                   kVersion, bootstrap::kBootstrapProtocolVersion)));
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "ok");
  EXPECT_EQ(outcomes[1].report, "ok");
}

// Connections that never say hello (a port scanner, a stuck client) take the root's spare slots; they are closed
// once silent for a third of its timeout (2 s of 6 here), so ranks that come after them still meet.
TEST_F(BootstrapFailure, SilentStraysAreClosedAndTheWorldGoesOn) {
  ProcessWorld world;
  for (int rank = 0; rank < 2; ++rank) {
    world.spawn(lateRank(rank, 2, 3500ms));  // after the strays were swept
  }
  const UniqueId id = makeUniqueId(loopbackParams(6000ms));
  const auto address = bootstrap::fromWireAddress(bootstrap::decodeUniqueId(id).root);
  std::vector<FileDescriptor> strays;
  for (int i = 0; i < 80; ++i) {  // more than the root keeps for a world whose size it does not know yet
    if (auto socket = bootstrap::connectTcp(address, deadlineAfter(2000ms), nullptr))
      strays.push_back(std::move(*socket));
  }
  world.start(id);
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "ok");
  EXPECT_EQ(outcomes[1].report, "ok");
}

TEST_F(BootstrapFailure, RootWithNoRankEndsAtItsDeadline) {
  makeUniqueId(loopbackParams(300ms));
  EXPECT_EQ(bootstrap::runningRoots(), 1);
  EXPECT_TRUE(rootsEndWithin(2s));
}

// An id made and then not used (ncclCommInitRankScalable meets at the first id's root): its root, retired, ends at
// once instead of at its deadline a minute later; a token this process has no root of is not one of its roots.
TEST_F(BootstrapFailure, ARetiredRootThatNoRankReachedEndsAtOnce) {
  const UniqueId id = makeUniqueId(loopbackParams(60000ms));
  EXPECT_EQ(bootstrap::runningRoots(), 1);
  EXPECT_FALSE(bootstrap::retireRoot(bootstrap::decodeUniqueId(withOtherToken(id)).token));
  EXPECT_TRUE(bootstrap::retireRoot(bootstrap::decodeUniqueId(id).token));
  EXPECT_TRUE(rootsEndWithin(2s));
}

// A root some rank already reached is not retired: the world still meets.
TEST_F(BootstrapFailure, ARetiredRootThatARankReachedGoesOn) {
  ProcessWorld world;
  world.spawn(succeedingRank(0, 2));
  world.spawn(lateRank(1, 2, 1500ms));  // after the retirement
  const UniqueId id = makeUniqueId(loopbackParams(20000ms));
  world.start(id);
  std::this_thread::sleep_for(700ms);  // rank 0 has said hello
  EXPECT_TRUE(bootstrap::retireRoot(bootstrap::decodeUniqueId(id).token));
  const auto outcomes = world.finish();
  EXPECT_EQ(outcomes[0].report, "ok");
  EXPECT_EQ(outcomes[1].report, "ok");
}

}  // namespace
}  // namespace peerlink
