// The share protocol without a GPU: encoding and validation, and both handshake halves between real processes
// (a memfd stands in for the cuMem descriptor; the child side reports through its exit code, never gtest).
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "child_process.hpp"
#include "core/unix_socket.hpp"
#include "peerlink/error.hpp"
#include "transport/share_protocol.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using namespace ::peerlink::testing;  // the forked-child harness

const std::string kBusId = "0000:00:06.0";

bool contains(const Error& error, const std::string& needle) {
  return std::string(error.what()).find(needle) != std::string::npos;
}

// Expects `decode` to refuse `bytes` with Error(InvalidInput) mentioning `needle`.
template <typename Decode>
void rejects(Decode decode, const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  const Error error = expectError(ErrorCode::InvalidInput, [&] { decode(bytes.data(), bytes.size()); });
  EXPECT_TRUE(contains(error, needle)) << error.what();
}

std::vector<std::uint8_t> head(const std::vector<std::uint8_t>& bytes, std::size_t length) {
  return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
}

ShareOffer sampleOffer(ShareKind kind) {
  ShareOffer offer;
  offer.kind = kind;
  offer.size = (1u << 20) + 13;
  offer.allocatedSize = kind == ShareKind::Cumem ? (2u << 20) : offer.size;
  offer.exportMs = 0.25;
  offer.ownerBusId = kBusId;
  if (kind == ShareKind::Ipc) {
    for (std::size_t i = 0; i < offer.ipcHandle.size(); ++i) offer.ipcHandle[i] = static_cast<std::uint8_t>(i * 3 + 1);
  }
  return offer;
}

TEST(ShareProtocolEncoding, OfferRoundTrips) {
  for (const ShareKind kind : {ShareKind::Ipc, ShareKind::Cumem}) {
    const ShareOffer offer = sampleOffer(kind);
    const std::vector<std::uint8_t> bytes = encodeShareOffer(offer);
    ASSERT_EQ(bytes.size(), kShareOfferBytes);
    const ShareOffer back = decodeShareOffer(bytes.data(), bytes.size());
    EXPECT_EQ(back.kind, kind);
    EXPECT_EQ(back.size, offer.size);
    EXPECT_EQ(back.allocatedSize, offer.allocatedSize);
    EXPECT_EQ(back.exportMs, offer.exportMs);
    EXPECT_EQ(back.ownerBusId, kBusId);
    EXPECT_EQ(back.ipcHandle, offer.ipcHandle);
  }
  EXPECT_STREQ(shareKindName(ShareKind::Ipc), "IPC");
  EXPECT_STREQ(shareKindName(ShareKind::Cumem), "CUMEM");
}

TEST(ShareProtocolEncoding, OfferRejectsMalformedBytes) {
  const std::vector<std::uint8_t> good = encodeShareOffer(sampleOffer(ShareKind::Cumem));

  for (std::size_t length = 0; length < good.size(); ++length) rejects(decodeShareOffer, head(good, length), "bytes");
  auto longer = good;
  longer.push_back(0);
  rejects(decodeShareOffer, longer, "expected 128");
  auto badMagic = good;
  badMagic[0] ^= 0xff;
  rejects(decodeShareOffer, badMagic, "magic");
  auto version = good;
  version[4] = 2;
  rejects(decodeShareOffer, version, "protocol version 2");
  for (const int kind : {0, 3, 255}) {
    auto unknown = good;
    unknown[6] = static_cast<std::uint8_t>(kind);
    rejects(decodeShareOffer, unknown, "unknown kind");
  }
  auto zero = good;
  std::memset(zero.data() + 8, 0, 8);
  rejects(decodeShareOffer, zero, "size 0");
  auto small = good;
  std::memset(small.data() + 16, 0, 8);
  small[16] = 1;
  rejects(decodeShareOffer, small, "smaller than the size");
  auto emptyBus = good;
  std::memset(emptyBus.data() + 32, 0, kShareBusIdBytes);
  rejects(decodeShareOffer, emptyBus, "bus id");
  auto unterminated = good;
  std::memset(unterminated.data() + 32, 'a', kShareBusIdBytes);
  rejects(decodeShareOffer, unterminated, "not NUL-terminated");
  auto unprintable = good;
  unprintable[33] = '\n';
  rejects(decodeShareOffer, unprintable, "unprintable");
  expectError(ErrorCode::InvalidInput, [] { decodeShareOffer(nullptr, 0); });
}

