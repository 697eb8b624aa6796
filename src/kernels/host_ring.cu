// The host ring's kernel (host_ring.cuh).
#include <cstdint>
#include <cstring>

#include "coll/partition.hpp"
#include "core/cuda_check.hpp"
#include "kernels/coll_device.cuh"
#include "kernels/coll_reduce_ops.cuh"
#include "kernels/host_ring.cuh"
#include "kernels/kernel_preload.cuh"
#include "kernels/launch_kernel.cuh"
#include "kernels/plan_barrier.cuh"

namespace peerlink::kernels {
namespace {

using namespace colldev;

// A ring area's word `which` (0 ready, 1 free) of block `block`.
__device__ __forceinline__ unsigned long long* ringWord(unsigned char* area, int which, int block) {
  return reinterpret_cast<unsigned long long*>(area) +
         (static_cast<std::size_t>(which) * kHostRingMaxBlocks + static_cast<std::size_t>(block)) * kHostRingWordStride;
}

// Block `block`'s slot for its fill or receive number `place` (hostRingBlockState's sent or received, counting on
// across calls), of `slotBytes`, in an area of regions of `regionBytes`.
__device__ __forceinline__ unsigned char* ringSlot(unsigned char* area, int block, unsigned long long place,
                                                   std::size_t slotBytes, std::size_t regionBytes) {
  return area + kHostRingWordsBytes + static_cast<std::size_t>(block) * regionBytes +
         static_cast<std::size_t>(place % kHostRingSlots) * slotBytes;
}

// 16-byte packs each thread keeps in flight: loads of host memory take microseconds (8 measured slower than 4).
constexpr int kUnroll = 4;

// One action's data, `count` elements: v = received (op input, where it reduces) or input; v into out and slot.
// `received` is the previous rank's slot (host memory, loaded afresh: a slot is refilled from call to call).
template <int Type, int Op>
__device__ void moveAction(const HostRingAction& action, const typename Elem<Type>::S* received,
                           const typename Elem<Type>::S* input, typename Elem<Type>::S* out,
                           typename Elem<Type>::S* slot, std::size_t count, int nranks) {
  using E = Elem<Type>;
  using S = typename E::S;
  using A = typename E::A;
  constexpr int kElems = static_cast<int>(16 / sizeof(S));
  union Pack {
    uint4 raw;
    S e[kElems];
  };
  const auto tid = static_cast<std::size_t>(threadIdx.x);
  const auto stride = static_cast<std::size_t>(blockDim.x);
  const auto combine = [&](A a, A b) {
    const A acc = applyOp<A, Op>(a, b);
    return action.finishes ? finishOp<A, Op>(acc, nranks) : acc;
  };
  const std::uintptr_t addresses = reinterpret_cast<std::uintptr_t>(received) |
                                   reinterpret_cast<std::uintptr_t>(input) | reinterpret_cast<std::uintptr_t>(out) |
                                   reinterpret_cast<std::uintptr_t>(slot);
  std::size_t done = 0;
  if ((addresses & 15) == 0) {
    const std::size_t packs = count / kElems;
    for (std::size_t base = tid; base < packs; base += stride * kUnroll) {
      Pack got[kUnroll];
      Pack own[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t p = base + static_cast<std::size_t>(u) * stride;
        if (p >= packs) break;
        if (action.receives) got[u].raw = __ldcv(reinterpret_cast<const uint4*>(received) + p);
        if (!action.receives || action.reduces) own[u].raw = reinterpret_cast<const uint4*>(input)[p];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t p = base + static_cast<std::size_t>(u) * stride;
        if (p >= packs) break;
        Pack v;
        if (!action.receives) {
          v = own[u];
        } else if (action.reduces) {
#pragma unroll
          for (int e = 0; e < kElems; ++e) v.e[e] = E::store(combine(E::load(got[u].e[e]), E::load(own[u].e[e])));
        } else {
          v = got[u];
        }
        if (action.stores) reinterpret_cast<uint4*>(out)[p] = v.raw;
        if (action.sends) reinterpret_cast<uint4*>(slot)[p] = v.raw;
      }
    }
    done = packs * kElems;
  }
  for (std::size_t i = done + tid; i < count; i += stride) {
    S v;
    if (!action.receives) {
      v = input[i];
    } else {
      S got;
      if constexpr (sizeof(S) == 1) {
        got = static_cast<S>(__ldcv(reinterpret_cast<const unsigned char*>(received) + i));
      } else if constexpr (sizeof(S) == 2) {
        const unsigned short bits = __ldcv(reinterpret_cast<const unsigned short*>(received) + i);
        memcpy(&got, &bits, 2);
      } else if constexpr (sizeof(S) == 4) {
        const unsigned int bits = __ldcv(reinterpret_cast<const unsigned int*>(received) + i);
        memcpy(&got, &bits, 4);
      } else {
        const unsigned long long bits = __ldcv(reinterpret_cast<const unsigned long long*>(received) + i);
        memcpy(&got, &bits, 8);
      }
      v = action.reduces ? E::store(combine(E::load(got), E::load(input[i]))) : got;
    }
    if (action.stores) out[i] = v;
    if (action.sends) slot[i] = v;
  }
}

// Thread 0: waits until *word >= value and keeps the value it saw in *seen; on a timeout or abort records the stall
// (waiting on `peer`, in the block's call `call`: the record's observed and expected are slots of the call).
__device__ bool awaitRingWord(const HostRingArgs& args, const unsigned long long* word, unsigned long long value,
                              int peer, unsigned long long call, unsigned long long* seen) {
  unsigned long long observed = 0;
  if (waitAtLeast(word, value, args.timeoutNs, args.abort, &observed)) {
    *seen = observed;
    return true;
  }
  const unsigned long long base = hostRingWord(call, 0);
  recordPlanStall(args.failure, call + 1, observed >= base ? observed - base : 0, value - base,
                  aborted(args.abort) ? PEERLINK_STATUS_REMOTE_ERROR : PEERLINK_STATUS_TIMEOUT, args.stallStep, peer,
                  args.recordedCollective, static_cast<int>(blockIdx.x));
  return false;
}

template <int Type, int Op>
__global__ void __launch_bounds__(kRingMaxThreads) hostRingKernel(const __grid_constant__ HostRingArgs args) {
  using S = typename Elem<Type>::S;
  awaitPreviousKernel();
  allowNextKernel();
  const int block = static_cast<int>(blockIdx.x);
  __shared__ unsigned long long filled;   // slots of this call this rank has filled
  __shared__ unsigned long long emptied;  // slots of this call of the previous rank this rank has emptied
  __shared__ int failed;
  // Thread 0: the previous rank's ready word and the next rank's free word as last read. A word read once often
  // covers the next few slots too, and each read of host memory takes a round trip over PCIe.
  unsigned long long readySeen = 0;
  unsigned long long freeSeen = 0;
  const HostRingBlockState state = args.state[block];
  const unsigned long long call = state.calls;
  // Thread 0: what each slot must have had emptied before this call fills it (the header).
  unsigned long long occupant[kHostRingSlots];
  for (int slot = 0; slot < kHostRingSlots; ++slot) occupant[slot] = hostRingFirstFreeNeed(state, args.slotBytes, slot);
  if (threadIdx.x == 0) {
    filled = 0;
    emptied = 0;
    failed = 0;
  }
  __syncthreads();
  unsigned long long* ownReady = ringWord(args.ownArea, 0, block);
  const unsigned long long* ownFree = ringWord(args.ownArea, 1, block);
  const unsigned long long* prevReady = ringWord(args.prevArea, 0, block);
  unsigned long long* prevFree = ringWord(args.prevArea, 1, block);

  const std::size_t slotBytes = args.slotBytes;
  const std::size_t sliceElements = slotBytes / sizeof(S);
  coll::ElementRange parts[kCollMaxRanks];
  std::size_t slices = 0;
  for (int c = 0; c < args.nranks; ++c) {
    parts[c] = coll::partitionRange(args.chunkCount[c], args.blocks, block, args.alignElements);
    const std::size_t need = (parts[c].count + sliceElements - 1) / sliceElements;
    slices = need > slices ? need : slices;
  }
  const int first = hostRingFirstAction(args.collective, args.nranks);
  const int last = hostRingLastAction(args.collective, args.nranks);
  // Every thread leaves the loops at the same barrier: `failed` is read only right after one.
  bool stopped = false;
  for (std::size_t i = 0; i < slices && !stopped; ++i) {
    for (int a = first; a <= last; ++a) {
      const HostRingAction action = hostRingAction(args.collective, args.nranks, args.position, args.rootPosition, a);
      if (threadIdx.x == 0) {
        bool ok = true;
        if (action.receives) {
          const unsigned long long need = hostRingReadyNeed(call, emptied);
          if (readySeen < need) ok = awaitRingWord(args, prevReady, need, args.prev, call, &readySeen);
        }
        if (ok && action.sends) {
          const unsigned long long need = occupant[(state.sent + filled) % kHostRingSlots];
          if (freeSeen < need) ok = awaitRingWord(args, ownFree, need, args.next, call, &freeSeen);
        }
        if (!ok) failed = 1;
      }
      __syncthreads();
      if (failed != 0) {
        stopped = true;
        break;
      }
      const coll::ElementRange piece = coll::slotPartOf(parts[action.chunk], sliceElements, i);
      const S* input = static_cast<const S*>(args.input) + args.inBegin[action.chunk] + piece.begin;
      S* out = static_cast<S*>(args.output) + args.outBegin[action.chunk] + piece.begin;
      moveAction<Type, Op>(
          action,
          reinterpret_cast<const S*>(
              ringSlot(args.prevArea, block, state.received + emptied, slotBytes, args.regionBytes)),
          input, out,
          reinterpret_cast<S*>(ringSlot(args.ownArea, block, state.sent + filled, slotBytes, args.regionBytes)),
          piece.count, args.nranks);
      __syncthreads();  // every load of the previous rank's slot has returned too: its values were used
      if (threadIdx.x == 0) {
        if (action.sends) {
          // The block's slot stores, which the barrier ordered before this thread's, reach the area before the
          // ready word says so: the fence is cumulative.
          __threadfence_system();
          occupant[(state.sent + filled) % kHostRingSlots] = hostRingWord(call, filled + 1);
          storeReleaseSys(reinterpret_cast<uint64_t*>(ownReady), hostRingWord(call, ++filled));
        }
        if (action.receives) storeRelaxedSys(reinterpret_cast<uint64_t*>(prevFree), hostRingWord(call, ++emptied));
      }
      // `filled` and `emptied` are read again only after the next action's barrier.
    }
  }
  // Done with the call, run through or stopped (every load of the previous rank's slots has returned: the last
  // barrier): its slots are free for the previous rank's next call. The places move by the call's whole count.
  if (threadIdx.x == 0) {
    storeRelaxedSys(reinterpret_cast<uint64_t*>(prevFree), hostRingWord(call + 1, 0));
    const HostRingSlots perSlice =
        hostRingSlotsPerSlice(args.collective, args.nranks, args.position, args.rootPosition);
    HostRingBlockState next = state;
    next.calls = call + 1;
    next.slotBytes = slotBytes;
    next.stopped = stopped ? 1 : 0;
    next.sent = state.sent + slices * static_cast<unsigned long long>(perSlice.sends);
    next.received = state.received + slices * static_cast<unsigned long long>(perSlice.receives);
    for (int slot = 0; slot < kHostRingSlots; ++slot) next.occupant[slot] = occupant[slot];
    args.state[block] = next;
  }
}

}  // namespace

void launchHostRing(const HostRingArgs& args, CollType type, CollOp op, cudaStream_t stream,
                    const KernelLaunch& launch) {
  detail::dispatchTypeOp(type, op, [&](auto typeConstant, auto opConstant) {
    constexpr int kType = decltype(typeConstant)::value;
    constexpr int kOp = decltype(opConstant)::value;
    detail::launchKernel(hostRingKernel<kType, kOp>, args.blocks, args.threads, stream, args, launch);
  });
}

namespace detail {

void preloadHostRingKernels() {
  forEachTypeOp([](auto typeConstant, auto opConstant) {
    loadKernel(hostRingKernel<decltype(typeConstant)::value, decltype(opConstant)::value>, "hostRingKernel");
  });
}

}  // namespace detail
}  // namespace peerlink::kernels
