// The bootstrap's pure parts: the hello, world table, failure and frame codecs on good, truncated and garbage
// bytes; the unique id and its text; addresses and the choice of an interface; host ids; rank lists.
#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap/frame.hpp"
#include "bootstrap/hello.hpp"
#include "bootstrap/identity.hpp"
#include "bootstrap/tcp.hpp"
#include "bootstrap/unique_id.hpp"
#include "error_text.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/error.hpp"

namespace peerlink::bootstrap {
namespace {

using ::peerlink::testing::contains;
using ::peerlink::testing::errorOf;

Hello sampleHello(int rank = 2, int nranks = 4) {
  Hello hello;
  hello.peerlinkVersion = "0.1.0";
  for (std::size_t i = 0; i < hello.token.size(); ++i) hello.token[i] = static_cast<std::uint8_t>(0xa0 + i);
  hello.nranks = nranks;
  hello.identity.rank = rank;
  hello.identity.hostId = 0x1122334455667788ull;
  hello.identity.hostName = "gpu-node-a";
  hello.identity.pid = 4242;
  hello.identity.uid = 1000;
  hello.pidScope = 0x99;
  hello.listenAddress.family = AddressFamily::Ipv4;
  hello.listenAddress.bytes = {10, 0, 0, 7};
  hello.listenAddress.port = 41234;
  hello.forwarding = ForwardAbility::Able;
  return hello;
}

// Bytes of an encoded hello with `size` bytes of `value` written at `offset` (little-endian).
std::vector<std::uint8_t> patched(std::vector<std::uint8_t> bytes, std::size_t offset, std::uint64_t value,
                                  std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) bytes[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
  return bytes;
}

TEST(BootstrapHello, RoundTripsEveryField) {
  const Hello hello = sampleHello();
  const std::vector<std::uint8_t> bytes = encodeHello(hello);
  ASSERT_EQ(bytes.size(), kHelloBytes);
  const Hello back = decodeHello(bytes.data(), bytes.size());
  EXPECT_EQ(back.peerlinkVersion, "0.1.0");
  EXPECT_EQ(back.token, hello.token);
  EXPECT_EQ(back.nranks, 4);
  EXPECT_EQ(back.identity.rank, 2);
  EXPECT_EQ(back.identity.hostId, hello.identity.hostId);
  EXPECT_EQ(back.identity.hostName, "gpu-node-a");
  EXPECT_EQ(back.identity.pid, 4242);
  EXPECT_EQ(back.identity.uid, 1000u);
  EXPECT_EQ(back.pidScope, 0x99u);
  EXPECT_TRUE(back.listenAddress == hello.listenAddress);
  EXPECT_EQ(formatWireAddress(back.listenAddress), "10.0.0.7:41234");
  EXPECT_EQ(back.forwarding, ForwardAbility::Able);
  for (const ForwardAbility forwarding :
       {ForwardAbility::NotNcclApi, ForwardAbility::Able, ForwardAbility::FallbackNone, ForwardAbility::NoRealNccl}) {
    Hello other = sampleHello();
    other.forwarding = forwarding;
    const std::vector<std::uint8_t> encoded = encodeHello(other);
    EXPECT_EQ(encoded[6], static_cast<std::uint8_t>(forwarding));  // where protocol 1 had a reserved zero
    EXPECT_EQ(decodeHello(encoded.data(), encoded.size()).forwarding, forwarding);
  }
}

TEST(BootstrapHello, IsLittleEndianOnTheWire) {
  const std::vector<std::uint8_t> bytes = encodeHello(sampleHello());
  EXPECT_EQ(bytes[0], 'P');
  EXPECT_EQ(bytes[1], 'L');
  EXPECT_EQ(bytes[2], 'B');
  EXPECT_EQ(bytes[3], 'H');
  EXPECT_EQ(bytes[56], 2);  // rank, low byte first
  EXPECT_EQ(bytes[80], 4242 & 0xff);
}

TEST(BootstrapHello, EveryTruncationIsRejected) {
  const std::vector<std::uint8_t> bytes = encodeHello(sampleHello());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_THROW(decodeHello(bytes.data(), size), Error) << size;
  }
  std::vector<std::uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_TRUE(
      contains(errorOf(ErrorCode::InvalidInput, [&] { decodeHello(longer.data(), longer.size()); }), "173 bytes"));
}

TEST(BootstrapHello, FieldsOutOfRangeAreNamed) {
  const std::vector<std::uint8_t> good = encodeHello(sampleHello());
  struct Case {
    std::size_t offset;
    std::uint64_t value;
    std::size_t size;
    const char* needle;
  };
  const Case cases[] = {
      {0, 0x12345678, 4, "magic 0x12345678"},
      {6, 0, 2, "forwarding 0 (1 to 4)"},
      {6, 5, 2, "forwarding 5 (1 to 4)"},
      {56, 4, 4, "rank 4 outside a world of 4"},
      {56, 0xffffffff, 4, "rank -1"},
      {60, 0, 4, "world of 0 ranks"},
      {60, kMaxBootstrapRanks + 1, 4, "world of 1025 ranks"},
      {80, 0, 4, "pid 0"},
      {88, 5, 1, "address family 5"},
      {89, 1, 1, "reserved field"},
      {90, 0, 2, "port 0"},
      {96, 1, 1, "IPv4 address with bytes beyond"},
      {8, 0, 1, "peerlink version is empty"},
      {108, 0, 1, "host name is empty"},
      {108 + 20, 'x', 1, "host name has bytes after its NUL"},
      {108, 7, 1, "unprintable byte 0x07"},
  };
  for (const Case& c : cases) {
    const std::vector<std::uint8_t> bad = patched(good, c.offset, c.value, c.size);
    const std::string message = errorOf(ErrorCode::InvalidInput, [&] { decodeHello(bad.data(), bad.size()); });
    EXPECT_TRUE(contains(message, c.needle));
  }
  std::vector<std::uint8_t> unterminated = good;
  std::memset(unterminated.data() + 108, 'h', kHostNameBytes);
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidInput, [&] { decodeHello(unterminated.data(), unterminated.size()); }),
                       "host name is not NUL-terminated"));
}

