// An Error raised by a step, retold with what this side was doing ("rank 2 waiting for ...: <the error>").
#pragma once

#include <string>

#include "peerlink/error.hpp"

namespace peerlink::bootstrap {

/// Runs `body`; an Error it throws is rethrown with the same code and `prefix` before its message.
template <typename Body>
auto prefixErrors(const std::string& prefix, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error& error) {
    throw Error(error.code(), prefix + error.what());
  }
}

}  // namespace peerlink::bootstrap
