// How a buffer of `count` elements is cut among ranks and chunks. Shared by the plans (checked on CPU by
// the host executor) and the GPU kernels, so both move exactly the same ranges (the host ring's kernel,
// kernels/host_ring.cu, cuts its chunks with it on the GPU).
#pragma once

#include <cstddef>

// The functions here compile for the GPU too where nvcc includes them.
#if defined(__CUDACC__)
#define PEERLINK_HOST_DEVICE __host__ __device__
#else
#define PEERLINK_HOST_DEVICE
#endif

namespace peerlink::coll {

/// A range of elements [begin, begin + count).
struct ElementRange {
  std::size_t begin = 0;
  std::size_t count = 0;
};

/// The part of `count` elements that `part` of `parts` owns: contiguous, in part order, sizes differing by
/// at most `align` elements, every boundary but the last a multiple of `align` (so vector accesses stay
/// aligned; `align` >= 1). Parts past the end are empty. Covers [0, count) exactly once.
PEERLINK_HOST_DEVICE inline ElementRange partitionRange(std::size_t count, int parts, int part, std::size_t align = 1) {
  if (parts <= 0 || part < 0 || part >= parts || count == 0) {
    return {};
  }
  if (align == 0) {
    align = 1;
  }
  const std::size_t units = (count + align - 1) / align;  // aligned units, the last maybe partial
  const std::size_t base = units / static_cast<std::size_t>(parts);
  const std::size_t extra = units % static_cast<std::size_t>(parts);
  const auto index = static_cast<std::size_t>(part);
  const std::size_t firstUnit = index * base + (index < extra ? index : extra);
  const std::size_t unitCount = base + (index < extra ? 1 : 0);
  std::size_t begin = firstUnit * align;
  std::size_t end = (firstUnit + unitCount) * align;
  if (begin > count) {
    begin = count;
  }
  if (end > count) {
    end = count;
  }
  return {begin, end - begin};
}

/// Part `part` of `range` cut from its start into parts of `partCount` elements (the push reduction's
/// launches, a stage slot each): at most `partCount` elements from begin + part * partCount, empty (at the
/// range's end) once the range has none left, so the parts of every shard line up at the same offsets.
PEERLINK_HOST_DEVICE inline ElementRange slotPartOf(ElementRange range, std::size_t partCount, std::size_t part) {
  const std::size_t skip = partCount * part;
  const std::size_t from = skip < range.count ? skip : range.count;
  const std::size_t rest = range.count - from;
  return {range.begin + from, rest < partCount ? rest : partCount};
}

}  // namespace peerlink::coll
