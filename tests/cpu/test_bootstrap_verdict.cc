// Who serves a world whose unique id's root may forward: the pure decision over the ranks' hellos (one host, several,
// hosts made by PEERLINK_HOSTID on one machine, ranks that cannot follow a forward), the Forward frame's payload, and
// real rendezvous of 4 ranks as threads of this process through a root on loopback given a fake ForwardIdSource --
// on two hosts the root asks it once and every rank hears "forward" with exactly its bytes, or, when it throws, the
// same failure naming why, and nothing is left open or running; where a rank cannot follow, every rank hears the same
// refusal naming it and the source is never asked; on one host the source is never asked and every rank gets its
// bootstrap; makeUniqueId's id builds its world whatever the hosts, as before.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap/frame.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/unique_id.hpp"
#include "bootstrap/verdict.hpp"
#include "bootstrap_test_support.hpp"
#include "error_text.hpp"

namespace peerlink::bootstrap {
namespace {

using namespace std::chrono_literals;
using ::peerlink::testing::contains;
using ::peerlink::testing::errorOf;
using ::peerlink::testing::Holdings;
using ::peerlink::testing::holdings;
using ::peerlink::testing::loopbackParams;
using ::peerlink::testing::optionsWith;
using ::peerlink::testing::rootsEndWithin;

// Rank `rank`'s hello on host `hostId`, able to follow a forward unless `forwarding` says otherwise.
Hello rankOn(int rank, std::uint64_t hostId, const std::string& hostName,
             ForwardAbility forwarding = ForwardAbility::Able) {
  Hello hello;
  hello.identity.rank = rank;
  hello.identity.hostId = hostId;
  hello.identity.hostName = hostName;
  hello.identity.pid = 1000 + rank;
  hello.forwarding = forwarding;
  return hello;
}

TEST(BootstrapVerdict, OneHostIsPeerlinks) {
  std::vector<Hello> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rankOn(r, 0xa, "node-a"));
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_EQ(verdict.server, WorldServer::Peerlink);
  EXPECT_EQ(verdict.reason, "every rank on one host (node-a)");
  EXPECT_EQ(chooseWorldServer({rankOn(0, 0xa, "node-a")}).server, WorldServer::Peerlink);
}

TEST(BootstrapVerdict, TwoHostsAreTheRealNcclsWhateverTheOrder) {
  // Hellos reach the root in any order; the hosts are listed by their lowest rank.
  const std::vector<Hello> ranks = {rankOn(3, 0xb, "node-b"), rankOn(0, 0xa, "node-a"), rankOn(2, 0xa, "node-a"),
                                    rankOn(1, 0xb, "node-b")};
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_EQ(verdict.server, WorldServer::RealNccl);
  EXPECT_EQ(verdict.reason, "ranks on 2 hosts: node-a (ranks 0, 2), node-b (ranks 1, 3)");
  EXPECT_EQ(chooseWorldServer({rankOn(0, 0xa, "node-a"), rankOn(1, 0xb, "node-b")}).server, WorldServer::RealNccl);
}

TEST(BootstrapVerdict, HostsMadeByHostIdOnOneMachineAreToldApartByTheirIds) {
  const std::string boot = "6f1c0e0a-boot";
  const std::uint64_t a = hostIdFor("gpu-vm", boot, "a");
  const std::uint64_t b = hostIdFor("gpu-vm", boot, "b");
  ASSERT_NE(a, b);
  const ServerVerdict verdict = chooseWorldServer(
      {rankOn(0, a, "gpu-vm"), rankOn(1, a, "gpu-vm"), rankOn(2, b, "gpu-vm"), rankOn(3, b, "gpu-vm")});
  EXPECT_EQ(verdict.server, WorldServer::RealNccl);
  EXPECT_TRUE(contains(verdict.reason, fmt::format("ranks on 2 hosts: gpu-vm [host id {:016x}] (ranks 0-1), gpu-vm "
                                                   "[host id {:016x}] (ranks 2-3)",
                                                   a, b)));
  // The same override everywhere is one host, as the machine is.
  const std::uint64_t same = hostIdFor("gpu-vm", boot, "a");
  EXPECT_EQ(chooseWorldServer({rankOn(0, a, "gpu-vm"), rankOn(1, same, "gpu-vm")}).server, WorldServer::Peerlink);
}

TEST(BootstrapVerdict, ManyHostsAreCountedNotAllNamed) {
  std::vector<Hello> ranks;
  for (int r = 0; r < 12; ++r)
    ranks.push_back(rankOn(r, 0x100 + static_cast<std::uint64_t>(r / 2), fmt::format("n{}", r / 2)));
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_EQ(verdict.server, WorldServer::RealNccl);
  EXPECT_EQ(verdict.reason,
            "ranks on 6 hosts: n0 (ranks 0-1), n1 (ranks 2-3), n2 (ranks 4-5), n3 (ranks 6-7) and 2 more");
}

// A rank that cannot follow the root to the real NCCL would fail alone while the others wait in the real NCCL's
// creation, which has no deadline: across hosts the world is refused, naming the rank and why.
TEST(BootstrapVerdict, ARankThatCannotForwardRefusesAWorldAcrossHosts) {
  const std::vector<Hello> ranks = {rankOn(0, 0xa, "node-a"), rankOn(1, 0xa, "node-a"), rankOn(2, 0xb, "node-b"),
                                    rankOn(3, 0xb, "node-b", ForwardAbility::FallbackNone)};
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_EQ(verdict.server, WorldServer::Refused);
  EXPECT_EQ(verdict.reason,
            "ranks on 2 hosts: node-a (ranks 0-1), node-b (ranks 2-3), which only the real NCCL serves, but rank 3 "
            "(host node-b, pid 1003) has no real NCCL to forward to: PEERLINK_NCCL_FALLBACK=NONE");
  const Failure failure = refusedWorldFailure("10.0.0.1:29500", verdict);
  EXPECT_EQ(failure.code, ErrorCode::InvalidUsage);
  EXPECT_EQ(failure.message, "the bootstrap root at 10.0.0.1:29500 refuses the world: " + verdict.reason +
                                 ": every rank of a world across hosts must be able to use the real NCCL");
  // On one host the same ranks are peerlink's: nothing is forwarded, so nothing is refused.
  std::vector<Hello> oneHost = ranks;
  for (Hello& hello : oneHost) hello.identity.hostId = 0xa;
  EXPECT_EQ(chooseWorldServer(oneHost).server, WorldServer::Peerlink);
}

TEST(BootstrapVerdict, ManyRanksThatCannotForwardAreCountedAndTheFirstFourNamed) {
  const ForwardAbility unable[] = {ForwardAbility::FallbackNone, ForwardAbility::NoRealNccl,
                                   ForwardAbility::NotNcclApi};
  std::vector<Hello> ranks;
  for (int r = 7; r >= 0; --r) {  // in any order
    ranks.push_back(
        rankOn(r, r < 4 ? 0xa : 0xb, r < 4 ? "node-a" : "node-b", r % 4 == 0 ? ForwardAbility::Able : unable[r % 3]));
  }
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_EQ(verdict.server, WorldServer::Refused);
  EXPECT_EQ(verdict.reason,
            "ranks on 2 hosts: node-a (ranks 0-3), node-b (ranks 4-7), which only the real NCCL serves, but 6 of 8 "
            "ranks have no real NCCL to forward to: rank 1 (host node-a, pid 1001): "
            "no real libnccl.so.2 could be loaded there (set PEERLINK_NCCL_LIBRARY; with PEERLINK_DEBUG=INFO its INIT "
            "log lists what was searched); rank 2 (host node-a, pid 1002): it joined through peerlink's own API, not "
            "NCCL's; rank 3 (host node-a, pid 1003): PEERLINK_NCCL_FALLBACK=NONE; rank 5 (host node-b, pid 1005): it "
            "joined through peerlink's own API, not NCCL's; and 2 more");
}

// NCCL 2.28's ncclGetUniqueId: a 64-bit magic and the root's sockaddr_in, zeros to 128 bytes.
std::vector<std::uint8_t> ncclLikeId() {
  std::vector<std::uint8_t> id(128, 0);
  const std::uint8_t handle[] = {0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 2, 0, 0x9c, 0x40, 10, 0, 0, 7};
  std::copy(std::begin(handle), std::end(handle), id.begin());
  return id;
}

std::vector<std::uint8_t> prefix(const std::vector<std::uint8_t>& bytes, std::size_t n) {
  return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}

TEST(BootstrapVerdict, TheForwardPayloadCarriesTheRealIdUpToItsLastNonZeroByteAndOneLine) {
  const std::vector<std::uint8_t> bytes = encodeForward("ranks on 2 hosts:\na, b", ncclLikeId());
  ASSERT_EQ(bytes.size(), 1u + 16 + 22);
  EXPECT_EQ(bytes[0], 16);  // the id's length, then its bytes, then the reason
  const Forward forward = decodeForward(bytes.data(), bytes.size());
  EXPECT_EQ(forward.reason, "ranks on 2 hosts: a, b");
  EXPECT_EQ(forward.ncclId, prefix(ncclLikeId(), 16));
  // The same id given without its zeros, and one of 128 bytes without a zero.
  EXPECT_EQ(encodeForward("ranks on 2 hosts:\na, b", prefix(ncclLikeId(), 16)), bytes);
  const std::vector<std::uint8_t> full(kMaxForwardIdBytes, 0xa5);
  const std::vector<std::uint8_t> whole = encodeForward("", full);
  EXPECT_EQ(decodeForward(whole.data(), whole.size()).ncclId, full);
  EXPECT_EQ(decodeForward(whole.data(), whole.size()).reason, "(no reason given)");
  const std::string longText(kMaxFailureText + 10, 'x');
  EXPECT_EQ(encodeForward(longText, full).size(), 1 + kMaxForwardIdBytes + kMaxFailureText);
}

TEST(BootstrapVerdict, TheForwardPayloadRefusesNoIdAndTooMuch) {
  // What the root may not send: it names why instead (forwardIdFailure).
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [] { encodeForward("r", {}); }), "an empty id"));
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [] { encodeForward("r", std::vector<std::uint8_t>(128, 0)); }),
                       "an id of zeros"));
  std::vector<std::uint8_t> over(kMaxForwardIdBytes + 1, 1);
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [&] { encodeForward("r", over); }),
                       "an id of 129 bytes, more than an ncclUniqueId's 128"));
  over.back() = 0;  // zeros past 128 bytes are no bytes of the id
  EXPECT_EQ(encodeForward("r", over).size(), 1 + kMaxForwardIdBytes + 1);
  // What a rank refuses.
  const std::vector<std::uint8_t> good = encodeForward("reason", ncclLikeId());
  const auto problem = [](std::vector<std::uint8_t> bytes) {
    return errorOf(ErrorCode::InvalidInput, [&] { decodeForward(bytes.data(), bytes.size()); });
  };
  EXPECT_TRUE(contains(problem({}), "forward message"));
  std::vector<std::uint8_t> empty = good;
  empty[0] = 0;
  EXPECT_TRUE(contains(problem(empty), "said to be 0 bytes (1 to 128)"));
  std::vector<std::uint8_t> tooLong(1 + 129, 1);
  tooLong[0] = 129;
  EXPECT_TRUE(contains(problem(tooLong), "said to be 129 bytes (1 to 128)"));
  std::vector<std::uint8_t> cut = good;
  cut.resize(10);
  EXPECT_TRUE(contains(problem(cut), "the real NCCL's id"));
  std::vector<std::uint8_t> trailingZero = good;
  trailingZero[0] = 17;  // the id's length now takes in the reason's first byte
  trailingZero[17] = 0;
  EXPECT_TRUE(contains(problem(trailingZero), "ends in a zero byte"));
  std::vector<std::uint8_t> longReason = prefix(good, 17);
  longReason.resize(17 + kMaxFailureText + 1, 'x');
  EXPECT_TRUE(contains(problem(longReason), "more than 4096"));
  // A frame of its own, from the root only, carrying the text.
  const std::vector<std::uint8_t> header = encodeFrameHeader({FrameType::Forward, 0, 40});
  EXPECT_EQ(decodeFrameHeader(header.data(), header.size(), kMaxFailureText).type, FrameType::Forward);
  EXPECT_STREQ(frameTypeName(FrameType::Forward), "forward");
  const std::vector<std::uint8_t> tagged = encodeFrameHeader({FrameType::Forward, 3, 40});
  EXPECT_THROW(decodeFrameHeader(tagged.data(), tagged.size(), kMaxFailureText), Error);
}

