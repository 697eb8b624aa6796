#include "topology/link_model.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace peerlink {

double nvlinkRateForVersion(int version) {
  // Per link, per direction, as `nvidia-smi nvlink -s` reports the link speed.
  switch (version) {
    case 1: return 20.0;      // P100
    case 2: return 25.78125;  // V100
    case 3: return 25.0;      // A100
    case 4: return 26.5625;   // H100/H200: 18 links x 26.5625 = 478 GB/s per direction
    case 5: return 50.0;      // B200: NVIDIA's 1.8 TB/s per GPU over 18 links, both directions
    default: return 0.0;
  }
}

double pcieGBps(int gen, int width) {
  // GT/s per lane times line-code efficiency, in bytes: Gen1/2 use 8b/10b, Gen3-5 128b/130b,
  // Gen6 PAM4 with 242/256 FLIT efficiency.
  double perLane = 0;
  switch (gen) {
    case 1: perLane = 2.5 * 8 / 10 / 8; break;
    case 2: perLane = 5.0 * 8 / 10 / 8; break;
    case 3: perLane = 8.0 * 128 / 130 / 8; break;
    case 4: perLane = 16.0 * 128 / 130 / 8; break;
    case 5: perLane = 32.0 * 128 / 130 / 8; break;
    case 6: perLane = 64.0 * 242 / 256 / 8; break;
    default: return 0;
  }
  return width > 0 ? perLane * width : 0;
}

ExpectedBandwidth expectedBandwidth(const Topology& topology, const GpuPair& pair) {
  const Gpu& src = topology.gpus.at(static_cast<size_t>(pair.src));
  const Gpu& dst = topology.gpus.at(static_cast<size_t>(pair.dst));
  if (pair.nvlinks > 0) {
    // A link carries what its slower end allows; NVML's measured rate wins over the version table.
    const int version = std::min(src.nvlink.version > 0 ? src.nvlink.version : dst.nvlink.version,
                                 dst.nvlink.version > 0 ? dst.nvlink.version : src.nvlink.version);
    double rate = 0;
    for (const Gpu* gpu : {&src, &dst}) {
      const double gpuRate = gpu->nvlink.linkRateGBps > 0 ? gpu->nvlink.linkRateGBps : nvlinkRateForVersion(version);
      if (gpuRate > 0) rate = rate > 0 ? std::min(rate, gpuRate) : gpuRate;
    }
    if (rate <= 0) return {0, fmt::format("{} NVLinks of unknown rate", pair.nvlinks)};
    return {pair.nvlinks * rate, fmt::format("{} x NVLink{} at {:.2f} GB/s{}", pair.nvlinks, version, rate,
                                             pair.viaNvswitch ? " through NVSwitch" : "")};
  }
  if (!pair.canAccessPeer) return {0, "no P2P (cudaDeviceCanAccessPeer = 0)"};
  const double srcBw = pcieGBps(src.pcie.gen, src.pcie.width);
  const double dstBw = pcieGBps(dst.pcie.gen, dst.pcie.width);
  if (srcBw <= 0 || dstBw <= 0) return {0, "PCIe link unknown"};
  const Gpu& narrower = srcBw <= dstBw ? src : dst;
  return {std::min(srcBw, dstBw), fmt::format("PCIe Gen{} x{}", narrower.pcie.gen, narrower.pcie.width)};
}

void applyLinkModel(Topology& topology) {
  for (GpuPair& pair : topology.pairs) {
    const ExpectedBandwidth expected = expectedBandwidth(topology, pair);
    pair.expectedGBps = expected.gbps;
    pair.bandwidthBasis = expected.basis;
  }
}

}  // namespace peerlink