TEST(BootstrapHello, AnotherProtocolIsNamedWithItsPeerlinkVersion) {
  Hello hello = sampleHello();
  hello.peerlinkVersion = "9.9.9";
  std::vector<std::uint8_t> bytes = patched(encodeHello(hello), 4, kBootstrapProtocolVersion + 1, 2);
  bytes.resize(200);  // a later protocol may be longer
  const std::string message = errorOf(ErrorCode::InvalidInput, [&] { decodeHello(bytes.data(), bytes.size()); });
  EXPECT_TRUE(
      contains(message, fmt::format("bootstrap protocol {} (from peerlink 9.9.9)", kBootstrapProtocolVersion + 1)));
  EXPECT_TRUE(contains(message, "run one peerlink version on every rank"));
}

// Protocol 1's hello (before a rank said whether it can follow a forward): the same 172 bytes with a reserved zero
// where the forwarding is now. A rank of that protocol is named as such, never read as a rank of this one.
TEST(BootstrapHello, ProtocolOnesHelloIsNamedNotMisread) {
  ASSERT_EQ(kBootstrapProtocolVersion, 2);
  Hello hello = sampleHello();
  hello.peerlinkVersion = "0.0.9";
  const std::vector<std::uint8_t> old = patched(encodeHello(hello), 4, 1, 4);  // protocol 1, reserved 0
  ASSERT_EQ(old.size(), 172u);
  const std::string message = errorOf(ErrorCode::InvalidInput, [&] { decodeHello(old.data(), old.size()); });
  EXPECT_TRUE(contains(message,
                       "bootstrap protocol 1 (from peerlink 0.0.9); this peerlink speaks protocol 2: run one "
                       "peerlink version on every rank"))
      << message;
}

