// The way of a call across processes (cross_process_way.hpp).
#include "coll/cross_process_way.hpp"

#include <string>

#include "coll/comm_setup.hpp"
#include "coll/host_ring_call.hpp"
#include "coll/sharing_choice.hpp"
#include "coll/staging_plan.hpp"
#include "peerlink/params.hpp"

namespace peerlink::coll {

const char* crossProcessWayName(CrossProcessWay way) noexcept {
  switch (way) {
    case CrossProcessWay::OwnBuffers: return "own_buffers";
    case CrossProcessWay::RegisteredWindows: return "registered_windows";
    case CrossProcessWay::SharedAtCall: return "shared_at_call";
    case CrossProcessWay::ArenaRing: return "arena_ring";
    case CrossProcessWay::StagingWindows: return "staging_windows";
  }
  return "?";
}

CrossProcessSettings crossProcessSettingsFrom(const Params& params) {
  CrossProcessSettings settings;
  settings.sharing = bufferSharingNamed(params.getString("PEERLINK_COLL_SHARE_BUFFERS"));
  settings.arenaRing = arenaRingModeNamed(params.getString("PEERLINK_COLL_ARENA_RING"));
  settings.arenaRingShape = arenaRingShapeNamed(params.getString("PEERLINK_COLL_ARENA_RING_SHAPE"));
  settings.windowBytes = stagingWindowBytes(params);
  settings.hasRingArea = settings.windowBytes > 0 && settings.arenaRing != ArenaRingMode::Off;
  settings.stageSerially = params.getString("PEERLINK_COLL_STAGE_UNREGISTERED") == "SERIAL";
  return settings;
}

CrossProcessWay crossProcessWay(const CrossProcessSettings& settings, Collective collective, std::size_t bytes,
                                int nranks, DataFlow flow, bool registered, bool capturing) {
  if (bytes == 0 || flow == DataFlow::ThroughStages) return CrossProcessWay::OwnBuffers;
  if (registered) return CrossProcessWay::RegisteredWindows;
  if (sharesAtCall(settings.sharing, collective, bytes, capturing)) return CrossProcessWay::SharedAtCall;
  if (settings.hasRingArea && runsAsArenaRing(collective, bytes, DataType::U8, nranks, settings.arenaRing)) {
    return CrossProcessWay::ArenaRing;
  }
  return CrossProcessWay::StagingWindows;
}

std::string describeCrossProcessWay(CrossProcessWay way, const CrossProcessSettings& settings, Collective collective,
                                    std::size_t bytes, int nranks) {
  switch (way) {
    case CrossProcessWay::OwnBuffers: return "in LL lines on the callers' own buffers";
    case CrossProcessWay::RegisteredWindows: return "on registered windows, reaching the peers' buffers directly";
    case CrossProcessWay::SharedAtCall:
      return "on buffers shared with the peers at the call (cudaMalloc memory), reaching them directly";
    case CrossProcessWay::ArenaRing:
      return describeArenaRing(arenaRingShape(hostRingCallBytes(collective, bytes, DataType::U8, nranks),
                                              settings.arenaRingShape, settings.maxBlocks));
    case CrossProcessWay::StagingWindows:
      return "through the staging windows (chunks of half a window, " +
             std::to_string(stagingHalfBytes(settings.windowBytes)) + " bytes for send and recv, " +
             (settings.stageSerially ? "one after another)" : "each one's copies overlapping another's kernel)");
  }
  return "?";
}

}  // namespace peerlink::coll
