// Reusing scratch and host-stage slots over a plan's steps (plan_slots.hpp).
#include "coll/plan_slots.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <set>
#include <vector>

namespace peerlink::coll {
namespace {

bool isStaging(BufferKind kind) noexcept {
  return kind == BufferKind::Scratch || kind == BufferKind::HostStage;
}

// One pool per rank and staging buffer.
std::size_t poolOf(const BufferRef& ref) noexcept {
  return 2 * static_cast<std::size_t>(ref.rank) + (ref.buffer == BufferKind::HostStage ? 1 : 0);
}

// What one write put into a pool, from the step that wrote it to the last step that reads it.
struct Value {
  std::size_t pool = 0;
  std::size_t count = 0;
  std::size_t written = 0;
  std::size_t lastUse = 0;
};

// A reference of the plan to remap, and the value it names.
struct Use {
  BufferRef* ref = nullptr;
  std::size_t value = 0;
};

// The plan's staging as values: which ranges each pool holds when, and every reference to them. False where the
// plan does not follow the pattern (plan_slots.hpp).
class Lifetimes {
 public:
  explicit Lifetimes(std::size_t pools) : live_(pools) {}

  bool collect(Plan& plan) {
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
      std::vector<Transfer>& transfers = plan.steps[s].transfers;
      for (Transfer& transfer : transfers) {  // every read of the step sees what earlier steps wrote
        for (BufferRef& src : transfer.srcs) {
          if (isStaging(src.buffer) && !read(src, transfer.count, s)) return false;
        }
      }
      for (Transfer& transfer : transfers) {
        if (isStaging(transfer.dst.buffer)) write(transfer, s);
      }
    }
    return true;
  }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Use>& uses() const { return uses_; }

 private:
  bool read(BufferRef& ref, std::size_t count, std::size_t step) {
    const std::map<std::size_t, std::size_t>& pool = live_[poolOf(ref)];
    const auto found = pool.find(ref.offset);
    if (found == pool.end()) return false;
    Value& value = values_[found->second];
    if (value.count != count || value.written >= step) return false;
    value.lastUse = std::max(value.lastUse, step);
    uses_.push_back({&ref, found->second});
    return true;
  }

  void write(Transfer& transfer, std::size_t step) {
    BufferRef& dst = transfer.dst;
    std::map<std::size_t, std::size_t>& pool = live_[poolOf(dst)];
    const auto same = std::find_if(transfer.srcs.begin(), transfer.srcs.end(), [&](const BufferRef& src) {
      return src.rank == dst.rank && src.buffer == dst.buffer && src.offset == dst.offset;
    });
    if (same != transfer.srcs.end()) {  // a reduction in place: the value read goes on, in the same slot
      const std::size_t id = pool.at(dst.offset);
      values_[id].lastUse = step;
      uses_.push_back({&dst, id});
      return;
    }
    // Whatever this write overlaps is gone from now on: a later read of it finds nothing and the plan is left as is.
    auto it = pool.lower_bound(dst.offset);
    if (it != pool.begin()) {
      const auto before = std::prev(it);
      if (before->first + values_[before->second].count > dst.offset) it = before;
    }
    while (it != pool.end() && it->first < dst.offset + transfer.count) it = pool.erase(it);
    const std::size_t id = values_.size();
    values_.push_back({poolOf(dst), transfer.count, step, step});
    pool[dst.offset] = id;
    uses_.push_back({&dst, id});
  }

  std::vector<std::map<std::size_t, std::size_t>> live_;  // by pool: offset -> the value there now
  std::vector<Value> values_;                             // in the order they were written
  std::vector<Use> uses_;
};

// Slot indices for the values, in the order written: a value takes the lowest slot of its pool whose previous value
// was last read before the step that writes it.
std::vector<std::size_t> assignSlots(const std::vector<Value>& values, std::size_t pools,
                                     std::vector<std::size_t>& slotsUsed) {
  struct Held {
    std::size_t lastUse = 0;
    std::size_t slot = 0;
  };
  std::vector<std::vector<Held>> held(pools);
  std::vector<std::set<std::size_t>> free(pools);
  slotsUsed.assign(pools, 0);
  std::vector<std::size_t> slots(values.size());
  for (std::size_t v = 0; v < values.size(); ++v) {
    const Value& value = values[v];
    std::vector<Held>& taken = held[value.pool];
    for (auto it = taken.begin(); it != taken.end();) {
      if (it->lastUse < value.written) {
        free[value.pool].insert(it->slot);
        it = taken.erase(it);
      } else {
        ++it;
      }
    }
    std::size_t slot = slotsUsed[value.pool];
    if (free[value.pool].empty()) {
      ++slotsUsed[value.pool];
    } else {
      slot = *free[value.pool].begin();
      free[value.pool].erase(free[value.pool].begin());
    }
    taken.push_back({value.lastUse, slot});
    slots[v] = slot;
  }
  return slots;
}

}  // namespace

bool reuseStagingSlots(Plan& plan) {
  const std::size_t pools = 2 * plan.ranks.size();
  Plan remapped = plan;
  Lifetimes lifetimes(pools);
  if (!lifetimes.collect(remapped)) return false;
  std::size_t slotElements = 0;
  for (const Value& value : lifetimes.values()) slotElements = std::max(slotElements, value.count);
  const std::size_t align = std::max<std::size_t>(1, plan.alignElements);
  slotElements = (slotElements + align - 1) / align * align;
  std::vector<std::size_t> slotsUsed;
  const std::vector<std::size_t> slots = assignSlots(lifetimes.values(), pools, slotsUsed);
  for (const Use& use : lifetimes.uses()) use.ref->offset = slots[use.value] * slotElements;
  for (std::size_t r = 0; r < remapped.ranks.size(); ++r) {
    remapped.ranks[r].scratchElements = slotsUsed[2 * r] * slotElements;
    remapped.ranks[r].hostStageElements = slotsUsed[2 * r + 1] * slotElements;
  }
  plan = std::move(remapped);
  return true;
}

}  // namespace peerlink::coll