TEST(ShareProtocolEncoding, OfferEncodingRejectsBadBusIds) {
  ShareOffer offer = sampleOffer(ShareKind::Ipc);
  offer.ownerBusId.clear();
  expectError(ErrorCode::InvalidUsage, [&] { encodeShareOffer(offer); });
  offer.ownerBusId = std::string(kShareBusIdBytes, '0');
  expectError(ErrorCode::InvalidUsage, [&] { encodeShareOffer(offer); });
}

TEST(ShareProtocolEncoding, RepliesRoundTrip) {
  ShareReply ok;
  ok.importMs = 1.5;
  ok.mapMs = 2.5;
  std::vector<std::uint8_t> bytes = encodeShareReply(ok);
  ShareReply back = decodeShareReply(bytes.data(), bytes.size());
  EXPECT_TRUE(back.ok);
  EXPECT_TRUE(back.message.empty());
  EXPECT_EQ(back.importMs, 1.5);
  EXPECT_EQ(back.mapMs, 2.5);

  ShareReply failure;
  failure.ok = false;
  failure.code = ErrorCode::Unsupported;
  failure.message = "the exporting GPU 0000:00:06.0 is not visible";
  bytes = encodeShareReply(failure);
  back = decodeShareReply(bytes.data(), bytes.size());
  EXPECT_FALSE(back.ok);
  EXPECT_EQ(back.code, ErrorCode::Unsupported);
  EXPECT_EQ(back.message, failure.message);

  failure.message = std::string(kMaxShareReplyText + 100, 'x');
  bytes = encodeShareReply(failure);
  EXPECT_EQ(bytes.size(), kShareReplyFixedBytes + kMaxShareReplyText);
  EXPECT_EQ(decodeShareReply(bytes.data(), bytes.size()).message.size(), kMaxShareReplyText);
}

TEST(ShareProtocolEncoding, ReplyRejectsMalformedBytes) {
  ShareReply failure;
  failure.ok = false;
  failure.code = ErrorCode::CudaError;
  failure.message = "boom";
  const std::vector<std::uint8_t> good = encodeShareReply(failure);

  for (std::size_t length = 0; length < good.size(); ++length) rejects(decodeShareReply, head(good, length), "bytes");
  auto longer = good;
  longer.push_back('!');
  rejects(decodeShareReply, longer, "text length");
  auto badMagic = encodeShareOffer(sampleOffer(ShareKind::Ipc));  // an offer where a reply belongs
  rejects(decodeShareReply, badMagic, "magic");
  auto huge = good;
  const std::uint32_t length = kMaxShareReplyText + 1;
  std::memcpy(huge.data() + 12, &length, sizeof(length));
  rejects(decodeShareReply, huge, "more than");
}

// A status that is no peerlink status is rejected before it becomes an enum (UBSan flagged the conversion
// on millions of fuzzed replies); the peer's text is shown, not obeyed, by a terminal.
TEST(ShareProtocolEncoding, ReplyStatusIsCheckedBeforeItBecomesAnEnum) {
  ShareReply failure;
  failure.ok = false;
  failure.code = ErrorCode::Timeout;
  failure.message = "peer says \x1b[2J hello";
  std::vector<std::uint8_t> bytes = encodeShareReply(failure);
  EXPECT_EQ(decodeShareReply(bytes.data(), bytes.size()).message, "peer says \\x1b[2J hello");
  for (const std::int32_t status : {12, 99, -1, 0x7fffffff, -0x7fffffff - 1}) {
    std::memcpy(bytes.data() + 8, &status, sizeof(status));
    rejects(decodeShareReply, bytes, fmt::format("status {} is not a peerlink status (0..11)", status));
  }
  const std::int32_t internal = PEERLINK_STATUS_INTERNAL;
  std::memcpy(bytes.data() + 8, &internal, sizeof(internal));
  EXPECT_EQ(decodeShareReply(bytes.data(), bytes.size()).code, ErrorCode::Internal);
}

class ShareHandshakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/peerlink-share-test-XXXXXX";
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

  std::string directory_;
  UnixListenerOptions options_;
};

// A memfd holding `text`, standing in for an exported cuMem descriptor.
FileDescriptor fakeExportFd(const std::string& text) {
  FileDescriptor fd(::memfd_create("peerlink-fake-cumem", MFD_CLOEXEC));
  if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    throw Error(ErrorCode::SystemError, "memfd");
  }
  return fd;
}

