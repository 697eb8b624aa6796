// The seeds of the fuzz targets over messages between processes (fuzz/corpus/bootstrap_wire, unique_id,
// rank_card): made here by the encoders, so each is a message the decoders accept and the fuzzer starts from
// every field's valid form; and of the NCCL API's config (nccl_config): the structs applications built against
// each nccl.h hand it, from NCCL_CONFIG_INITIALIZER. The committed files must be these bytes; when one differs or is
// missing, the test fails and writes the seeds as they should be beside the test executable (fuzz-seeds/), to copy
// over.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/frame.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/unique_id.hpp"
#include "bootstrap/verdict.hpp"
#include "coll/arena_address.hpp"
#include "coll/world.hpp"
#include "nccl_api/config.hpp"
#include "peerlink/params.hpp"
#include "topology_fixture.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;
using bootstrap::Hello;
using bootstrap::WireAddress;

bootstrap::Token countingToken() {
  bootstrap::Token token{};
  for (std::size_t i = 0; i < token.size(); ++i) token[i] = static_cast<std::uint8_t>(0xa0 + i);
  return token;
}

WireAddress ipv4() {
  WireAddress address;
  address.family = bootstrap::AddressFamily::Ipv4;
  address.bytes[0] = 10;
  address.bytes[3] = 1;
  address.port = 29500;
  return address;
}

WireAddress ipv6() {
  WireAddress address;
  address.family = bootstrap::AddressFamily::Ipv6;
  address.bytes[0] = 0xfd;
  address.bytes[15] = 1;
  address.port = 29501;
  return address;
}

Hello helloOf(int rank, int nranks, const WireAddress& address) {
  Hello hello;
  hello.peerlinkVersion = "0.1.0";
  hello.token = countingToken();
  hello.nranks = nranks;
  hello.identity.rank = rank;
  hello.identity.hostId = 0x1234567890abcdefULL;
  hello.identity.hostName = "node-a";
  hello.identity.pid = 4242 + rank;
  hello.identity.uid = 1000;
  hello.pidScope = 0xfeedfacecafebeefULL;
  hello.listenAddress = address;
  // Both ways a rank answers whether it can follow a root to the real NCCL.
  hello.forwarding = rank % 2 == 0 ? ForwardAbility::Able : ForwardAbility::FallbackNone;
  return hello;
}

