// Kernels whose needs a call does not meet step aside for the kernel their registry row names
// (src/coll/kernel_registry.cc): on buffers 4 bytes past a 16-byte boundary the rings and the push reduction
// run the direct kernels instead, and the results match the host's. Forced onto the rings and the push, f32 and
// u8, in place and out, several roots; the choice itself is tested on CPU (test_coll_choice.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll_test_support.hpp"

namespace peerlink::testing {
namespace {

void runUnaligned(Communicator& comm, const std::vector<Collective>& collectives, std::size_t count, const char* what) {
  const int n = comm.size();
  for (const Collective collective : collectives) {
    for (const DataType type : {DataType::F32, DataType::U8}) {
      for (const bool inPlace : {false, true}) {
        CollCase c;
        c.collective = collective;
        c.type = type;
        c.op = ReduceOp::Sum;
        c.count = count;
        c.root = n - 1;
        c.inPlace = inPlace;
        c.misalign = 4;
        c.seed = static_cast<std::uint64_t>(collective) * 10 + (inPlace ? 1 : 0);
        EXPECT_EQ(runCase(comm, c), "") << what << ": " << c.describe();
      }
    }
  }
}

TEST(CommunicatorStepAside, UnalignedBuffersRunTheRingsFallbacks) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({{"PEERLINK_ALGO", "RING"}}));
  const std::size_t count = (std::size_t{1} << 20) + 12;  // several rounds per block, and a tail
  ASSERT_NE(comm.describeChoice(Collective::Broadcast, count * 4).find("ring_broadcast"), std::string::npos)
      << comm.describeChoice(Collective::Broadcast, count * 4);
  runUnaligned(comm, {Collective::Broadcast, Collective::Reduce, Collective::AllReduce, Collective::ReduceScatter},
               count, "rings");
}

TEST(CommunicatorStepAside, UnalignedBuffersRunThePushReductionsFallbacks) {
  std::vector<int> devices;
  PEERLINK_REQUIRE_COMMUNICATOR(devices);
  Communicator comm(devices, paramsWith({{"PEERLINK_COLL_PUSH", "1"}, {"PEERLINK_PROTO", "SIMPLE"}}));
  const std::size_t count = (std::size_t{1} << 20) + 12;
  ASSERT_NE(comm.describeChoice(Collective::AllReduce, count * 4).find("push_reduce"), std::string::npos)
      << comm.describeChoice(Collective::AllReduce, count * 4);
  runUnaligned(comm, {Collective::AllReduce, Collective::ReduceScatter}, count, "push");
}

}  // namespace
}  // namespace peerlink::testing
