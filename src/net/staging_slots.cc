// StagingSlots (net_call.hpp): the staged path's pinned slots, grown as calls need, freed only once the device's
// copies (and a queued call's computations, which the copy stream waits for) that may use them have ended.
#include <algorithm>
#include <string>

#include "core/idle_wait.hpp"
#include "net/net_call.hpp"
#include "peerlink/error.hpp"

namespace peerlink::net {

// The memory is kept where the copies do not end (a copy of a piece takes milliseconds; one that has not ended in
// 10 s is on a broken device).
StagingSlots::~StagingSlots() {
  if (leaked_) return;
  try {
    if (!copiesEnded(std::chrono::seconds(10))) return;
  } catch (const Error&) {
    return;
  }
  release();
}

// Copies out left queued by a call (NetOptions::copiesOutInStreamOrder) may still read the slots.
bool StagingSlots::copiesEnded(std::chrono::milliseconds timeout) {
  const std::uint64_t queued = device_.mark();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  IdleWait idle;
  while (!device_.reached(queued)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    idle.idle();
  }
  return true;
}

void StagingSlots::release() noexcept {
  for (Slot& slot : slots_) {
    for (std::byte* memory : {slot.input, slot.output, slot.scratch, slot.landing}) {
      if (memory != nullptr) device_.freeHost(memory);
    }
    slot = Slot{};
  }
}

void StagingSlots::reserve(const Sizes& bytes, std::chrono::milliseconds timeout) {
  const std::size_t wanted[4] = {bytes.input, bytes.output, bytes.scratch, bytes.landing};
  bool freeable = slots_[0].input == nullptr;  // nothing to free yet, or the copies that read it have ended
  for (int kind = 0; kind < 4; ++kind) {
    if (wanted[kind] <= sizes_[kind] && slots_[0].input != nullptr) continue;
    if (!freeable && !copiesEnded(timeout)) {
      throw Error(ErrorCode::Timeout,
                  "net: the copies out of the pinned slots an earlier call left queued did not "
                  "finish within " +
                      std::to_string(timeout.count()) + " ms");
    }
    freeable = true;
    const std::size_t grown = std::max(wanted[kind], sizes_[kind]);
    for (Slot& slot : slots_) {
      std::byte** parts[4] = {&slot.input, &slot.output, &slot.scratch, &slot.landing};
      std::byte*& memory = *parts[kind];
      if (memory != nullptr && !leaked_.load(std::memory_order_acquire)) device_.freeHost(memory);
      memory = static_cast<std::byte*>(device_.allocateHost(std::max<std::size_t>(grown, 16)));
    }
    sizes_[kind] = grown;
  }
}

}  // namespace peerlink::net