Bytes frame(bootstrap::FrameType type, std::int32_t tag, const Bytes& payload) {
  Bytes bytes = bootstrap::encodeFrameHeader({type, tag, static_cast<std::uint32_t>(payload.size())});
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

Bytes text(const std::string& characters) {
  return Bytes(characters.begin(), characters.end());
}

// A slot's message without the zeros that pad it: the decoders read the padding as absent.
Bytes trimmed(Bytes bytes) {
  while (!bytes.empty() && bytes.back() == 0) bytes.pop_back();
  return bytes;
}

// fuzz_nccl_config's input: the struct's first `bytes` (as many as its size claims), then the strings its pointer
// fields are aimed at, split at the first newline (a pointer field of 1 takes the second, of 2 the first).
Bytes configSeed(const ncclConfig_t& config, std::size_t bytes, const std::string& strings = "") {
  Bytes seed(bytes, 0);
  std::memcpy(seed.data(), &config, std::min(bytes, sizeof config));
  seed.insert(seed.end(), strings.begin(), strings.end());
  return seed;
}

void addConfigSeeds(std::vector<std::pair<std::string, Bytes>>& all) {
  const ncclConfig_t initial = NCCL_CONFIG_INITIALIZER;
  all.emplace_back("nccl_config/default-2.28", configSeed(initial, sizeof initial));
  ncclConfig_t config = initial;  // NCCL 2.14's: up to netName
  config.size = nccl::kMinConfigBytes;
  config.version = 21400;
  all.emplace_back("nccl_config/nccl-2.14", configSeed(config, config.size));
  config = initial;  // a newer nccl.h's, with fields this one does not know
  config.size = sizeof initial + 16;
  config.version = 23000;
  all.emplace_back("nccl_config/newer-2.30", configSeed(config, config.size));
  config = initial;
  config.netName = reinterpret_cast<const char*>(std::uintptr_t{1});
  config.commName = reinterpret_cast<const char*>(std::uintptr_t{2});
  all.emplace_back("nccl_config/named", configSeed(config, sizeof config, "pg0\nib0"));
  config = initial;
  config.blocking = 0;
  config.cgaClusterSize = 2;
  config.minCTAs = 4;
  config.maxCTAs = 16;
  config.trafficClass = 1;
  config.CTAPolicy = 1;
  all.emplace_back("nccl_config/non-blocking-hints", configSeed(config, sizeof config));
  config = initial;
  config.splitShare = 1;
  all.emplace_back("nccl_config/split-share", configSeed(config, sizeof config));
  config = initial;
  config.magic = 0xdeadbeef;
  all.emplace_back("nccl_config/bad-magic", configSeed(config, sizeof config));
  config = initial;
  config.blocking = 7;
  all.emplace_back("nccl_config/bad-blocking", configSeed(config, sizeof config));
}

// A config seed read as the library reads an application's (its pointer fields left NULL): a config, or for the
// "bad-" ones a failure.
bool configSeedReads(const Bytes& seed) {
  std::size_t claimed = 0;
  std::memcpy(&claimed, seed.data(), sizeof claimed);
  std::vector<unsigned char> config(std::max(claimed, sizeof(ncclConfig_t)), 0);
  std::memcpy(config.data(), seed.data(), std::min(claimed, seed.size()));
  for (const std::size_t field : {offsetof(ncclConfig_t, netName), offsetof(ncclConfig_t, commName)}) {
    if (field + sizeof(const char*) <= claimed) std::memset(config.data() + field, 0, sizeof(const char*));
  }
  return std::holds_alternative<nccl::CommConfig>(
      nccl::readCommConfig(reinterpret_cast<const ncclConfig_t*>(config.data())));
}

std::vector<std::pair<std::string, Bytes>> seeds() {
  using bootstrap::FrameType;
  std::vector<std::pair<std::string, Bytes>> all;
  const Bytes hello = bootstrap::encodeHello(helloOf(1, 4, ipv4()));
  all.emplace_back("bootstrap_wire/hello_ipv4.bin", hello);
  all.emplace_back("bootstrap_wire/hello_ipv6.bin", bootstrap::encodeHello(helloOf(0, 1, ipv6())));
  all.emplace_back("bootstrap_wire/world_of_2.bin",
                   bootstrap::encodeWorld({helloOf(0, 2, ipv4()), helloOf(1, 2, ipv6())}));
  all.emplace_back("bootstrap_wire/failure.bin",
                   bootstrap::encodeFailure({ErrorCode::Timeout, "ranks 3, 7 of 8 never reached 10.0.0.1:29500"}));
  Bytes frames = frame(FrameType::Hello, 0, hello);
  for (const Bytes& next :
       {frame(FrameType::Data, 5, text("payload")), frame(FrameType::Data, bootstrap::kBarrierTag, {}),
        frame(FrameType::Abort, 0, bootstrap::encodeFailure({ErrorCode::RemoteError, "abort"})),
        frame(FrameType::Bye, 0, {})}) {
    frames.insert(frames.end(), next.begin(), next.end());
  }
  all.emplace_back("bootstrap_wire/frames.bin", frames);
  // The root's Forward: NCCL 2.28's id (its bootstrap handle: a 64-bit magic and a sockaddr_in) and the reason.
  const Bytes ncclId = {0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 2, 0, 0x9c, 0x40, 10, 0, 0, 7};
  all.emplace_back("bootstrap_wire/forward.bin",
                   bootstrap::encodeForward("ranks on 2 hosts: node-a (ranks 0-1), node-b (ranks 2-3)", ncclId));

  const UniqueId v4 = bootstrap::encodeUniqueId({countingToken(), ipv4(), false});
  all.emplace_back("unique_id/id_ipv4.txt", text(uniqueIdToString(v4)));
  all.emplace_back("unique_id/id_ipv6.txt",
                   text(uniqueIdToString(bootstrap::encodeUniqueId({countingToken(), ipv6(), false}))));
  std::string upper = uniqueIdToString(v4);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  all.emplace_back("unique_id/id_upper_case_in_spaces.txt", text("  " + upper + "\n"));
  all.emplace_back("unique_id/id_bytes.bin", Bytes(v4.bytes, v4.bytes + kUniqueIdBytes));
  // The NCCL API's id whose root may forward (format 2).
  const UniqueId mayForward = bootstrap::encodeUniqueId({countingToken(), ipv4(), true});
  all.emplace_back("unique_id/id_format_2.txt", text(uniqueIdToString(mayForward)));
  all.emplace_back("unique_id/id_format_2_bytes.bin", Bytes(mayForward.bytes, mayForward.bytes + kUniqueIdBytes));

  Params params;
  params.set("PEERLINK_PROTO", "LL128");
  coll::RankCard card = coll::makeRankCard(2, 4, testing::loadTopologyFixture("h200x4_vm"), 2, params,
                                           0x1234567890abcdefULL, "node-a", 4242);
  card.version = "0.1.0+0123456789ab";  // the build's version and commit would change the seed at every commit
  all.emplace_back("rank_card/card_h200x4_rank2.bin", trimmed(coll::encodeRankCard(card)));
  all.emplace_back(
      "rank_card/arena_cumem.bin",
      trimmed(coll::encodeArenaAddress({ShareKind::Cumem, "/tmp/peerlink-0/peerlink-share-7-0-5eed.sock"})));
  all.emplace_back("rank_card/arena_ipc.bin",
                   trimmed(coll::encodeArenaAddress({ShareKind::Ipc, "/run/user/1000/a.sock"})));
  addConfigSeeds(all);
  return all;
}

Bytes readBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

TEST(FuzzSeeds, AreTheEncodersMessagesAndDecode) {
  const fs::path corpus = fs::path(PEERLINK_SOURCE_DIR) / "fuzz" / "corpus";
  char self[4096] = {};
  ASSERT_GT(::readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
  const fs::path written = fs::path(self).parent_path() / "fuzz-seeds";
  bool differs = false;
  for (const auto& [name, bytes] : seeds()) {
    SCOPED_TRACE(name);
    // Each seed is a message its decoder accepts.
    const auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
    if (has("hello")) {
      EXPECT_NO_THROW(bootstrap::decodeHello(bytes.data(), bytes.size()));
    } else if (has("world")) {
      EXPECT_NO_THROW(bootstrap::decodeWorld(bytes.data(), bytes.size(), 2, countingToken()));
    } else if (has("forward")) {
      EXPECT_NO_THROW(bootstrap::decodeForward(bytes.data(), bytes.size()));
    } else if (has("failure")) {
      EXPECT_NO_THROW(bootstrap::decodeFailure(bytes.data(), bytes.size()));
    } else if (has(".txt")) {
      EXPECT_NO_THROW(uniqueIdFromString(std::string(bytes.begin(), bytes.end())));
    } else if (has("unique_id/")) {
      UniqueId id;
      ASSERT_EQ(bytes.size(), kUniqueIdBytes);
      std::copy(bytes.begin(), bytes.end(), id.bytes);
      EXPECT_NO_THROW(bootstrap::decodeUniqueId(id));
    } else if (has("/arena")) {
      EXPECT_NO_THROW(coll::decodeArenaAddress(bytes.data(), bytes.size()));
    } else if (has("/card")) {
      EXPECT_NO_THROW(coll::decodeRankCard(bytes.data(), bytes.size()));
    } else if (has("nccl_config/")) {
      EXPECT_EQ(configSeedReads(bytes), !has("/bad-"));
    }
    if (readBytes(corpus / name) != bytes) {
      differs = true;
      fs::create_directories((written / name).parent_path());
      std::ofstream(written / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
  }
  EXPECT_FALSE(differs) << "fuzz/corpus differs from the seeds as made; they are in " << written.string()
                        << " (copy them into fuzz/corpus)";
}

}  // namespace
}  // namespace peerlink
