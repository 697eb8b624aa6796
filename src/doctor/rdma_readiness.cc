// checkRdmaReadiness (include/peerlink/rdma_readiness.hpp): the files, CUDA's per-GPU answers and the MPI
// tools read into a snapshot, then decided.
#include "peerlink/rdma_readiness.hpp"

#include "core/driver_api.hpp"
#include "doctor/mpi_cuda_probe.hpp"
#include "doctor/rdma_checks.hpp"
#include "doctor/rdma_snapshot.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

std::optional<bool> attribute(CUdevice_attribute which, int ordinal) {
  try {
    return driverDeviceAttribute(which, ordinal) != 0;
  } catch (const Error&) {
    return std::nullopt;  // no driver, or one too old to know the attribute: unknown
  }
}

std::vector<GpuRdmaAttributes> askCuda(const Topology& topology, bool ask) {
  std::vector<GpuRdmaAttributes> gpus(topology.gpus.size());
  if (!ask || topology.source != "discovered") return gpus;
  for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
    const int ordinal = topology.gpus[i].cudaOrdinal;
    if (ordinal < 0) continue;
    gpus[i].gpuDirectRdma = attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, ordinal);
    gpus[i].dmaBuf = attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, ordinal);
  }
  return gpus;
}

}  // namespace

RdmaReadinessOptions rdmaOptionsUnder(const std::string& root) {
  RdmaReadinessOptions options;
  options.sysRoot = root + "/sys";
  options.procRoot = root + "/proc";
  options.bootRoot = root + "/boot";
  options.devRoot = root + "/dev";
  options.mpiOutputDir = root + "/mpi";
  return options;
}

RdmaReadiness checkRdmaReadiness(const Topology& topology, const RdmaReadinessOptions& options) {
  RdmaSnapshot snapshot = readRdmaSnapshot(topology, options);
  snapshot.gpus = askCuda(topology, options.queryCuda);
  snapshot.mpiToolsTried = mpiTools();
  snapshot.mpis = probeMpiCuda(options.mpiToolTimeout, options.mpiOutputDir);
  return decideRdmaReadiness(topology, std::move(snapshot));
}

}  // namespace peerlink