// ---- rendezvous of threads ------------------------------------------------------------------------------------

// A ForwardIdSource that counts its calls and gives `bytes`, or throws `failure` when set.
struct FakeSource {
  std::vector<std::uint8_t> bytes;
  std::optional<Error> failure;
  std::atomic<int> calls{0};
  ForwardIdSource source() {
    return [this] {
      ++calls;
      if (failure) throw *failure;
      return bytes;
    };
  }
};

// Each rank's outcome: its bootstrap, or the verdict it heard (its reason and id), or another error.
struct Joined {
  std::unique_ptr<Bootstrap> bootstrap;
  std::string forwardedBecause;
  std::vector<std::uint8_t> ncclId;
  std::string error;
  ErrorCode code = ErrorCode::Internal;
};

// `hosts[r]` is rank r's PEERLINK_HOSTID; every rank joins `id` on a thread of its own, able to follow a forward
// (as the NCCL API's ranks with a real NCCL say) unless `unable` says otherwise.
std::vector<Joined> joinAsThreads(const UniqueId& id, const std::vector<std::string>& hosts,
                                  const std::map<int, ForwardAbility>& unable = {}) {
  const int n = static_cast<int>(hosts.size());
  std::vector<Joined> joined(hosts.size());
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      Joined& mine = joined[static_cast<std::size_t>(rank)];
      BootstrapOptions options = optionsWith(10s, hosts[static_cast<std::size_t>(rank)]);
      const auto reason = unable.find(rank);
      options.forwarding = reason != unable.end() ? reason->second : ForwardAbility::Able;
      try {
        mine.bootstrap = connectBootstrap(id, rank, n, options);
      } catch (const ForwardedWorld& verdict) {
        mine.forwardedBecause = verdict.reason();
        mine.ncclId = verdict.ncclId();
        if (verdict.code() != ErrorCode::Unsupported) mine.error = "a forward verdict of another code";
      } catch (const Error& error) {
        mine.error = error.what();
        mine.code = error.code();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return joined;
}

class BootstrapVerdictWorld : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_TRUE(rootsEndWithin(5s)) << "a bootstrap root is still running"; }
};

