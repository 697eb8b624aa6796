// Bounded binary encoding for messages between processes: a writer that appends fixed-width fields and
// length-prefixed strings, and a reader that checks every length against what is left before it reads, so
// any bytes from outside decode to a value or to Error(InvalidInput) naming the field -- never to a read past
// the end. Fields are in host byte order: peers of one communicator run the same build on one kind of host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "peerlink/error.hpp"

namespace peerlink {

class ByteWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_arithmetic_v<T>, "fixed-width numbers only");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
  }
  /// A u32 length, then the bytes.
  void putString(const std::string& text) {
    put(static_cast<std::uint32_t>(text.size()));
    out_.insert(out_.end(), text.begin(), text.end());
  }
  std::vector<std::uint8_t>& bytes() noexcept { return out_; }

 private:
  std::vector<std::uint8_t> out_;
};

class ByteReader {
 public:
  /// `what` names the message in errors ("rank card from rank 3").
  ByteReader(const std::uint8_t* data, std::size_t size, std::string what)
      : data_(data), size_(data == nullptr ? 0 : size), what_(std::move(what)) {}

  template <typename T>
  T get(const char* field) {
    static_assert(std::is_arithmetic_v<T>, "fixed-width numbers only");
    need(sizeof(T), field);
    T value{};
    std::memcpy(&value, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  /// A string of at most `maxBytes`, every byte printable ASCII (what goes into messages and logs).
  std::string getString(const char* field, std::size_t maxBytes) {
    const auto length = get<std::uint32_t>(field);
    if (length > maxBytes) fail(field, std::to_string(length) + " bytes, more than " + std::to_string(maxBytes));
    need(length, field);
    std::string text(reinterpret_cast<const char*>(data_ + offset_), length);
    for (const char c : text) {
      if (c < 0x20 || c > 0x7e) fail(field, "a byte that is not printable ASCII");
    }
    offset_ += length;
    return text;
  }
  /// An integer that must lie in [low, high].
  template <typename T>
  T getInRange(const char* field, T low, T high) {
    const T value = get<T>(field);
    if (value < low || value > high) {
      fail(field, std::to_string(value) + " outside " + std::to_string(low) + ".." + std::to_string(high));
    }
    return value;
  }
  /// Error unless every byte left is zero: the padding after a message in a fixed-size slot, which a strict
  /// decoder does not let carry anything.
  void expectZeroPadding() const {
    for (std::size_t i = offset_; i < size_; ++i) {
      if (data_[i] != 0) fail("padding", "byte " + std::to_string(i) + " after the message is not 0");
    }
  }
  std::size_t remaining() const noexcept { return size_ - offset_; }
  [[noreturn]] void fail(const char* field, const std::string& problem) const {
    throw Error(ErrorCode::InvalidInput, "malformed " + what_ + ": " + field + ": " + problem);
  }

 private:
  void need(std::size_t bytes, const char* field) const {
    if (bytes > size_ - offset_) {
      fail(field, "needs " + std::to_string(bytes) + " bytes, " + std::to_string(size_ - offset_) + " left");
    }
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
  std::string what_;
};

}  // namespace peerlink
