// Transport: carries out routes between GPUs of this process. Which route to take is decided elsewhere
// (route_select.cc); this file only executes it.
#include "peerlink/transport.hpp"

#include <array>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/log.hpp"
#include "core/stream_wait.hpp"
#include "kernels/copy_kernels.cuh"
#include "peerlink/cuda.hpp"
#include "peerlink/error.hpp"
#include "transport/chunk_plan.hpp"
#include "transport/copy_validation.hpp"
#include "transport/peer_access.hpp"
#include "transport/two_hop_pipeline.hpp"

namespace peerlink {
namespace {

// Four slots keep both hops busy through the jitter of either; two would already overlap them.
constexpr int kPipelineSlots = 4;

enum StreamRole { kSyncStream = 0, kFirstHopStream = 1, kSecondHopStream = 2, kStreamRoles = 3 };

}  // namespace

int executingDevice(const Route& route, int src, int dst) noexcept {
  switch (route.mode) {
    case RouteMode::Relay: return route.relayGpu;
    case RouteMode::Staged: return src;
    default: return route.direction == Direction::Read ? dst : src;
  }
}

struct Transport::Impl {
  Topology topology;
  Params params;
  PeerAccessTable peers;
  std::map<int, std::array<Stream, kStreamRoles>> streams;
  PinnedBuffer hostStaging;
  std::map<int, DeviceBuffer> relayStaging;  // per relay GPU
  std::map<std::pair<int, int>, std::unique_ptr<TwoHopPipeline>> pipelines;
  std::map<int, std::array<Event, 2>> stripeEvents;  // per relay GPU: start (recorded there), done
  mutable std::set<std::tuple<int, int, RouteMode, Engine, Direction>> logged;

  cudaStream_t stream(int device, StreamRole role) {
    auto found = streams.find(device);
    if (found == streams.end()) {
      found = streams.emplace(device, std::array<Stream, kStreamRoles>{Stream(device), Stream(device), Stream(device)})
                  .first;
    }
    return found->second[role].get();
  }

  TwoHopPipeline& pipeline(int firstDevice, int secondDevice) {
    std::unique_ptr<TwoHopPipeline>& slot = pipelines[{firstDevice, secondDevice}];
    if (!slot) slot = std::make_unique<TwoHopPipeline>(firstDevice, secondDevice, kPipelineSlots);
    return *slot;
  }

  // Staging storage grows to the largest chunk seen. Growing frees the old buffer, which pipelines of
  // earlier copies may still use, so every helper stream drains first.
  void drainHelperStreams() {
    for (auto& [device, roles] : streams) {
      for (Stream& s : roles) PEERLINK_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    }
  }

  std::vector<void*> slotsOf(void* base, std::size_t chunkBytes) const {
    std::vector<void*> slots;
    for (int slot = 0; slot < kPipelineSlots; ++slot) {
      slots.push_back(static_cast<char*>(base) + static_cast<std::size_t>(slot) * chunkBytes);
    }
    return slots;
  }

  void* hostSlots(std::size_t chunkBytes) {
    const std::size_t needed = chunkBytes * kPipelineSlots;
    if (hostStaging.size() < needed) {
      drainHelperStreams();
      hostStaging = PinnedBuffer(needed);
    }
    return hostStaging.data();
  }

  void* relaySlots(int relay, std::size_t chunkBytes) {
    const std::size_t needed = chunkBytes * kPipelineSlots;
    DeviceBuffer& buffer = relayStaging[relay];
    if (buffer.size() < needed) {
      drainHelperStreams();
      buffer = DeviceBuffer(relay, needed);
    }
    return buffer.data();
  }