TEST_F(BootstrapVerdictWorld, FourRanksOnTwoHostsAllHearForwardWithTheSourcesIdAndNothingIsLeft) {
  FakeSource real;
  real.bytes = ncclLikeId();
  const Holdings before = holdings();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  EXPECT_TRUE(decodeUniqueId(id).mayForward);
  EXPECT_EQ(real.calls, 0);  // not when the id is made
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-b", "host-b"});
  EXPECT_EQ(real.calls, 1);  // once, by the root, for the world
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(joined[rank].error, "");
    EXPECT_EQ(joined[rank].bootstrap, nullptr);
    EXPECT_EQ(joined[rank].ncclId, prefix(ncclLikeId(), 16));  // exactly its bytes, without the zeros after
    EXPECT_TRUE(contains(joined[rank].forwardedBecause, "ranks on 2 hosts:"));
    EXPECT_TRUE(contains(joined[rank].forwardedBecause, "(ranks 0-1)"));
    EXPECT_TRUE(contains(joined[rank].forwardedBecause, "(ranks 2-3)"));
    EXPECT_EQ(joined[rank].forwardedBecause, joined[0].forwardedBecause);  // one decision, every rank told it
  }
  // The root ended and every connection of the rendezvous is closed: no thread waits, no socket stays.
  ASSERT_TRUE(rootsEndWithin(5s));
  EXPECT_TRUE(holdings() == before) << "threads " << holdings().threads << " (were " << before.threads
                                    << "), descriptors " << holdings().descriptors << " (were " << before.descriptors
                                    << ")";
}

