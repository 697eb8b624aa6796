// Checks on collective calls, before anything is launched: each call on its own (validateCall), then the
// calls of one set against each other (checkSetMatches), and send/recv calls paired (matchSendRecvs). Every
// failure is Error(InvalidUsage) naming the call, the rank and its GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "coll/comm_state.hpp"

namespace peerlink::coll {

/// Whether launches into the stream go into a graph being captured (an invalidated capture counts as not:
/// launching into it fails where the launch is made).
bool streamCapturing(cudaStream_t stream);

/// "allReduce", "broadcast", ... as the API spells the call.
const char* callName(Collective collective, bool isSend = false);
/// "allReduce on rank 2 (GPU 2)".
std::string callLabel(const CommState& state, const CallArgs& call);

/// The rank is in range; the stream belongs to the rank's GPU; type, op and root are valid; count * size
/// does not overflow; every buffer the call uses is non-null, element-aligned, memory of the rank's GPU
/// or managed (pointerKind, core/pointer_kind.hpp); send and recv are either the documented in-place pair
/// or disjoint (allToAll: always disjoint).
void validateCall(const CommState& state, const CallArgs& call);

/// Throws when two of `calls[0..count)` (one per rank this process drives) run on one GPU and on one stream: their
/// kernels could not run side by side, and each would wait for the other.
void checkStreamsApart(const CommState& state, const CallArgs* const* calls, std::size_t count);

/// The k-th calls of all ranks (set[r] is rank r's) agree with rank 0's: same collective, count, type,
/// op and root; either every rank's stream is being captured into a graph or none is; and no two ranks on one
/// GPU share a stream (checkStreamsApart).
bool checkSetMatches(const CommState& state, const std::vector<CallArgs>& set);

/// One send matched with its recv.
struct SendRecvPair {
  CallArgs send;
  CallArgs recv;
};

/// Pairs the k-th send from r to p with the k-th recv on p from r, in call order. Throws naming the first
/// send or recv without a partner, or a pair whose count or type differ. Consumes nothing when it throws.
std::vector<SendRecvPair> matchSendRecvs(const CommState& state, const std::vector<CallArgs>& calls);

/// Whether the streams of a send/recv group are being captured into a graph: every rank's in the group or
/// none (throws naming the first rank whose stream disagrees with the first call's rank's); no two ranks on one
/// GPU share a stream.
bool checkGroupCapture(const CommState& state, const std::vector<SendRecvPair>& pairs);

}  // namespace peerlink::coll