  void enqueueP2p(void* dst, int dstDevice, const void* src, int srcDevice, std::size_t bytes, Engine engine,
                  int executing, cudaStream_t stream) {
    peers.enable(executing, executing == srcDevice ? dstDevice : srcDevice);
    DeviceGuard guard(executing);
    if (engine == Engine::Sm) {
      kernels::launchSmCopy(dst, src, bytes, topology.gpus[static_cast<std::size_t>(executing)].smCount, stream);
    } else {
      PEERLINK_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, stream));
    }
  }

  void enqueueStaged(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes, const Route& route, cudaStream_t caller) {
    const std::size_t chunkBytes = route.chunkBytes > 0 ? route.chunkBytes : bytes;
    const std::vector<void*> slots = slotsOf(hostSlots(chunkBytes), chunkBytes);
    const auto* source = static_cast<const char*>(src.data);
    auto* destination = static_cast<char*>(dst.data);
    const Hop toHost{src.device, stream(src.device, kFirstHopStream),
                     [&](std::size_t offset, std::size_t n, void* slot, cudaStream_t s) {
                       PEERLINK_CUDA_CHECK(cudaMemcpyAsync(slot, source + offset, n, cudaMemcpyDeviceToHost, s));
                     }};
    const Hop toDevice{dst.device, stream(dst.device, kSecondHopStream),
                       [&](std::size_t offset, std::size_t n, void* slot, cudaStream_t s) {
                         PEERLINK_CUDA_CHECK(cudaMemcpyAsync(destination + offset, slot, n, cudaMemcpyHostToDevice, s));
                       }};
    pipeline(src.device, dst.device)
        .enqueue(planChunks(bytes, chunkBytes, kPipelineSlots), slots, toHost, toDevice, caller, src.device);
  }

  // SM: a pass-through kernel on the relay GPU. CE, WRITE: the source pushes into the relay GPU's staging
  // slots, the relay GPU pushes to the destination; CE, READ: the relay GPU pulls from the source, the
  // destination pulls from the relay. Either way each GPU's links carry one direction of the traffic.
  void enqueueRelay(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes, const Route& route, cudaStream_t caller) {
    const int relay = route.relayGpu;
    if (route.engine == Engine::Sm) {
      enqueuePassThroughRelay(dst, src, bytes, route, caller);
      return;
    }
    const std::size_t chunkBytes = route.chunkBytes > 0 ? route.chunkBytes : bytes;
    const std::vector<void*> slots = slotsOf(relaySlots(relay, chunkBytes), chunkBytes);
    const auto* source = static_cast<const char*>(src.data);
    auto* destination = static_cast<char*>(dst.data);
    const Engine engine = route.engine;
    const bool read = route.direction == Direction::Read;
    const int firstDevice = read ? relay : src.device;
    const int secondDevice = read ? dst.device : relay;
    const Hop toRelay{firstDevice, stream(firstDevice, kFirstHopStream),
                      [&](std::size_t offset, std::size_t n, void* slot, cudaStream_t s) {
                        enqueueP2p(slot, relay, source + offset, src.device, n, engine, firstDevice, s);
                      }};
    const Hop fromRelay{secondDevice, stream(secondDevice, kSecondHopStream),
                        [&](std::size_t offset, std::size_t n, void* slot, cudaStream_t s) {
                          enqueueP2p(destination + offset, dst.device, slot, relay, n, engine, secondDevice, s);
                        }};
    pipeline(firstDevice, secondDevice)
        .enqueue(planChunks(bytes, chunkBytes, kPipelineSlots), slots, toRelay, fromRelay, caller, relay);
  }

  // A kernel on each relay GPU reads its share of the source and writes it to the destination, both as
  // peer memory (planRelayShares, relayKernelSms). The first share runs on the caller's stream (a stream of
  // relayGpu); the others on the other relay GPUs' helper streams, gated by and joined back to the caller's
  // stream with events.
  void enqueuePassThroughRelay(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes, const Route& route,
                               cudaStream_t caller) {
    std::vector<int> relays = route.relayStripes;
    if (relays.empty()) relays = {route.relayGpu};
    const std::vector<RelayShare> shares = planRelayShares(bytes, relays.size());
    const auto* source = static_cast<const char*>(src.data);
    auto* destination = static_cast<char*>(dst.data);
    Event& start = stripeEvent(route.relayGpu, kStripeStart);
    if (relays.size() > 1) {
      DeviceGuard guard(route.relayGpu);
      PEERLINK_CUDA_CHECK(cudaEventRecord(start.get(), caller));
    }
    for (std::size_t i = 0; i < relays.size(); ++i) {
      const std::size_t offset = shares[i].offset;
      const std::size_t length = shares[i].bytes;
      const int relay = relays[i];
      if (length == 0) continue;
      peers.enable(relay, src.device);
      peers.enable(relay, dst.device);
      DeviceGuard guard(relay);
      const cudaStream_t stream = i == 0 ? caller : this->stream(relay, kFirstHopStream);
      if (i > 0) PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(stream, start.get(), 0));
      kernels::launchSmCopy(destination + offset, source + offset, length,
                            relayKernelSms(topology.gpus[static_cast<std::size_t>(relay)].smCount, relays.size()),
                            stream);
      if (i > 0) {
        Event& done = stripeEvent(relay, kStripeDone);
        PEERLINK_CUDA_CHECK(cudaEventRecord(done.get(), stream));
        PEERLINK_CUDA_CHECK(cudaStreamWaitEvent(caller, done.get(), 0));
      }
    }
  }

  enum StripeEventRole { kStripeStart = 0, kStripeDone = 1 };
  Event& stripeEvent(int device, StripeEventRole role) {
    auto found = stripeEvents.find(device);
    if (found == stripeEvents.end()) {
      found = stripeEvents
                  .emplace(device, std::array<Event, 2>{Event(device, cudaEventDisableTiming),
                                                        Event(device, cudaEventDisableTiming)})
                  .first;
    }
    return found->second[role];
  }

  void logRoute(int src, int dst, std::size_t bytes, const Route& route) const {
    if (!logEnabled(LogLevel::Info, LogSubsys::P2p)) return;
    if (!logged.insert({src, dst, route.mode, route.engine, route.direction}).second) return;
    logInfo(LogSubsys::P2p, "{}", describeRoute(topology, {src, dst, bytes, ProcessBoundary::SameProcess}, route));
  }
};