TEST(BootstrapHello, EncodingRefusesWhatCannotBeDecoded) {
  Hello hello = sampleHello();
  hello.identity.rank = 4;
  EXPECT_THROW(encodeHello(hello), Error);
  hello = sampleHello();
  hello.identity.hostName = std::string(kHostNameBytes, 'h');
  EXPECT_THROW(encodeHello(hello), Error);
}

// What a fuzzer would do: arbitrary bytes only ever give Error(InvalidInput), never a crash or another error.
TEST(BootstrapHello, RandomAndMutatedBytesOnlyEverGiveInvalidInput) {
  std::mt19937 random(1234);
  const std::vector<std::uint8_t> good = encodeHello(sampleHello());
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::uint8_t> bytes;
    if (round % 2 == 0) {
      bytes.resize(random() % 200);
      for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random());
    } else {
      bytes = good;
      for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips) {
        bytes[random() % bytes.size()] ^= static_cast<std::uint8_t>(1u << (random() % 8));
      }
    }
    try {
      const Hello hello = decodeHello(bytes.data(), bytes.size());
      EXPECT_GE(hello.identity.rank, 0);
      EXPECT_LT(hello.identity.rank, hello.nranks);
      EXPECT_GT(hello.listenAddress.port, 0);
    } catch (const Error& error) {
      ASSERT_EQ(error.code(), ErrorCode::InvalidInput) << error.what();
    }
  }
  EXPECT_THROW(decodeHello(nullptr, 0), Error);
}

TEST(BootstrapWorld, RoundTripsAndChecksEveryEntry) {
  std::vector<Hello> world;
  for (int rank = 0; rank < 3; ++rank) world.push_back(sampleHello(rank, 3));
  const std::vector<std::uint8_t> bytes = encodeWorld(world);
  const std::vector<Hello> back = decodeWorld(bytes.data(), bytes.size(), 3, world[0].token);
  ASSERT_EQ(back.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(back[static_cast<std::size_t>(rank)].identity.rank, rank);

  EXPECT_THROW(decodeWorld(bytes.data(), bytes.size(), 4, world[0].token), Error);  // another world size
  Token other = world[0].token;
  other[0] ^= 1;
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidInput, [&] { decodeWorld(bytes.data(), bytes.size(), 3, other); }),
                       "another token"));
  std::swap(world[0], world[1]);
  const std::vector<std::uint8_t> swapped = encodeWorld(world);
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidInput, [&] { decodeWorld(swapped.data(), swapped.size(), 3, other); }),
                       "entry 0 is rank 1"));
  for (std::size_t size = 0; size < bytes.size(); size += 7) {
    EXPECT_THROW(decodeWorld(bytes.data(), size, 3, world[0].token), Error) << size;
  }
}

TEST(BootstrapFailure, RoundTripsAndSanitizes) {
  const std::vector<std::uint8_t> bytes = encodeFailure({ErrorCode::Timeout, "ranks 3 of 4\nnever came"});
  const Failure back = decodeFailure(bytes.data(), bytes.size());
  EXPECT_EQ(back.code, ErrorCode::Timeout);
  EXPECT_EQ(back.message, "ranks 3 of 4 never came");  // one line, whatever the sender sent

  const std::vector<std::uint8_t> ok = patched(bytes, 0, 0, 4);
  EXPECT_THROW(decodeFailure(ok.data(), ok.size()), Error);  // a failure is never OK
  const std::vector<std::uint8_t> unknown = patched(bytes, 0, 77, 4);
  EXPECT_THROW(decodeFailure(unknown.data(), unknown.size()), Error);
  const std::vector<std::uint8_t> huge = encodeFailure({ErrorCode::Internal, std::string(10000, 'x')});
  EXPECT_EQ(huge.size(), 4 + kMaxFailureText);
  std::vector<std::uint8_t> tooLong = huge;
  tooLong.push_back('x');
  EXPECT_THROW(decodeFailure(tooLong.data(), tooLong.size()), Error);
  EXPECT_THROW(decodeFailure(bytes.data(), 3), Error);
}

