// The phases across nodes on MPI's staged path (net_staged.hpp).
#include "plan/net_staged.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace peerlink::plan {

const char* networkPathName(NetworkPath path) noexcept {
  return path == NetworkPath::Staged ? "staged" : "gpudirect";
}

std::optional<NetworkPath> parseNetworkPath(const std::string& name) {
  if (name == "gpudirect") return NetworkPath::GpuDirect;
  if (name == "staged") return NetworkPath::Staged;
  return std::nullopt;
}

StagedPieces stagedPiecesOf(Collective collective, int nodes, double bytes, std::size_t chunkBytes) {
  StagedPieces s;
  if (!(bytes > 0) || nodes < 2 || chunkBytes == 0) {
    s.pieces = 0;
    return s;
  }
  s.pieces = static_cast<std::size_t>(std::ceil(bytes / static_cast<double>(chunkBytes)));
  const double p = bytes / static_cast<double>(s.pieces);  // each block's part of a piece
  const auto g = static_cast<double>(nodes);
  switch (collective) {
    case Collective::AllReduce:  // ring: a reduce-scatter and an all-gather of G blocks of p / G
      s = {s.pieces, p, p, 2 * (g - 1), 2 * (g - 1) / g * p, true};
      break;
    case Collective::AllGather: s = {s.pieces, p, g * p, g - 1, (g - 1) * p, true}; break;
    case Collective::ReduceScatter: s = {s.pieces, g * p, p, g - 1, (g - 1) * p, true}; break;
    case Collective::Broadcast:  // a chain from the root: the root copies in, the others out
      s = {s.pieces, p, p, g - 1, p, false};
      break;
    case Collective::Reduce:  // a chain to the root: every rank copies in, the root out too
      s = {s.pieces, p, p, g - 1, p, true};
      break;
    case Collective::AllToAll:  // direct: every message posted at once
      s = {s.pieces, g * p, g * p, 1, (g - 1) * p, true};
      break;
    case Collective::SendRecv: s = {s.pieces, p, p, 1, p, true}; break;
  }
  return s;
}

StagedNetTime stagedNetTime(const StagedPieces& pieces, const StagedCosts& costs) {
  StagedNetTime t;
  if (pieces.pieces == 0) {
    t.timeUs = costs.callUs;
    t.bottleneck = "nothing to move";
    return t;
  }
  const auto copy = [&](double bytes) { return bytes > 0 ? costs.copyLaunchUs + bytes / (costs.copyGBps * 1e3) : 0.0; };
  t.copyInUs = copy(pieces.copyInBytes);
  t.copyOutUs = copy(pieces.copyOutBytes);
  const double latency = pieces.messages * costs.mpi.latencyUs;
  const double data = pieces.sentBytes * costs.mpi.usPerByte;
  t.mpiUs = latency + data;
  const double copies = pieces.copiesOnOneRank ? t.copyInUs + t.copyOutUs : std::max(t.copyInUs, t.copyOutUs);
  const double inFlight = static_cast<double>(std::max<std::size_t>(costs.inFlight, 1));
  const double mpiPeriod = std::max(data, t.mpiUs / inFlight);
  t.periodUs = std::max(copies, mpiPeriod);
  const auto more = static_cast<double>(pieces.pieces - 1);
  const double moving = t.copyInUs + t.mpiUs + t.copyOutUs + more * t.periodUs;
  t.timeUs = costs.callUs + moving;

  // What the time is mostly made of: the fixed cost, else the pipeline's busiest stage (a call of one piece: the
  // larger of its copies and its messages).
  const double copyShare = pieces.pieces > 1 ? more * copies : t.copyInUs + t.copyOutUs;
  const double mpiShare = pieces.pieces > 1 ? more * mpiPeriod : t.mpiUs;
  const std::string shape =
      fmt::format("{} piece{} through pinned host memory", pieces.pieces, pieces.pieces == 1 ? "" : "s");
  if (costs.callUs >= moving) {
    t.bound = StagedBound::FixedCost;
    t.bottleneck = fmt::format("the call's fixed cost across nodes ({:.4g} us), {}", costs.callUs, shape);
  } else if (copyShare > mpiShare) {
    t.bound = StagedBound::Copies;
    t.bottleneck =
        fmt::format("the copies between the GPU and pinned host memory ({:.4g} GB/s), {}", costs.copyGBps, shape);
  } else if (data >= latency) {
    t.bound = StagedBound::MpiBandwidth;
    t.bottleneck = fmt::format("MPI's bandwidth ({:.4g} GB/s a rank), {}",
                               costs.mpi.usPerByte > 0 ? 1e-3 / costs.mpi.usPerByte : 0.0, shape);
  } else {
    t.bound = StagedBound::MpiLatency;
    t.bottleneck = fmt::format("MPI's latency ({:.4g} us a message), {}", costs.mpi.latencyUs, shape);
  }
  return t;
}

}  // namespace peerlink::plan