std::function<ExportedHandle()> exporting(ShareKind kind, const FileDescriptor* fd) {
  return [kind, fd] {
    ExportedHandle handle;
    handle.offer = sampleOffer(kind);
    if (fd != nullptr) handle.fd.reset(::dup(fd->get()));
    return handle;
  };
}

TEST_F(ShareHandshakeTest, CumemOfferPassesTheDescriptor) {
  UnixListener listener("cumem.sock", options_);
  const FileDescriptor memfd = fakeExportFd("exported allocation");
  Child importer([&] {
    int received = -1;
    const ShareTimings timings = importShareOnce(
        listener.path(),
        [&](ReceivedOffer& offer) {
          char text[64] = {};
          received = offer.fd.get();
          if (offer.offer.kind != ShareKind::Cumem || offer.offer.size != (1u << 20) + 13 ||
              offer.offer.allocatedSize != (2u << 20) || offer.offer.ownerBusId != kBusId ||
              offer.exporterPid != ::getppid() || ::pread(received, text, sizeof(text) - 1, 0) <= 0 ||
              std::string(text) != "exported allocation") {
            throw Error(ErrorCode::DataMismatch, "offer or descriptor not as sent");
          }
          return ImportCosts{1.5, 2.5};
        },
        kLong);
    // The received descriptor is closed once imported.
    const bool closed = ::fcntl(received, F_GETFD) < 0 && errno == EBADF;
    return closed && timings.importMs == 1.5 && timings.mapMs == 2.5 && timings.exportMs >= 0 ? kChildOk
                                                                                              : kChildWrongResult;
  });
  const ShareTimings timings = serveShareOnce(listener, exporting(ShareKind::Cumem, &memfd), kLong);
  EXPECT_EQ(timings.importMs, 1.5);
  EXPECT_EQ(timings.mapMs, 2.5);
  EXPECT_GE(timings.exportMs, 0);
  EXPECT_GE(timings.handshakeMs, 0);
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, IpcOfferCarriesTheHandleAndNoDescriptor) {
  UnixListener listener("ipc.sock", options_);
  Child importer([&] {
    importShareOnce(
        listener.path(),
        [](ReceivedOffer& offer) {
          if (offer.fd || offer.offer.ipcHandle != sampleOffer(ShareKind::Ipc).ipcHandle) {
            throw Error(ErrorCode::DataMismatch, "IPC offer not as sent");
          }
          return ImportCosts{0.5, 0};
        },
        kLong);
    return kChildOk;
  });
  EXPECT_EQ(serveShareOnce(listener, exporting(ShareKind::Ipc, nullptr), kLong).importMs, 0.5);
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ImporterFailureReachesTheExporter) {
  UnixListener listener("import-fails.sock", options_);
  const std::string text = "the exporting GPU 0000:00:06.0 is not visible in this process (CUDA_VISIBLE_DEVICES=1)";
  Child importer([&] {
    return childExpectsError(ErrorCode::Unsupported, text, [&] {
      importShareOnce(
          listener.path(), [&](ReceivedOffer&) -> ImportCosts { throw Error(ErrorCode::Unsupported, text); }, kLong);
    });
  });
  const FileDescriptor memfd = fakeExportFd("x");
  const Error error = expectError(ErrorCode::RemoteError,
                                  [&] { serveShareOnce(listener, exporting(ShareKind::Cumem, &memfd), kLong); });
  EXPECT_TRUE(contains(error, text)) << error.what();
  EXPECT_TRUE(contains(error, "Unsupported")) << error.what();
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ExporterFailureReachesTheImporter) {
  UnixListener listener("export-fails.sock", options_);
  Child importer([&] {
    return childExpectsError(ErrorCode::RemoteError, "cuMemExportToShareableHandle refused", [&] {
      importShareOnce(
          listener.path(), [](ReceivedOffer&) -> ImportCosts { throw Error(ErrorCode::Internal, "not reached"); },
          kLong);
    });
  });
  expectError(ErrorCode::CudaError, [&] {
    serveShareOnce(
        listener, []() -> ExportedHandle { throw Error(ErrorCode::CudaError, "cuMemExportToShareableHandle refused"); },
        kLong);
  });
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ImporterThatVanishesAfterConnectingFailsTheExporterPromptly) {
  UnixListener listener("vanishing-importer.sock", options_);
  Child importer([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    ::_exit(kChildOk);
    return kChildOk;
  });
  const auto start = Clock::now();
  const FileDescriptor memfd = fakeExportFd("x");
  const Error error = expectError(ErrorCode::RemoteError,
                                  [&] { serveShareOnce(listener, exporting(ShareKind::Cumem, &memfd), kLong); });
  EXPECT_LT(Clock::now() - start, kLong);
  EXPECT_TRUE(contains(error, listener.path())) << error.what();
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ImporterThatVanishesAfterTheOfferFailsTheExporter) {
  UnixListener listener("vanishing-after-offer.sock", options_);
  Child importer([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    connection.receiveMessage(kLong);
    ::_exit(kChildOk);
    return kChildOk;
  });
  const Error error =
      expectError(ErrorCode::RemoteError, [&] { serveShareOnce(listener, exporting(ShareKind::Ipc, nullptr), kLong); });
  EXPECT_TRUE(contains(error, "answer")) << error.what();
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, SilentImporterTimesOut) {
  UnixListener listener("silent.sock", options_);
  Child importer([&] {
    UnixConnection connection = connectUnix(listener.path(), kLong);
    std::this_thread::sleep_for(kLong);
    return kChildOk;
  });
  const auto start = Clock::now();
  expectError(ErrorCode::Timeout, [&] { serveShareOnce(listener, exporting(ShareKind::Ipc, nullptr), 300ms); });
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(ShareHandshakeTest, NoImporterTimesOut) {
  UnixListener listener("nobody.sock", options_);
  const auto start = Clock::now();
  const Error error =
      expectError(ErrorCode::Timeout, [&] { serveShareOnce(listener, exporting(ShareKind::Ipc, nullptr), 200ms); });
  EXPECT_TRUE(contains(error, "waiting for an importer")) << error.what();
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(ShareHandshakeTest, ExporterThatVanishesFailsTheImporterPromptly) {
  UnixListener listener("vanishing-exporter.sock", options_);
  bool imported = false;
  Child importer([&] {
    const int code = childExpectsError(ErrorCode::RemoteError, "receiving the offer", [&] {
      importShareOnce(
          listener.path(),
          [&](ReceivedOffer&) {
            imported = true;
            return ImportCosts{};
          },
          kLong);
    });
    return imported ? kChildWrongResult : code;
  });
  { UnixConnection connection = listener.accept(kLong); }
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ExporterThatVanishesBeforeTheDescriptorFailsTheImporter) {
  UnixListener listener("no-fd.sock", options_);
  Child importer([&] {
    return childExpectsError(ErrorCode::RemoteError, "receiving the file descriptor", [&] {
      importShareOnce(
          listener.path(), [](ReceivedOffer&) -> ImportCosts { throw Error(ErrorCode::Internal, "not reached"); },
          kLong);
    });
  });
  {
    UnixConnection connection = listener.accept(kLong);
    const std::vector<std::uint8_t> offer = encodeShareOffer(sampleOffer(ShareKind::Cumem));
    connection.sendMessage(offer.data(), offer.size(), kLong);
  }
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ExporterGoneBeforeTheAnswerFailsTheImportAfterItRan) {
  UnixListener listener("gone-before-answer.sock", options_);
  Child importer([&] {
    bool imported = false;
    const int code = childExpectsError(ErrorCode::RemoteError, "answering", [&] {
      importShareOnce(
          listener.path(),
          [&](ReceivedOffer&) {
            imported = true;
            std::this_thread::sleep_for(200ms);  // the exporter closes meanwhile
            return ImportCosts{};
          },
          kLong);
    });
    return imported ? code : kChildWrongResult;
  });
  {
    UnixConnection connection = listener.accept(kLong);
    const std::vector<std::uint8_t> offer = encodeShareOffer(sampleOffer(ShareKind::Ipc));
    connection.sendMessage(offer.data(), offer.size(), kLong);
  }
  EXPECT_EQ(importer.wait(), kChildOk);
}

TEST_F(ShareHandshakeTest, ImporterRejectsAStranger) {
  UnixListener listener("stranger.sock", options_);
  Child importer([&] {
    return childExpectsError(ErrorCode::InvalidInput, "magic", [&] {
      importShareOnce(
          listener.path(), [](ReceivedOffer&) -> ImportCosts { throw Error(ErrorCode::Internal, "not reached"); },
          kLong);
    });
  });
  UnixConnection connection = listener.accept(kLong);
  const std::string hello = "HTTP/1.1 200 OK";
  connection.sendMessage(hello.data(), hello.size(), kLong);
  EXPECT_EQ(importer.wait(), kChildOk);
}

}  // namespace
}  // namespace peerlink