TEST(BootstrapFrame, HeaderRoundTripsAndIsStrict) {
  const std::vector<std::uint8_t> bytes = encodeFrameHeader({FrameType::Data, 17, 1000});
  ASSERT_EQ(bytes.size(), kFrameHeaderBytes);
  const FrameHeader back = decodeFrameHeader(bytes.data(), bytes.size(), 1000);
  EXPECT_EQ(back.type, FrameType::Data);
  EXPECT_EQ(back.tag, 17);
  EXPECT_EQ(back.length, 1000u);

  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidInput, [&] { decodeFrameHeader(bytes.data(), bytes.size(), 999); }),
                       "data frame of 1000 bytes, more than the 999 allowed here"));
  for (const int type : {0, 9, 255}) {
    const std::vector<std::uint8_t> bad = patched(bytes, 4, static_cast<std::uint64_t>(type), 1);
    EXPECT_THROW(decodeFrameHeader(bad.data(), bad.size(), 1000), Error) << type;
  }
  const std::vector<std::uint8_t> reserved = patched(bytes, 6, 1, 1);
  EXPECT_THROW(decodeFrameHeader(reserved.data(), reserved.size(), 1000), Error);
  const std::vector<std::uint8_t> lowTag = encodeFrameHeader({FrameType::Data, kLowestTag - 1, 0});
  EXPECT_THROW(decodeFrameHeader(lowTag.data(), lowTag.size(), 0), Error);
  const std::vector<std::uint8_t> taggedGo = encodeFrameHeader({FrameType::Go, 1, 0});
  EXPECT_THROW(decodeFrameHeader(taggedGo.data(), taggedGo.size(), 0), Error);
  const std::vector<std::uint8_t> fatBye = encodeFrameHeader({FrameType::Bye, 0, 1});
  EXPECT_THROW(decodeFrameHeader(fatBye.data(), fatBye.size(), 100), Error);
  const std::vector<std::uint8_t> shortHello = encodeFrameHeader({FrameType::Hello, 0, kHelloBytes - 1});
  EXPECT_THROW(decodeFrameHeader(shortHello.data(), shortHello.size(), 1000), Error);
  EXPECT_THROW(decodeFrameHeader(bytes.data(), bytes.size() - 1, 1000), Error);
}

TEST(BootstrapUniqueId, RoundTripsThroughItsText) {
  UniqueIdContents contents;
  contents.token = sampleHello().token;
  contents.root.family = AddressFamily::Ipv6;
  contents.root.bytes[15] = 1;  // ::1
  contents.root.port = 29500;
  const UniqueId id = encodeUniqueId(contents);
  const std::string text = uniqueIdToString(id);
  ASSERT_EQ(text.size(), 2 * kUniqueIdBytes);
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), std::string::npos);
  const UniqueId back = uniqueIdFromString("  " + text + "\n");
  EXPECT_EQ(std::memcmp(back.bytes, id.bytes, kUniqueIdBytes), 0);
  EXPECT_EQ(uniqueIdAddress(back), "[::1]:29500");
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(std::memcmp(uniqueIdFromString(upper).bytes, id.bytes, kUniqueIdBytes), 0);
  const UniqueIdContents decoded = decodeUniqueId(back);
  EXPECT_EQ(decoded.token, contents.token);
  EXPECT_TRUE(decoded.root == contents.root);
}

