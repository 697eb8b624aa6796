// localCpusOfDevice (gpu_cpus.hpp).
#include "topology/gpu_cpus.hpp"

#include <cuda_runtime_api.h>

#include "peerlink/params.hpp"
#include "topology/sysfs_pci.hpp"

namespace peerlink {

std::string localCpusOfDevice(int device, const Params& params) {
  char busId[32] = {};
  if (cudaDeviceGetPCIBusId(busId, sizeof(busId), device) != cudaSuccess) {
    cudaGetLastError();  // not sticky, but leave no error for the caller's next check
    return {};
  }
  try {
    return readSysfsPciDevice(params.getString("PEERLINK_SYSFS_ROOT"), busId).cpuList;
  } catch (const std::exception&) {  // a bus id sysfs cannot name
    return {};
  }
}

}  // namespace peerlink
