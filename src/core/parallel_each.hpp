// Work side by side, one thread per item: for what waits on other ranks (connecting, exchanging), where one thread
// doing the items in turn would wait for itself.
#pragma once

#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink {

/// Where item 0 runs: on a thread of its own like the others, or on the calling thread.
enum class FirstItem { OwnThread, CallingThread };

/// Runs body(i) for every i in [0, count) at once, a thread each (item 0 on the calling thread when `first` says
/// so), waits for all, then rethrows the first error by index.
template <typename Body>
void forEachInParallel(std::size_t count, Body&& body, FirstItem first = FirstItem::OwnThread) {
  std::vector<std::exception_ptr> errors(count);
  const auto run = [&](std::size_t i) {
    try {
      body(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  const std::size_t from = first == FirstItem::CallingThread ? 1 : 0;
  std::vector<std::thread> threads;
  threads.reserve(count);
  try {
    for (std::size_t i = from; i < count; ++i) threads.emplace_back(run, i);
  } catch (const std::system_error& error) {
    // No thread for an item (a process or cgroup limit): the items started are joined -- their waits on the others
    // end at their deadlines -- rather than destroyed joinable, which would end the process.
    for (std::thread& thread : threads) thread.join();
    throw Error(ErrorCode::SystemError,
                fmt::format("cannot start a thread for item {} of {}: {}", threads.size() + from, count, error.what()));
  }
  if (from == 1 && count > 0) run(0);
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace peerlink