TEST(BootstrapUniqueId, GarbageTextIsNamed) {
  const std::string good = uniqueIdToString(encodeUniqueId({sampleHello().token, sampleHello().listenAddress, false}));
  EXPECT_TRUE(
      contains(errorOf(ErrorCode::InvalidUsage, [] { uniqueIdFromString(""); }), "0 characters (is the variable"));
  EXPECT_TRUE(
      contains(errorOf(ErrorCode::InvalidUsage, [&] { uniqueIdFromString(good.substr(1)); }), "255 characters"));
  std::string bad = good;
  bad[10] = 'g';
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [&] { uniqueIdFromString(bad); }), "character 11 is 'g'"));
  const std::string zeros(2 * kUniqueIdBytes, '0');
  EXPECT_TRUE(
      contains(errorOf(ErrorCode::InvalidUsage, [&] { uniqueIdFromString(zeros); }), "not a peerlink unique id"));
  std::string trailing = good;
  trailing.back() = '1';
  EXPECT_TRUE(
      contains(errorOf(ErrorCode::InvalidUsage, [&] { uniqueIdFromString(trailing); }), "after the token are not 0"));
  std::string family = good;
  family[12] = '0';
  family[13] = '5';  // byte 6: the address family
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [&] { uniqueIdFromString(family); }), "address family 5"));
}

TEST(BootstrapUniqueId, ConnectRefusesAMalformedIdAndBadArguments) {
  const UniqueId zero{};
  EXPECT_THROW(connectBootstrap(zero, 0, 1, BootstrapOptions{}), Error);
  const UniqueId id = encodeUniqueId({sampleHello().token, sampleHello().listenAddress, false});
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [&] { connectBootstrap(id, 2, 2, BootstrapOptions{}); }),
                       "rank 2 is outside the world of 2 ranks"));
  EXPECT_THROW(connectBootstrap(id, 0, 0, BootstrapOptions{}), Error);
  BootstrapOptions noTime;
  noTime.deadline = std::chrono::milliseconds(0);
  EXPECT_THROW(connectBootstrap(id, 0, 1, noTime), Error);
}

UniqueIdContents contentsWith(bool mayForward) {
  return {sampleHello().token, sampleHello().listenAddress, mayForward};
}

TEST(BootstrapUniqueId, AnIdWhoseRootMayForwardDiffersOnlyInItsFormat) {
  const UniqueId plain = encodeUniqueId(contentsWith(false));
  const UniqueId forwardable = encodeUniqueId(contentsWith(true));
  EXPECT_EQ(plain.bytes[4], kUniqueIdFormat);
  EXPECT_EQ(forwardable.bytes[4], kUniqueIdFormatMayForward);
  EXPECT_EQ(forwardable.bytes[5], 0);
  for (std::size_t i = 0; i < kUniqueIdBytes; ++i) {
    if (i != 4) {
      EXPECT_EQ(plain.bytes[i], forwardable.bytes[i]) << "byte " << i;
    }
  }
  // Nothing of the real NCCL's: zeros after the token.
  EXPECT_TRUE(std::all_of(forwardable.bytes + kUniqueIdOwnBytes, forwardable.bytes + kUniqueIdBytes,
                          [](unsigned char b) { return b == 0; }));
  const UniqueIdContents back = decodeUniqueId(uniqueIdFromString(uniqueIdToString(forwardable)));
  EXPECT_TRUE(back.mayForward);
  EXPECT_EQ(back.token, sampleHello().token);
  EXPECT_TRUE(back.root == sampleHello().listenAddress);
  EXPECT_EQ(uniqueIdAddress(forwardable), "10.0.0.7:41234");
  EXPECT_FALSE(decodeUniqueId(plain).mayForward);
  // Only the NCCL API makes one, with a way to ask the real NCCL for its id.
  EXPECT_TRUE(contains(
      errorOf(ErrorCode::InvalidUsage, [] { makeForwardableUniqueId(Params::fromMap({}), ForwardIdSource()); }),
      "no forward id source"));
}