TEST_F(BootstrapVerdictWorld, ASourceThatThrowsFailsEveryRankNamingWhy) {
  FakeSource real;
  real.failure = Error(ErrorCode::SystemError, "the real NCCL's ncclGetUniqueId failed: no socket interface found");
  const Holdings before = holdings();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-b", "host-a", "host-b"});
  EXPECT_EQ(real.calls, 1);
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(joined[rank].bootstrap, nullptr);
    EXPECT_EQ(joined[rank].forwardedBecause, "");
    EXPECT_EQ(joined[rank].code, ErrorCode::SystemError);
    EXPECT_TRUE(contains(joined[rank].error, "sends the world to the real NCCL (ranks on 2 hosts: "));
    EXPECT_TRUE(contains(joined[rank].error,
                         "(ranks 1, 3)) but has no id of the real NCCL for it: the real NCCL's "
                         "ncclGetUniqueId failed: no socket interface found"))
        << joined[rank].error;
    EXPECT_EQ(joined[rank].error, joined[0].error);  // the same line on every rank
  }
  // No rank waits for more and the root ends at once, not at its deadline.
  ASSERT_TRUE(rootsEndWithin(5s));
  EXPECT_TRUE(holdings() == before);
}

TEST_F(BootstrapVerdictWorld, ASourceWithNoUsableIdFailsEveryRank) {
  FakeSource real;
  real.bytes = std::vector<std::uint8_t>(128, 0);
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-b"});
  EXPECT_EQ(real.calls, 1);
  for (const Joined& rank : joined) {
    EXPECT_EQ(rank.code, ErrorCode::InvalidUsage);
    EXPECT_TRUE(contains(rank.error, "has no id of the real NCCL for it: the real NCCL gave an id of zeros"))
        << rank.error;
  }
}