Transport::Transport(Topology topology, Params params) : impl_(std::make_unique<Impl>()) {
  configureLogging(params);
  impl_->topology = std::move(topology);
  impl_->params = std::move(params);
}

Transport::~Transport() {
  if (impl_) {
    try {
      impl_->drainHelperStreams();
    } catch (const Error&) {
      // A destructor cannot report; the context may already be gone.
    }
  }
}

const Topology& Transport::topology() const noexcept {
  return impl_->topology;
}
const Params& Transport::params() const noexcept {
  return impl_->params;
}

Route Transport::route(int src, int dst, std::size_t bytes) const {
  return selectRoute(impl_->topology, impl_->params, {src, dst, bytes, ProcessBoundary::SameProcess});
}

void Transport::enablePeerAccess(int device, int peer) {
  impl_->peers.enable(device, peer);
}

void Transport::copy(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes, const Route& route, cudaStream_t stream) {
  if (bytes == 0) return;
  // Across processes one side is the other process's memory mapped here; CUDA may report it as memory of
  // the GPU that mapped it (the executing one), so that is accepted for it too.
  const bool shared = route.mode == RouteMode::Ipc || route.mode == RouteMode::Cumem;
  const int mappedBy = shared ? executingDevice(route, src.device, dst.device) : -1;
  validateDevicePointer(impl_->topology, src.data, src.device, "source", mappedBy);
  validateDevicePointer(impl_->topology, dst.data, dst.device, "destination", mappedBy);
  if (src.device == dst.device) {
    if (rangesOverlap(reinterpret_cast<std::uintptr_t>(src.data), reinterpret_cast<std::uintptr_t>(dst.data), bytes)) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("source and destination overlap on GPU {} ({} bytes at {} and {})", src.device, bytes,
                              src.data, dst.data));
    }
    DeviceGuard guard(src.device);
    PEERLINK_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const int executing = executingDevice(route, src.device, dst.device);
  if (executing < 0 || executing >= static_cast<int>(impl_->topology.gpus.size())) {
    throw Error(ErrorCode::InvalidUsage, fmt::format("route {} names GPU {}, which this process does not have",
                                                     routeModeName(route.mode), executing));
  }
  if (stream != nullptr) {
    int streamDevice = -1;
    PEERLINK_CUDA_CHECK(cudaStreamGetDevice(stream, &streamDevice));
    if (streamDevice != executing) {
      throw Error(ErrorCode::InvalidUsage,
                  fmt::format("the stream belongs to GPU {}, but route {} GPU {} -> GPU {} runs on GPU {}",
                              streamDevice, routeModeName(route.mode), src.device, dst.device, executing));
    }
  }
  impl_->logRoute(src.device, dst.device, bytes, route);
  DeviceGuard guard(executing);
  switch (route.mode) {
    case RouteMode::Direct:
    case RouteMode::Ipc:  // the other process's buffer is already mapped here (shared_memory.hpp)
    case RouteMode::Cumem:
      impl_->enqueueP2p(dst.data, dst.device, src.data, src.device, bytes, route.engine, executing, stream);
      return;
    case RouteMode::Staged: impl_->enqueueStaged(dst, src, bytes, route, stream); return;
    case RouteMode::Relay: impl_->enqueueRelay(dst, src, bytes, route, stream); return;
  }
}

Route Transport::copySync(DeviceSpan dst, ConstDeviceSpan src, std::size_t bytes) {
  Route chosen;
  if (src.device != dst.device) chosen = route(src.device, dst.device, bytes);
  const int executing = src.device == dst.device ? src.device : executingDevice(chosen, src.device, dst.device);
  if (bytes == 0) return chosen;
  const cudaStream_t stream = impl_->stream(executing, kSyncStream);
  copy(dst, src, bytes, chosen, stream);
  waitForStream(
      stream, std::chrono::milliseconds(impl_->params.getInt("PEERLINK_TIMEOUT_MS")),
      fmt::format("copy of {} bytes GPU {} -> GPU {} ({})", bytes, src.device, dst.device, routeModeName(chosen.mode)),
      "PEERLINK_TIMEOUT_MS");
  return chosen;
}

}  // namespace peerlink