TEST(BootstrapUniqueId, TheFormThatMayForwardIsDecodedStrictly) {
  const UniqueId good = encodeUniqueId(contentsWith(true));
  const auto problem = [&](std::size_t offset, unsigned char value) {
    UniqueId id = good;
    id.bytes[offset] = value;
    return errorOf(ErrorCode::InvalidUsage, [&] { decodeUniqueId(id); });
  };
  // An id that carried the real NCCL's after the token (a length byte, its bytes) is no id of this peerlink.
  EXPECT_TRUE(contains(problem(kUniqueIdOwnBytes, 16), "after the token are not 0"));
  EXPECT_TRUE(contains(problem(kUniqueIdBytes - 1, 5), "after the token are not 0"));
  EXPECT_TRUE(contains(problem(4, 3), "format 3, this peerlink reads formats 1 and 2"));
  EXPECT_TRUE(contains(problem(4, 0), "format 0"));
  // Mutated bytes only ever give Error(InvalidUsage), and what decodes encodes back to the same bytes.
  std::mt19937 random(99);
  for (int round = 0; round < 20000; ++round) {
    UniqueId id = good;
    for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips) {
      id.bytes[random() % kUniqueIdBytes] ^= static_cast<std::uint8_t>(1u << (random() % 8));
    }
    try {
      const UniqueId again = encodeUniqueId(decodeUniqueId(id));
      ASSERT_EQ(std::memcmp(again.bytes, id.bytes, kUniqueIdBytes), 0);
    } catch (const Error& error) {
      ASSERT_EQ(error.code(), ErrorCode::InvalidUsage) << error.what();
    }
  }
}

TEST(BootstrapUniqueId, TokensAreRandom) {
  EXPECT_NE(randomToken(), randomToken());
}

TEST(BootstrapAddress, SplitsHostAndPort) {
  EXPECT_EQ(splitHostPort("node-a", "X").host, "node-a");
  EXPECT_FALSE(splitHostPort("node-a", "X").port.has_value());
  EXPECT_EQ(*splitHostPort("10.0.0.1:29500", "X").port, 29500);
  EXPECT_EQ(splitHostPort("[fd00::1]:80", "X").host, "fd00::1");
  EXPECT_EQ(*splitHostPort("[fd00::1]:80", "X").port, 80);
  EXPECT_EQ(splitHostPort("fd00::1", "X").host, "fd00::1");
  EXPECT_FALSE(splitHostPort("fd00::1", "X").port.has_value());
  for (const char* bad : {"", ":80", "host:", "host:0", "host:65536", "host:8o", "[::1", "[::1]x", "[]:80"}) {
    EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [&] { splitHostPort(bad, "PEERLINK_BOOTSTRAP_ADDR"); }),
                         "PEERLINK_BOOTSTRAP_ADDR='"));
  }
  const SocketAddress v4 = resolveAddress("127.0.0.1:1234", 0, "X");
  EXPECT_EQ(formatAddress(v4), "127.0.0.1:1234");
  EXPECT_TRUE(v4.isLoopback());
  const SocketAddress v6 = resolveAddress("::1", 77, "X");
  EXPECT_EQ(formatAddress(v6), "[::1]:77");
  EXPECT_TRUE(resolveAddress("0.0.0.0", 0, "X").isWildcard());
  EXPECT_THROW(resolveAddress("no-such-host.invalid", 0, "X"), Error);
  EXPECT_EQ(formatAddress(fromWireAddress(toWireAddress(v6))), "[::1]:77");
}

InterfaceAddress interface(const std::string& name, const std::string& address, bool up = true) {
  InterfaceAddress item;
  item.name = name;
  item.up = up;
  item.address = resolveAddress(address, 0, "test");
  item.loopback = item.address.isLoopback();
  return item;
}