// The defect this guards against: rank 3 could not follow a forward, failed alone, and ranks 0-2 waited in the real
// NCCL's creation for it without a deadline. Now every rank hears the root's refusal, the same line, at once; the
// real NCCL is never asked for an id (which would start its root until the process exits); nothing is left.
TEST_F(BootstrapVerdictWorld, ARankThatCannotForwardMakesTheRootRefuseTheWorldOnEveryRank) {
  FakeSource real;
  real.bytes = ncclLikeId();
  const Holdings before = holdings();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  const auto start = std::chrono::steady_clock::now();
  std::vector<Joined> joined =
      joinAsThreads(id, {"host-a", "host-a", "host-b", "host-b"}, {{3, ForwardAbility::FallbackNone}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // at once, not at a deadline (10 s)
  EXPECT_EQ(real.calls, 0);
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(joined[rank].bootstrap, nullptr);
    EXPECT_EQ(joined[rank].forwardedBecause, "");
    EXPECT_EQ(joined[rank].code, ErrorCode::InvalidUsage);
    EXPECT_TRUE(contains(joined[rank].error, "refuses the world: ranks on 2 hosts: "));
    EXPECT_TRUE(contains(joined[rank].error, fmt::format("which only the real NCCL serves, but rank 3 (host {}, pid "
                                                         "{}) has no real NCCL to forward to: "
                                                         "PEERLINK_NCCL_FALLBACK=NONE",
                                                         localHostName(), ::getpid())))
        << joined[rank].error;
    EXPECT_EQ(joined[rank].error, joined[0].error);  // the same line on every rank
  }
  ASSERT_TRUE(rootsEndWithin(5s));
  EXPECT_TRUE(holdings() == before) << "threads " << holdings().threads << " (were " << before.threads
                                    << "), descriptors " << holdings().descriptors << " (were " << before.descriptors
                                    << ")";
}

// A rank that does not say it can (peerlink's own API: BootstrapOptions' default) is one that cannot.
TEST_F(BootstrapVerdictWorld, ARankOfPeerlinksOwnApiCannotForward) {
  FakeSource real;
  real.bytes = ncclLikeId();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  EXPECT_EQ(BootstrapOptions().forwarding, ForwardAbility::NotNcclApi);
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-b"}, {{0, BootstrapOptions().forwarding}});
  EXPECT_EQ(real.calls, 0);
  for (const Joined& rank : joined) {
    EXPECT_EQ(rank.code, ErrorCode::InvalidUsage);
    EXPECT_TRUE(contains(rank.error,
                         "has no real NCCL to forward to: it joined through peerlink's own API, not "
                         "NCCL's"))
        << rank.error;
  }
}

// On one host peerlink serves the world: a rank that could not follow a forward does not matter.
TEST_F(BootstrapVerdictWorld, ARankThatCannotForwardStillMeetsTheOthersOnOneHost) {
  FakeSource real;
  real.bytes = ncclLikeId();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a"}, {{1, ForwardAbility::NoRealNccl}});
  EXPECT_EQ(real.calls, 0);
  for (const Joined& rank : joined) EXPECT_NE(rank.bootstrap, nullptr) << rank.error;
}

TEST_F(BootstrapVerdictWorld, FourRanksOnOneHostGetTheirBootstrapsAndTheSourceIsNeverAsked) {
  FakeSource real;
  real.bytes = ncclLikeId();
  const UniqueId id = makeForwardableUniqueId(loopbackParams(10s), real.source());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-a", "host-a"});
  EXPECT_EQ(real.calls, 0);
  std::vector<std::thread> threads;
  std::vector<std::string> problems(joined.size());
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    ASSERT_NE(joined[rank].bootstrap, nullptr)
        << "rank " << rank << ": " << joined[rank].error << joined[rank].forwardedBecause;
    threads.emplace_back([&, rank] {
      const std::uint8_t mine = static_cast<std::uint8_t>(rank + 1);
      try {
        const std::vector<std::uint8_t> all = joined[rank].bootstrap->allGather(&mine, 1);
        if (all != std::vector<std::uint8_t>{1, 2, 3, 4}) problems[rank] = "wrong all-gather";
      } catch (const Error& error) {
        problems[rank] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& problem : problems) EXPECT_EQ(problem, "");
  EXPECT_EQ(real.calls, 0);
}

TEST_F(BootstrapVerdictWorld, MakeUniqueIdsRootNeverForwards) {
  const UniqueId id = makeUniqueId(loopbackParams(10s));
  EXPECT_FALSE(decodeUniqueId(id).mayForward);
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-b", "host-b"});
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    EXPECT_NE(joined[rank].bootstrap, nullptr) << "rank " << rank << ": " << joined[rank].error;
    EXPECT_EQ(joined[rank].forwardedBecause, "");
  }
}

}  // namespace
}  // namespace peerlink::bootstrap
