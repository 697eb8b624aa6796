// The staged plans a communicator built for its latest call shapes, kept so the calls an application repeats (a
// training step's all-reduces of the same sizes) do not rebuild them: building is pure (segment_plans.hpp) but costs
// microseconds per call, about 100 us on 8 ranks, where the call itself may take a few hundred.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "coll/plan.hpp"
#include "coll/segment_plans.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink::coll {

/// The `capacity` values most recently asked for, by key (compared with ==); asking for another builds it and drops
/// the one asked for longest ago. A value lives on while a caller holds it, evicted or not.
template <typename Key, typename Value>
class RecentValues {
 public:
  explicit RecentValues(std::size_t capacity) : capacity_(capacity) {}

  /// The value for `key`, made by `make()` if it is not among the recent ones.
  template <typename Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    }
    auto value = std::make_shared<const Value>(make());
    if (capacity_ == 0) return value;
    if (entries_.size() == capacity_) entries_.pop_back();
    entries_.emplace_front(key, value);
    return value;
  }

  std::size_t size() const noexcept { return entries_.size(); }

 private:
  std::size_t capacity_;
  std::list<std::pair<Key, std::shared_ptr<const Value>>> entries_;  // the most recent first
};

/// What a call's staged segments depend on besides the communicator's links and chunk (fixed at creation).
struct CallShapeKey {
  Collective collective = Collective::AllReduce;
  std::size_t count = 0;
  int root = 0;
  DataType type = DataType::F32;
  bool operator==(const CallShapeKey& other) const noexcept {
    return collective == other.collective && count == other.count && root == other.root && type == other.type;
  }
};

/// What a send/recv group's staged pieces depend on besides the links and chunk.
struct GroupShapeKey {
  std::vector<PointToPoint> pairs;
  DataType type = DataType::F32;
  bool operator==(const GroupShapeKey& other) const noexcept {
    if (type != other.type || pairs.size() != other.pairs.size()) return false;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const PointToPoint& a = pairs[i];
      const PointToPoint& b = other.pairs[i];
      if (a.from != b.from || a.to != b.to || a.count != b.count) return false;
    }
    return true;
  }
};

/// Shapes kept of each kind: more than the distinct calls of most training steps' communicators, few enough that
/// the plans held stay small.
constexpr std::size_t kRecentPlanShapes = 16;

/// A communicator's recent staged plans: collectives by call shape, send/recv groups by their pairs.
struct RecentPlans {
  RecentValues<CallShapeKey, std::vector<StagedSegment>> calls{kRecentPlanShapes};
  RecentValues<GroupShapeKey, std::vector<StagedPiece>> groups{kRecentPlanShapes};
};

}  // namespace peerlink::coll