TEST(BootstrapAddress, ChoosesTheFirstRoutableInterface) {
  const auto choose = [](const std::vector<InterfaceAddress>& list) {
    const auto chosen = chooseInterfaceAddress(list);
    return chosen ? chosen->name + " " + formatAddress(chosen->address) : std::string("none");
  };
  EXPECT_EQ(choose({interface("lo", "127.0.0.1"), interface("docker0", "172.17.0.1"), interface("eth0", "10.1.2.3"),
                    interface("eth1", "10.9.9.9")}),
            "eth0 10.1.2.3:0");
  EXPECT_EQ(choose({interface("eth0", "10.1.2.3", false), interface("ib0", "fd00::5"), interface("lo", "::1")}),
            "ib0 [fd00::5]:0");
  EXPECT_EQ(choose({interface("eth0", "fe80::1"), interface("virbr0", "192.168.122.1"), interface("lo", "::1"),
                    interface("lo", "127.0.0.1")}),
            "lo 127.0.0.1:0");
  EXPECT_EQ(choose({interface("lo", "::1")}), "lo [::1]:0");
  EXPECT_EQ(choose({}), "none");
}

TEST(BootstrapAddress, RootAddressFromTheSettingOrTheInterfaces) {
  EXPECT_EQ(formatAddress(rootBindAddress("127.0.0.1:29511", {})), "127.0.0.1:29511");
  EXPECT_EQ(formatAddress(rootBindAddress("", {interface("eth0", "10.1.2.3")})), "10.1.2.3:0");
  EXPECT_TRUE(contains(errorOf(ErrorCode::InvalidUsage, [] { rootBindAddress("0.0.0.0:29500", {}); }), "wildcard"));
  EXPECT_THROW(rootBindAddress("", {}), Error);
}

TEST(BootstrapIdentity, HostIdsAndPidScopes) {
  const std::uint64_t a = hostIdFor("node-a", "boot-1", "");
  EXPECT_EQ(a, hostIdFor("node-a", "boot-1", ""));
  EXPECT_NE(a, hostIdFor("node-b", "boot-1", ""));
  EXPECT_NE(a, hostIdFor("node-a", "boot-2", ""));  // rebooted: another host
  EXPECT_EQ(hostIdFor("node-a", "boot-1", "fake-node-1"), hostIdFor("node-b", "boot-2", "fake-node-1"));
  EXPECT_NE(hostIdFor("node-a", "boot-1", "fake-node-1"), hostIdFor("node-a", "boot-1", "fake-node-2"));
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // the published FNV-1a test vector
  EXPECT_NE(pidScopeFor("boot-1", "pid:[4026531836]"), pidScopeFor("boot-1", "pid:[4026532000]"));

  const PeerIdentity me = localPeerIdentity(3, BootstrapOptions{});
  EXPECT_EQ(me.rank, 3);
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_FALSE(me.hostName.empty());
  EXPECT_EQ(me.hostId, hostIdFor(me.hostName, readBootId(), ""));
  EXPECT_EQ(describePeer(me), "rank 3 (host " + me.hostName + ", pid " + std::to_string(::getpid()) + ")");
}

TEST(BootstrapText, RankListsAndDurations) {
  EXPECT_EQ(formatRankRanges({0, 1, 2, 4, 5, 6}), "0-2, 4-6");
  EXPECT_EQ(formatRankRanges({0, 1, 3}), "0-1, 3");
  EXPECT_EQ(formatRankRanges({7}), "7");
  EXPECT_EQ(formatRankRanges({}), "none");
  EXPECT_EQ(describeRanks({3, 7}), "ranks 3, 7");
  EXPECT_EQ(describeRanks({2}), "rank 2");
  EXPECT_EQ(formatSeconds(std::chrono::milliseconds(30000)), "30 s");
  EXPECT_EQ(formatSeconds(std::chrono::milliseconds(1500)), "1.5 s");
  EXPECT_EQ(formatSeconds(std::chrono::milliseconds(250)), "250 ms");
}

}  // namespace
}  // namespace peerlink::bootstrap
