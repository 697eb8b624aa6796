// Who serves a world whose unique id carries the real NCCL's: the pure decision over the ranks' identities (one
// host, several, hosts made by PEERLINK_HOSTID on one machine), the Forward frame's payload, and real rendezvous of
// 4 ranks as threads of this process through a root on loopback -- on two hosts every rank hears "forward" and
// nothing is left open or running; on one host every rank gets its bootstrap; an id without the real NCCL's builds
// its world whatever the hosts, as before.
#include <dirent.h>

#include <chrono>
#include <fstream>
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
using ::peerlink::testing::loopbackParams;
using ::peerlink::testing::optionsWith;
using ::peerlink::testing::rootsEndWithin;

PeerIdentity rankOn(int rank, std::uint64_t hostId, const std::string& hostName) {
  PeerIdentity peer;
  peer.rank = rank;
  peer.hostId = hostId;
  peer.hostName = hostName;
  peer.pid = 1000 + rank;
  return peer;
}

TEST(BootstrapVerdict, OneHostIsPeerlinks) {
  std::vector<PeerIdentity> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rankOn(r, 0xa, "node-a"));
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_FALSE(verdict.forward);
  EXPECT_EQ(verdict.reason, "every rank on one host (node-a)");
  EXPECT_FALSE(chooseWorldServer({rankOn(0, 0xa, "node-a")}).forward);
}

TEST(BootstrapVerdict, TwoHostsAreTheRealNcclsWhateverTheOrder) {
  // Hellos reach the root in any order; the hosts are listed by their lowest rank.
  const std::vector<PeerIdentity> ranks = {rankOn(3, 0xb, "node-b"), rankOn(0, 0xa, "node-a"), rankOn(2, 0xa, "node-a"),
                                           rankOn(1, 0xb, "node-b")};
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_TRUE(verdict.forward);
  EXPECT_EQ(verdict.reason, "ranks on 2 hosts: node-a (ranks 0, 2), node-b (ranks 1, 3)");
  EXPECT_TRUE(chooseWorldServer({rankOn(0, 0xa, "node-a"), rankOn(1, 0xb, "node-b")}).forward);
}

TEST(BootstrapVerdict, HostsMadeByHostIdOnOneMachineAreToldApartByTheirIds) {
  const std::string boot = "6f1c0e0a-boot";
  const std::uint64_t a = hostIdFor("gpu-vm", boot, "a");
  const std::uint64_t b = hostIdFor("gpu-vm", boot, "b");
  ASSERT_NE(a, b);
  const ServerVerdict verdict = chooseWorldServer(
      {rankOn(0, a, "gpu-vm"), rankOn(1, a, "gpu-vm"), rankOn(2, b, "gpu-vm"), rankOn(3, b, "gpu-vm")});
  EXPECT_TRUE(verdict.forward);
  EXPECT_TRUE(contains(verdict.reason, fmt::format("ranks on 2 hosts: gpu-vm [host id {:016x}] (ranks 0-1), gpu-vm "
                                                   "[host id {:016x}] (ranks 2-3)",
                                                   a, b)));
  // The same override everywhere is one host, as the machine is.
  const std::uint64_t same = hostIdFor("gpu-vm", boot, "a");
  EXPECT_FALSE(chooseWorldServer({rankOn(0, a, "gpu-vm"), rankOn(1, same, "gpu-vm")}).forward);
}

TEST(BootstrapVerdict, ManyHostsAreCountedNotAllNamed) {
  std::vector<PeerIdentity> ranks;
  for (int r = 0; r < 12; ++r)
    ranks.push_back(rankOn(r, 0x100 + static_cast<std::uint64_t>(r / 2), fmt::format("n{}", r / 2)));
  const ServerVerdict verdict = chooseWorldServer(ranks);
  EXPECT_TRUE(verdict.forward);
  EXPECT_EQ(verdict.reason,
            "ranks on 6 hosts: n0 (ranks 0-1), n1 (ranks 2-3), n2 (ranks 4-5), n3 (ranks 6-7) and 2 more");
}

