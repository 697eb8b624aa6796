// peerlink::Communicator's state behind its pointer: the communicator's state proper (CommState), the bootstraps
// of a world that spans processes, and what their watchdogs report. Private to the Communicator's files
// (communicator.cc, communicator_split.cc, communicator_windows.cc, communicator_access.cc); a world across hosts is
// node_world.hpp's.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "coll/bootstrap_exchange.hpp"
#include "coll/comm_state.hpp"
#include "coll/comm_teardown.hpp"
#include "coll/node_world.hpp"
#include "coll/shared_memory_exchange.hpp"
#include "coll/world_exchange.hpp"
#include "peerlink/bootstrap.hpp"
#include "peerlink/communicator.hpp"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"

namespace peerlink {

struct Communicator::State {
  std::mutex mutex;  // calls may come from one thread per rank
  // A peer of another process that was lost (its bootstrap's watchdog saw it exit or abort): set from the
  // watchdog's thread, reported by the next call. Declared before the bootstraps, which call into it.
  std::mutex lossMutex;
  std::string loss;
  // The abort word the kernels read (comm.abortWord points here): allocated once the GPUs are set up; at the end
  // taken with `comm` by the teardown (retire), which keeps it as long as the kernels may read it. Taken and raised
  // under lossMutex: the watchdogs raise it from their threads, also while the teardown waits.
  PinnedBuffer abortWord;
  // Ranks in other processes: one bootstrap per local rank, kept for the watchdog; destroyed after `comm` is retired,
  // so peers see a goodbye only once this process's kernels have finished or been told to stop (their late stores
  // land in memory this process still maps: comm_teardown.hpp keeps the imports as long as its kernels may run).
  std::vector<std::unique_ptr<Bootstrap>> bootstraps;
  coll::CommState comm;
  // A world across hosts (node_world.hpp): every call goes through it; `comm` then only describes the world
  // (NodeWorld::describeTo). Null on one host. Destroyed first, once the bootstraps no longer report into it.
  std::unique_ptr<coll::NodeWorld> nodes;
  // The calls' own all-gather across processes (callAllGather): made at the first, alike on every process; where
  // some process could not make it, the calls use the bootstraps' sockets for good.
  std::unique_ptr<coll::SharedMemoryExchange> callExchange;
  bool callExchangeTried = false;

  void throwIfPeerLost() {
    const std::lock_guard<std::mutex> lock(lossMutex);
    if (!loss.empty()) throw Error(ErrorCode::RemoteError, "Communicator: " + loss);
  }
  // Records why the communicator gives up (the first reason stays) and raises the abort word its kernels read.
  void giveUp(const std::string& why) noexcept {
    const std::lock_guard<std::mutex> lock(lossMutex);
    try {
      if (loss.empty()) loss = why;
    } catch (...) {  // no memory for the text: the abort word still stops the kernels
    }
    if (abortWord.data() != nullptr) *static_cast<volatile unsigned int*>(abortWord.data()) = 1;
  }
  // The communicator's end on this host (comm_teardown.hpp): waits for its own work only, then frees `comm`'s
  // buffers and the abort word, or holds them while other GPU work of the process runs.
  void retire() noexcept { coll::retireCommunicator(comm, abortWord, lossMutex); }
  void submit(const coll::CallArgs& call);  // communicator.cc
  // The all-gather a call's own exchanges use (those of calls that share their buffers): through shared memory for
  // small blobs, else the bootstraps' (communicator.cc). With a patience, nullopt on every process where some rank
  // came later than it (the sockets wait for every rank). Under `mutex`.
  std::optional<std::vector<std::uint8_t>> callAllGather(const std::vector<std::vector<std::uint8_t>>& blobs,
                                                         std::size_t bytes,
                                                         std::optional<std::chrono::nanoseconds> patience);

  // Runs body(exchange) with the world's exchange: the bootstraps' across processes, the local ranks' own in
  // one process.
  template <typename Body>
  auto withExchange(Body&& body) {
    if (bootstraps.empty()) {
      coll::LocalExchange exchange;
      return body(static_cast<coll::WorldExchange&>(exchange));
    }
    std::vector<Bootstrap*> local;
    for (const auto& bootstrap : bootstraps) local.push_back(bootstrap.get());
    coll::BootstrapExchange exchange(local);
    return body(static_cast<coll::WorldExchange&>(exchange));
  }
  // After setup (a pinned allocation needs a context): the abort word, zeroed, handed to the kernels.
  void armAbortWord() {
    DeviceGuard guard(comm.devices[static_cast<std::size_t>(comm.localRanks().front())]);  // not device 0's context
    abortWord = PinnedBuffer(sizeof(unsigned int), cudaHostAllocMapped | cudaHostAllocPortable);
    *static_cast<volatile unsigned int*>(abortWord.data()) = 0;
    comm.abortWord = static_cast<unsigned int*>(abortWord.data());
  }
};

}  // namespace peerlink
