// What a GPU test between processes can run, read once in a forked child so that the test process itself never
// touches CUDA (forked_roles.hpp): how many GPUs, why a communicator over them cannot run, and whether GPU 0
// exports POSIX-fd cuMem handles. Each test turns these facts into its own reasons to skip.
#pragma once

#include <string>
#include <vector>

#include "coll_test_support.hpp"
#include "core/driver_api.hpp"
#include "forked_roles.hpp"
#include "gpu_test_support.hpp"

namespace peerlink::testing {

struct GpuProbe {
  int gpus = 0;
  std::string noGpu;           ///< why there is no GPU (or why the probe failed); empty when there is one
  std::string noCommunicator;  ///< why a communicator of one process over every GPU cannot run; empty when it can
  bool cumemFd = false;        ///< GPU 0 exports POSIX-fd cuMem handles
};

constexpr const char* kNoCumemFd = "GPU 0 cannot export POSIX-fd cuMem handles";

inline GpuProbe probeGpus() {
  Pipe pipe;
  Child child("gpu probe", [&] {
    std::string noGpu;
    const int gpus = cudaDevices(&noGpu);
    std::vector<int> devices;
    const std::string noCommunicator = gpus > 0 ? communicatorUnavailable(&devices) : noGpu;
    const bool fd =
        gpus > 0 && driverDeviceAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0) != 0;
    pipe.send(std::to_string(gpus));
    pipe.send(noGpu);
    pipe.send(noCommunicator);
    pipe.send(fd ? "1" : "0");
    return kOk;
  });
  pipe.closeWrite();
  GpuProbe found;
  try {
    found.gpus = std::stoi(pipe.receive(kChildLimit));
    found.noGpu = pipe.receive();
    found.noCommunicator = pipe.receive();
    found.cumemFd = pipe.receive() == "1";
  } catch (const std::exception& error) {
    found = GpuProbe{};
    found.noGpu = found.noCommunicator = std::string("the GPU probe process failed: ") + error.what();
  }
  waitAll({&child}, 30s);
  return found;
}

}  // namespace peerlink::testing