TEST(BootstrapVerdict, TheForwardPayloadIsOneLineOfBoundedText) {
  const std::vector<std::uint8_t> bytes = encodeForward("ranks on 2 hosts:\na, b");
  EXPECT_EQ(decodeForward(bytes.data(), bytes.size()), "ranks on 2 hosts: a, b");
  EXPECT_EQ(decodeForward(nullptr, 0), "(no reason given)");
  const std::string longText(kMaxFailureText + 10, 'x');
  EXPECT_EQ(encodeForward(longText).size(), kMaxFailureText);
  const std::vector<std::uint8_t> tooLong(kMaxFailureText + 1, 'x');
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidInput, [&] { decodeForward(tooLong.data(), tooLong.size()); }),
                       "more than 4096"));
  // A frame of its own, from the root only, carrying the text.
  const std::vector<std::uint8_t> header = encodeFrameHeader({FrameType::Forward, 0, 40});
  EXPECT_EQ(decodeFrameHeader(header.data(), header.size(), kMaxFailureText).type, FrameType::Forward);
  EXPECT_STREQ(frameTypeName(FrameType::Forward), "forward");
  const std::vector<std::uint8_t> tagged = encodeFrameHeader({FrameType::Forward, 3, 40});
  EXPECT_THROW(decodeFrameHeader(tagged.data(), tagged.size(), kMaxFailureText), Error);
}

// ---- rendezvous of threads ------------------------------------------------------------------------------------

NcclIdBytes ncclId() {
  NcclIdBytes id{};
  for (std::size_t i = 0; i < 16; ++i) id[i] = static_cast<std::uint8_t>(0x30 + i);
  return id;
}

// What this process holds: threads and open descriptors (a root or a rank left behind shows in either).
struct Holdings {
  int threads = 0;
  int descriptors = 0;
  bool operator==(const Holdings& other) const { return threads == other.threads && descriptors == other.descriptors; }
};

Holdings holdings() {
  Holdings now;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) now.threads = std::stoi(line.substr(8));
  }
  if (DIR* fds = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(fds)) now.descriptors += entry->d_name[0] != '.';
    ::closedir(fds);
  }
  return now;
}

// Each rank's outcome: its bootstrap, or the verdict it heard, or another error.
struct Joined {
  std::unique_ptr<Bootstrap> bootstrap;
  std::string forwardedBecause;
  std::string error;
};

// `hosts[r]` is rank r's PEERLINK_HOSTID; every rank joins `id` on a thread of its own.
std::vector<Joined> joinAsThreads(const UniqueId& id, const std::vector<std::string>& hosts) {
  const int n = static_cast<int>(hosts.size());
  std::vector<Joined> joined(hosts.size());
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      Joined& mine = joined[static_cast<std::size_t>(rank)];
      try {
        mine.bootstrap = connectBootstrap(id, rank, n, optionsWith(10s, hosts[static_cast<std::size_t>(rank)]));
      } catch (const ForwardedWorld& verdict) {
        mine.forwardedBecause = verdict.reason();
        if (verdict.code() != ErrorCode::Unsupported) mine.error = "a forward verdict of another code";
      } catch (const Error& error) {
        mine.error = error.what();
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

TEST_F(BootstrapVerdictWorld, FourRanksOnTwoHostsAllHearForwardAndNothingIsLeft) {
  const Holdings before = holdings();
  const UniqueId id = makeUniqueIdWithNccl(loopbackParams(10s), ncclId());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-b", "host-b"});
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(joined[rank].error, "");
    EXPECT_EQ(joined[rank].bootstrap, nullptr);
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

TEST_F(BootstrapVerdictWorld, FourRanksOnOneHostGetTheirBootstraps) {
  const UniqueId id = makeUniqueIdWithNccl(loopbackParams(10s), ncclId());
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-a", "host-a"});
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
}

TEST_F(BootstrapVerdictWorld, AnIdWithoutTheRealNcclsNeverForwards) {
  const UniqueId id = makeUniqueId(loopbackParams(10s));
  std::vector<Joined> joined = joinAsThreads(id, {"host-a", "host-a", "host-b", "host-b"});
  for (std::size_t rank = 0; rank < joined.size(); ++rank) {
    EXPECT_NE(joined[rank].bootstrap, nullptr) << "rank " << rank << ": " << joined[rank].error;
    EXPECT_EQ(joined[rank].forwardedBecause, "");
  }
}

}  // namespace
}  // namespace peerlink::bootstrap
