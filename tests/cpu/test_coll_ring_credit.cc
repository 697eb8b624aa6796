// The ring reduce's stage credit across calls (collRingSlotReleased, kernels/coll_kernels.cuh): the free
// flag value after which a sender may refill a slot of the next rank's stage for a new call, checked against
// a model of the next rank reading the previous call's rounds in order; and the release of a whole call
// (collRingStageReleased) against both calls' rounds.
#include <gtest/gtest.h>

#include "kernels/coll_kernels.cuh"

namespace peerlink::kernels {
namespace {

constexpr unsigned long long kSlots = kCollRingSlots;

// The next rank's free flag once it has read rounds 0..read-1 of call `call`.
unsigned long long freedAfter(unsigned long long call, unsigned long long read) {
  return (call << kCollRoundBits) + read;
}

// The credit a block records after rounds 0..end of call `call` (round `end` carries the end marker).
unsigned long long creditOf(unsigned long long call, unsigned long long end) {
  return (call << kCollRoundBits) + end + 1;
}

TEST(CollRingCredit, ASlotIsReleasedExactlyWhenNoUnreadRoundOfTheCallUsesIt) {
  for (const unsigned long long call : {1ull, 2ull, 12345ull}) {
    for (unsigned long long end = 0; end < 24; ++end) {
      const unsigned long long credit = creditOf(call, end);
      for (unsigned long long slot = 0; slot < kSlots; ++slot) {
        const unsigned long long released = collRingSlotReleased(credit, slot);
        ASSERT_LE(released, credit) << "never more than the whole call";
        ASSERT_GT(released, freedAfter(call, 0)) << "at least one round of the call";
        for (unsigned long long read = 0; read <= end + 1; ++read) {
          bool unreadUsesSlot = false;
          for (unsigned long long k = read; k <= end; ++k) unreadUsesSlot = unreadUsesSlot || k % kSlots == slot;
          const bool slotUsed = slot <= end;
          const bool waitPasses = freedAfter(call, read) >= released;
          if (slotUsed) {
            // Safe (never passes while a round on the slot is unread) and no stricter than that.
            EXPECT_EQ(waitPasses, !unreadUsesSlot)
                << "call " << call << ", rounds 0.." << end << ", slot " << slot << ", " << read << " read";
          } else {
            // A slot the call did not use: its last use was an earlier call, over once the whole call is read.
            EXPECT_EQ(waitPasses, read == end + 1) << "rounds 0.." << end << ", slot " << slot << ", " << read;
          }
        }
      }
    }
  }
}

TEST(CollRingCredit, TheReleaseOfAWholeCallAnswersEverySlotAndNoLaterCallsWait) {
  const unsigned long long call = 77;
  const unsigned long long released = collRingStageReleased(call);
  for (const unsigned long long end : {0ull, 3ull, 4ull, 1000ull, (1ull << kCollRoundBits) - 2}) {
    for (unsigned long long slot = 0; slot < kSlots; ++slot) {
      EXPECT_LE(collRingSlotReleased(creditOf(call, end), slot), released) << end << ", slot " << slot;
    }
  }
  EXPECT_LT(released, freedAfter(call + 1, 1)) << "below the next call's first round";
}

}  // namespace
}  // namespace peerlink::kernels
