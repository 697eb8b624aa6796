// What the transport's CPU tests share: a loopback world (net/point_to_point.hpp) run with one thread per rank.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/point_to_point.hpp"

namespace peerlink::testing {

/// Runs body(rank, world) on one thread per rank of a loopback world; returns each rank's error text ("" if none).
inline std::vector<std::string> onEveryRank(int n,
                                            const std::function<void(int, std::unique_ptr<net::PointToPoint>)>& body) {
  std::vector<std::unique_ptr<net::PointToPoint>> world = net::loopbackWorld(n);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, std::move(world[static_cast<std::size_t>(r)]));
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

}  // namespace peerlink::testing
