// The parts of the functional probe that need no GPU: how a failure's message maps to a known cause.
// (The probe itself runs in tests/gpu/test_gpu_doctor.cc.)
#include <gtest/gtest.h>

#include "doctor/functional_probe.hpp"

namespace peerlink {
namespace {

TEST(ClassifyProbeFailure, KnownCauses) {
  EXPECT_EQ(classifyProbeFailure("exporter process: GPU 0000:00:07.0 is not visible to the exporting process "
                                 "(CUDA_VISIBLE_DEVICES=GPU-1234)"),
            "peer_hidden");
  EXPECT_EQ(classifyProbeFailure("the exporting GPU 0000:00:07.0 is not visible in this process"), "peer_hidden");
  EXPECT_EQ(classifyProbeFailure("socket(AF_UNIX): Too many open files"), "open_file_limit");
  EXPECT_EQ(classifyProbeFailure("cuMemExportToShareableHandle failed: EMFILE"), "open_file_limit");
  EXPECT_EQ(classifyProbeFailure("the exporter process exited early"), "");
  EXPECT_EQ(classifyProbeFailure(""), "");
}

}  // namespace
}  // namespace peerlink
