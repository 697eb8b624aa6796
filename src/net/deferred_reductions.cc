#include "net/deferred_reductions.hpp"

#include <algorithm>

namespace peerlink::net {
namespace {

bool overlap(std::size_t a, std::size_t aCount, std::size_t b, std::size_t bCount) {
  return a < b + bCount && b < a + aCount;
}

// Whether `reduce`, of step `at`, ends the plan: a finishing reduction by the rank that owns its destination, into its
// Output, reading only Inputs, no later transfer reading or writing its result.
bool endsPlan(const coll::Plan& plan, std::size_t at, const coll::Transfer& reduce) {
  if (reduce.kind != coll::TransferKind::Reduce || !reduce.finish || reduce.executor != reduce.dst.rank ||
      reduce.dst.buffer != coll::BufferKind::Output || reduce.srcs.size() < 2) {
    return false;
  }
  const auto isInput = [](const coll::BufferRef& src) { return src.buffer == coll::BufferKind::Input; };
  if (!std::all_of(reduce.srcs.begin(), reduce.srcs.end(), isInput)) return false;
  const auto hits = [&](const coll::BufferRef& ref, std::size_t count) {
    return ref.rank == reduce.dst.rank && ref.buffer == coll::BufferKind::Output &&
           overlap(ref.offset, count, reduce.dst.offset, reduce.count);
  };
  for (std::size_t s = at + 1; s < plan.steps.size(); ++s) {
    for (const coll::Transfer& t : plan.steps[s].transfers) {
      if (hits(t.dst, t.count)) return false;
      for (const coll::BufferRef& src : t.srcs) {
        if (hits(src, t.count)) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::vector<DeferredReduction> deferReductions(coll::Plan& plan, int rank) {
  bool any = false;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    for (const coll::Transfer& t : plan.steps[s].transfers) {
      if (t.kind != coll::TransferKind::Reduce) continue;
      if (!endsPlan(plan, s, t)) return {};
      any = true;
    }
  }
  if (!any) return {};
  const std::size_t align = std::max<std::size_t>(1, plan.alignElements);
  std::vector<DeferredReduction> mine;
  for (coll::Step& step : plan.steps) {
    std::vector<coll::Transfer> transfers;
    for (coll::Transfer& t : step.transfers) {
      if (t.kind != coll::TransferKind::Reduce) {
        transfers.push_back(std::move(t));
        continue;
      }
      const int executor = t.executor;
      coll::RankLayout& layout = plan.ranks[static_cast<std::size_t>(executor)];
      DeferredReduction deferred{t.dst.offset, t.count, {}};
      for (const coll::BufferRef& src : t.srcs) {
        if (src.rank == executor) {
          deferred.sources.push_back(src);
          continue;
        }
        const std::size_t at = (layout.scratchElements + align - 1) / align * align;
        const coll::BufferRef landed{executor, coll::BufferKind::Scratch, at};
        layout.scratchElements = at + t.count;
        coll::Transfer copy;
        copy.executor = executor;
        copy.kind = coll::TransferKind::Copy;
        copy.dst = landed;
        copy.srcs = {src};
        copy.count = t.count;
        transfers.push_back(std::move(copy));
        deferred.sources.push_back(landed);
      }
      if (executor == rank) mine.push_back(std::move(deferred));
    }
    step.transfers = std::move(transfers);
  }
  std::sort(mine.begin(), mine.end(),
            [](const DeferredReduction& a, const DeferredReduction& b) { return a.output < b.output; });
  return mine;
}

}  // namespace peerlink::net
