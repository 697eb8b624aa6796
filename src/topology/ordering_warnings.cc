// Warnings about how this process numbers the GPUs, a frequent source of "wrong GPU" confusion.
#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "peerlink/topology.hpp"

namespace peerlink {

std::vector<std::string> orderingWarnings(const Topology& topology) {
  std::vector<std::string> warnings;
  const auto& gpus = topology.gpus;

  std::vector<size_t> byBus(gpus.size());
  std::iota(byBus.begin(), byBus.end(), 0);
  std::stable_sort(byBus.begin(), byBus.end(), [&](size_t a, size_t b) { return gpus[a].pciBusId < gpus[b].pciBusId; });
  if (!std::is_sorted(byBus.begin(), byBus.end())) {
    std::vector<std::string> mapping;
    for (const Gpu& gpu : gpus) mapping.push_back(fmt::format("CUDA {} = {}", gpu.cudaOrdinal, gpu.pciBusId));
    warnings.push_back(fmt::format(
        "CUDA numbers the GPUs in another order than their PCI bus ids ({}){}; set CUDA_DEVICE_ORDER=PCI_BUS_ID "
        "to make CUDA's numbers match nvidia-smi's",
        fmt::join(mapping, ", "),
        topology.cudaDeviceOrder ? fmt::format(" with CUDA_DEVICE_ORDER={}", *topology.cudaDeviceOrder)
                                 : std::string(" (CUDA_DEVICE_ORDER is unset, so CUDA puts the fastest first)")));
  }

  std::vector<std::string> differing;
  for (const Gpu& gpu : gpus) {
    if (gpu.nvmlIndex >= 0 && gpu.nvmlIndex != gpu.cudaOrdinal) {
      differing.push_back(fmt::format("CUDA {} is nvidia-smi GPU {}", gpu.cudaOrdinal, gpu.nvmlIndex));
    }
  }
  if (!differing.empty()) {
    warnings.push_back(fmt::format("CUDA device numbers differ from nvidia-smi's: {}", fmt::join(differing, ", ")));
  }

  std::set<std::string> visible;
  for (const Gpu& gpu : gpus) visible.insert(gpu.uuid);
  std::vector<std::string> hidden;
  for (const NvmlGpu& gpu : topology.nvmlGpus) {
    if (visible.count(gpu.uuid) == 0) hidden.push_back(fmt::format("nvidia-smi GPU {} ({})", gpu.index, gpu.pciBusId));
  }
  if (!hidden.empty()) {
    if (topology.cudaVisibleDevices) {
      warnings.push_back(fmt::format("CUDA_VISIBLE_DEVICES={} hides {} of {} GPUs from this process: {}",
                                     *topology.cudaVisibleDevices, hidden.size(), topology.nvmlGpus.size(),
                                     fmt::join(hidden, ", ")));
    } else {
      warnings.push_back(
          fmt::format("this process sees {} of the {} GPUs NVML reports (a container or cgroup "
                      "limits it); not visible: {}",
                      gpus.size(), topology.nvmlGpus.size(), fmt::join(hidden, ", ")));
    }
  }
  return warnings;
}

}  // namespace peerlink
