// Byte order and bounds for the bootstrap's wire formats: fields are little-endian whatever the host (ranks
// may run on different machines), strings are fixed-size NUL-padded fields, and a reader never reads past the
// bytes it was given (it throws instead), so decoders can be called on arbitrary input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::bootstrap {

/// Appends fields to a byte vector.
class WireWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T>, "wire fields are integers");
    using U = std::make_unsigned_t<T>;
    const U bits = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes_.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  void putBytes(const void* data, std::size_t size) {
    const auto* begin = static_cast<const std::uint8_t*>(data);
    bytes_.insert(bytes_.end(), begin, begin + size);
  }
  /// `text` NUL-padded to `width` bytes; Error(InvalidUsage) when it does not fit with a NUL.
  void putString(const std::string& text, std::size_t width, const char* field) {
    if (text.size() >= width || text.find('\0') != std::string::npos) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("bootstrap: {} '{}' must have at most {} characters and no NUL", field, text, width - 1));
    }
    putBytes(text.data(), text.size());
    bytes_.insert(bytes_.end(), width - text.size(), 0);
  }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

/// Reads fields from [data, data + size); Error(InvalidInput) "malformed <what>: ..." past the end.
class WireReader {
 public:
  WireReader(const std::uint8_t* data, std::size_t size, const char* what) : data_(data), size_(size), what_(what) {
    if (data == nullptr && size > 0) fail("null data");
  }

  template <typename T>
  T get(const char* field) {
    static_assert(std::is_integral_v<T>, "wire fields are integers");
    need(sizeof(T), field);
    std::make_unsigned_t<T> bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bits |= static_cast<std::make_unsigned_t<T>>(static_cast<std::make_unsigned_t<T>>(data_[offset_ + i]) << (8 * i));
    }
    offset_ += sizeof(T);
    return static_cast<T>(bits);
  }
  void getBytes(void* out, std::size_t size, const char* field) {
    need(size, field);
    std::memcpy(out, data_ + offset_, size);
    offset_ += size;
  }
  /// A NUL-padded field of `width` bytes: it must hold a NUL, printable ASCII before it and only NULs after.
  std::string getString(std::size_t width, const char* field, bool allowEmpty) {
    need(width, field);
    const char* begin = reinterpret_cast<const char*>(data_ + offset_);
    const std::size_t length = strnlen(begin, width);
    if (length == width) fail(fmt::format("{} is not NUL-terminated", field));
    if (length == 0 && !allowEmpty) fail(fmt::format("{} is empty", field));
    for (std::size_t i = 0; i < length; ++i) {
      if (begin[i] < ' ' || begin[i] > '~')
        fail(fmt::format("{} has an unprintable byte 0x{:02x}", field, static_cast<unsigned char>(begin[i])));
    }
    for (std::size_t i = length; i < width; ++i) {
      if (begin[i] != 0) fail(fmt::format("{} has bytes after its NUL", field));
    }
    offset_ += width;
    return std::string(begin, length);
  }
  /// Error unless every byte was read.
  void expectEnd() const {
    if (offset_ != size_) fail(fmt::format("{} bytes, {} more than expected", size_, size_ - offset_));
  }
  std::size_t offset() const { return offset_; }
  std::size_t left() const { return size_ - offset_; }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorCode::InvalidInput, fmt::format("malformed {}: {}", what_, problem));
  }

 private:
  void need(std::size_t bytes, const char* field) const {
    if (size_ - offset_ < bytes) {
      fail(fmt::format("{} bytes end inside {} (needs {} more at offset {})", size_, field, bytes, offset_));
    }
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
  const char* what_;
};

}  // namespace peerlink::bootstrap
