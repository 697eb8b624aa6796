// The collectives' kernel choice as one function (chooseCollective): the kernels' needs as rules (a kernel
// whose need is unmet steps aside for its registry row's fallback and says why), Unknown facts choosing what
// is safe, the registry's rows, the protocol, engine and data flow of a choice, the settings' spellings and the
// communicator's resources. The rules themselves: test_coll_algorithm_select.cc, test_coll_line_format.cc,
// test_coll_sendrecv_select.cc; every rule at once: test_coll_choice_golden.cc.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "coll_lists.hpp"
#include "kernels/coll_kernels.cuh"
#include "peerlink/collective_choice.hpp"
#include "topology_fixture.hpp"

namespace peerlink {
namespace {

using testing::allDevices;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

ChoiceResources resources(bool pushStages = true, int maxBlocks = 132, std::size_t ringChunk = 0) {
  ChoiceResources r;
  r.pushStages = pushStages;
  r.llMaxBytes = kernels::kCollLlMaxBytes;
  r.maxBlocks = maxBlocks;
  r.ringChunkBytes = ringChunk;
  return r;
}

// A call on the 4-GPU NVLink fixture.
CollectiveChoice onH200(Collective collective, std::size_t bytes, Fact aligned = Fact::Yes, Fact inPlace = Fact::No,
                        const ChoiceSettings& settings = {}, const ChoiceResources& r = resources()) {
  const Topology topology = testing::loadTopologyFixture("h200x4_vm");
  return chooseCollective({collective, bytes, 4, inPlace, aligned}, fabricOf(topology, allDevices(topology)), r,
                          settings);
}

bool mentions(const CollectiveChoice& choice, const std::string& text) {
  return reasonText(choice).find(text) != std::string::npos;
}

const std::string kUnaligned = "a buffer or block does not start on a 16-byte boundary";
const std::string kTooManyRounds = "a block would need more than 2^20 rounds";

TEST(CollChoice, ARingWhoseBuffersAreNotAlignedStepsAsideAndSaysWhy) {
  const CollectiveChoice ring = onH200(Collective::Broadcast, 256 * kMiB);
  EXPECT_EQ(ring.kernel, Kernel::RingBroadcast);
  EXPECT_EQ(ring.wanted, Kernel::RingBroadcast);
  ASSERT_EQ(ring.reasons.size(), 2u);
  for (Fact aligned : {Fact::No, Fact::Unknown}) {  // Unknown: assume not aligned
    const CollectiveChoice direct = onH200(Collective::Broadcast, 256 * kMiB, aligned);
    EXPECT_EQ(direct.kernel, Kernel::Copy);
    EXPECT_EQ(direct.algorithm, Algorithm::OneShot);
    EXPECT_EQ(direct.wanted, Kernel::RingBroadcast);
    EXPECT_EQ(direct.flow, DataFlow::ReadsPeers);  // every rank reads the root's buffer
    ASSERT_EQ(direct.reasons.size(), 2u);
    EXPECT_EQ(direct.reasons[0], ring.reasons[0]);  // the algorithm's
    // The ring's own clause is not added: the rule that replaced it says so in its own.
    EXPECT_EQ(direct.reasons[1], "ring_broadcast steps aside (" + kUnaligned + "): copy instead");
  }
}

TEST(CollChoice, EveryPipelinedKernelStepsAsideForItsRegistryFallback) {
  struct Expected {
    Collective collective;
    std::size_t bytes;
    ChoiceSettings settings;
    Kernel wanted;
    Algorithm algorithm;
    Kernel instead;
  };
  const ChoiceSettings engines;
  const ChoiceSettings sm{Algorithm::Auto, Protocol::Auto, PushMode::Auto, CopyEngineMode::Off};
  const ChoiceSettings push{Algorithm::Auto, Protocol::Auto, PushMode::Push, CopyEngineMode::Auto};
  for (const Expected& e : std::vector<Expected>{
           {Collective::AllReduce, 512 * kMiB, engines, Kernel::CeRingAllReduce, Algorithm::TwoShot, Kernel::CeTwoShot},
           {Collective::AllReduce, 512 * kMiB, sm, Kernel::RingAllReduce, Algorithm::TwoShot, Kernel::TwoShot},
           {Collective::Reduce, 512 * kMiB, engines, Kernel::RingReduce, Algorithm::TwoShot, Kernel::TwoShot},
           {Collective::ReduceScatter, 64 * kMiB, engines, Kernel::RingReduceScatter, Algorithm::OneShot,
            Kernel::ShardReduce},
           {Collective::AllReduce, 16 * kMiB, engines, Kernel::PushReduce, Algorithm::TwoShot, Kernel::TwoShot},
           {Collective::ReduceScatter, 8 * kMiB, push, Kernel::PushReduce, Algorithm::OneShot, Kernel::ShardReduce},
       }) {
    const std::string what = std::string(collectiveName(e.collective)) + " " + std::to_string(e.bytes);
    EXPECT_EQ(onH200(e.collective, e.bytes, Fact::Yes, Fact::No, e.settings).kernel, e.wanted) << what;
    const CollectiveChoice unaligned = onH200(e.collective, e.bytes, Fact::No, Fact::No, e.settings);
    EXPECT_EQ(unaligned.kernel, e.instead) << what;
    EXPECT_EQ(unaligned.algorithm, e.algorithm) << what;
    EXPECT_EQ(unaligned.wanted, e.wanted) << what;
    EXPECT_EQ(unaligned.reasons.back(), std::string(kernelName(e.wanted)) + " steps aside (" + kUnaligned +
                                            "): " + kernelName(e.instead) + " instead")
        << what;
  }
  // A reduce-scatter's blocks start at multiples of its size: one that is not a multiple of 16 leaves them unaligned.
  EXPECT_EQ(onH200(Collective::ReduceScatter, 64 * kMiB + 8).kernel, Kernel::ShardReduce);
  EXPECT_EQ(onH200(Collective::ReduceScatter, 8 * kMiB + 8, Fact::Yes, Fact::No, push).kernel, Kernel::ShardReduce);
  EXPECT_EQ(onH200(Collective::AllReduce, 32 * kMiB + 8).kernel, Kernel::PushReduce);  // its shards are aligned
}

TEST(CollChoice, RoundsThatDoNotFitTheFlagsAndMissingStagesAreNeedsToo) {
  // One block of 1 KiB chunks: 2^20 rounds for 1 GiB, more than the flags number.
  const ChoiceResources tiny = resources(true, 1, 1024);
  const CollectiveChoice ring = onH200(Collective::Broadcast, 1024 * kMiB, Fact::Yes, Fact::No, {}, tiny);
  EXPECT_EQ(ring.kernel, Kernel::Copy);
  EXPECT_EQ(ring.reasons.back(), "ring_broadcast steps aside (" + kTooManyRounds + "): copy instead");
  EXPECT_EQ(onH200(Collective::Broadcast, 512 * kMiB, Fact::Yes, Fact::No, {}, tiny).kernel, Kernel::RingBroadcast);
  // Alignment is checked first.
  EXPECT_EQ(onH200(Collective::Broadcast, 1024 * kMiB, Fact::No, Fact::No, {}, tiny).reasons.back(),
            "ring_broadcast steps aside (" + kUnaligned + "): copy instead");
  // The push reduction needs the stages, checked before alignment.
  const CollectiveChoice noStage = onH200(Collective::AllReduce, 16 * kMiB, Fact::No, Fact::No, {}, resources(false));
  EXPECT_EQ(noStage.kernel, Kernel::TwoShot);
  EXPECT_EQ(noStage.reasons.back(), "push_reduce steps aside (the communicator has no push stage): two_shot instead");
  EXPECT_FALSE(mentions(noStage, "pushed in two phases"));
}

TEST(CollChoice, AnInPlaceCallThatSomeRankMayMakeChoosesWhatIsSafeInPlace) {
  const ChoiceSettings simple{Algorithm::Auto, Protocol::Simple, PushMode::Auto, CopyEngineMode::Auto};
  EXPECT_EQ(onH200(Collective::AllReduce, 8, Fact::Yes, Fact::No, simple).kernel, Kernel::OneShotReduce);
  EXPECT_EQ(onH200(Collective::AllReduce, 8, Fact::Yes, Fact::Yes, simple).kernel, Kernel::TwoShot);
  EXPECT_EQ(onH200(Collective::AllReduce, 8, Fact::Yes, Fact::Unknown, simple).kernel, Kernel::TwoShot);
}

TEST(CollChoice, ReasonsAreOnePerRuleThatFired) {
  // The algorithm, then the push that replaced the direct reads (two-shot has no clause of its own).
  const CollectiveChoice pushed = onH200(Collective::AllReduce, 16 * kMiB);
  ASSERT_EQ(pushed.reasons.size(), 2u);
  EXPECT_EQ(pushed.reasons[0].rfind("16 MiB per rank > 256 KiB on an NVLink mesh: two-shot", 0), 0u);
  EXPECT_EQ(pushed.reasons[1].rfind("pushed in two phases", 0), 0u) << pushed.reasons[1];
  // The copy engines replace the split kernels: the split's clause is not there.
  const CollectiveChoice engines = onH200(Collective::AllReduce, 96 * kMiB, Fact::Yes, Fact::No,
                                          {Algorithm::Auto, Protocol::Auto, PushMode::Pull, CopyEngineMode::On});
  EXPECT_EQ(engines.kernel, Kernel::CeTwoShot);
  ASSERT_EQ(engines.reasons.size(), 2u);
  EXPECT_FALSE(mentions(engines, "as two kernels"));
  // LL lines, then the line format that refines them: both stand.
  const CollectiveChoice lines = onH200(Collective::AllReduce, 8);
  EXPECT_EQ(lines.kernel, Kernel::Ll128OneShot);
  ASSERT_EQ(lines.reasons.size(), 3u);
  EXPECT_EQ(lines.reasons[1].rfind("LL protocol", 0), 0u);
  EXPECT_EQ(lines.reasons[2].rfind("in LL128 lines", 0), 0u);
}

TEST(CollChoice, AChoiceSaysItsProtocolEngineAndDataFlow) {
  const ChoiceSettings push{Algorithm::Auto, Protocol::Auto, PushMode::Push, CopyEngineMode::Auto};
  const ChoiceSettings simple{Algorithm::Auto, Protocol::Simple, PushMode::Auto, CopyEngineMode::Auto};
  const CollectiveChoice ll128 = onH200(Collective::AllReduce, 8);
  EXPECT_EQ(ll128.protocol, Protocol::Ll128);
  EXPECT_EQ(ll128.engine, Engine::Sm);
  EXPECT_EQ(ll128.flow, DataFlow::ThroughStages);
  const CollectiveChoice engines = onH200(Collective::AllGather, 512 * kMiB);
  EXPECT_EQ(engines.kernel, Kernel::CeCopy);
  EXPECT_EQ(engines.protocol, Protocol::Simple);
  EXPECT_EQ(engines.engine, Engine::CopyEngine);
  EXPECT_EQ(engines.flow, DataFlow::StoresIntoPeers);
  EXPECT_EQ(onH200(Collective::Broadcast, 8, Fact::Yes, Fact::No, simple).flow, DataFlow::ReadsPeers);
  EXPECT_EQ(onH200(Collective::Broadcast, 8 * kMiB).flow, DataFlow::StoresIntoPeers);  // two-shot pushes
  EXPECT_EQ(onH200(Collective::ReduceScatter, 16 * kMiB).flow, DataFlow::ReadsPeers);
  EXPECT_EQ(onH200(Collective::ReduceScatter, 16 * kMiB, Fact::Yes, Fact::No, push).flow, DataFlow::ThroughStages);
  EXPECT_EQ(onH200(Collective::AllReduce, 16 * kMiB).flow, DataFlow::StoresIntoPeers);
  EXPECT_EQ(onH200(Collective::AllReduce, 2 * kMiB).flow, DataFlow::ReadsAndStores);
  EXPECT_EQ(onH200(Collective::Reduce, 512 * kMiB).flow, DataFlow::ThroughStages);
  EXPECT_FALSE(storesIntoPeers(onH200(Collective::AllReduce, 8, Fact::Yes, Fact::No, simple)));
  EXPECT_TRUE(storesIntoPeers(onH200(Collective::AllReduce, 8)));
}

// Whatever the settings, size and facts, the kernel chosen serves the collective and is described.
TEST(CollChoice, EveryChosenKernelServesItsCollective) {
  for (const char* fixture : {"h200x4_vm", "dual_socket_pcie", "rtx4090x2"}) {
    const Topology topology = testing::loadTopologyFixture(fixture);
    const CollectiveFabric fabric = fabricOf(topology, allDevices(topology));
    const int n = static_cast<int>(topology.gpus.size());
    for (Collective collective : kEveryCollective) {
      for (Algorithm forced : {Algorithm::Auto, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring}) {
        for (Protocol protocol : {Protocol::Auto, Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
          for (std::size_t bytes = 8; bytes <= 1024 * kMiB; bytes *= 8) {
            for (Fact aligned : {Fact::Yes, Fact::No}) {
              const ChoiceSettings settings{forced, protocol, PushMode::Push, CopyEngineMode::On};
              const CollectiveChoice choice =
                  chooseCollective({collective, bytes, n, Fact::Unknown, aligned}, fabric, resources(), settings);
              const KernelInfo& info = kernelInfo(choice.kernel);
              EXPECT_NE(info.collectives & collectiveBit(collective), 0u)
                  << fixture << " " << collectiveName(collective) << " " << bytes << ": " << info.name;
              EXPECT_NE(choice.protocol, Protocol::Auto);
              EXPECT_FALSE(choice.reasons.empty());
              EXPECT_EQ(choice.protocol, info.protocol);
              EXPECT_EQ(choice.engine, info.engine);
            }
          }
        }
      }
    }
  }
}

TEST(CollChoice, TheRegistryHasARowPerKernelAndFallbacksThatNeedNothing) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kernelRegistry().size(); ++i) {
    const KernelInfo& row = kernelRegistry()[i];
    EXPECT_EQ(static_cast<std::size_t>(row.kernel), i) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "two kernels named " << row.name;
    EXPECT_NE(row.collectives, 0u) << row.name;
    EXPECT_NE(std::string(row.summary), "") << row.name;
    EXPECT_STREQ(kernelName(row.kernel), row.name);
    const bool hasNeeds = row.needs != kNeedsNothing || row.roundsFit != nullptr;
    for (Collective collective : kEveryCollective) {
      if ((row.collectives & collectiveBit(collective)) == 0) continue;
      const KernelFallback* fallback = nullptr;
      for (const KernelFallback& candidate : row.fallbacks) {
        if ((candidate.collectives & collectiveBit(collective)) != 0) {
          fallback = &candidate;
          break;
        }
      }
      EXPECT_EQ(fallback != nullptr, hasNeeds) << row.name << " " << collectiveName(collective);
      if (fallback == nullptr) continue;
      const KernelInfo& instead = kernelInfo(fallback->kernel);
      EXPECT_NE(instead.collectives & collectiveBit(collective), 0u) << row.name << " -> " << instead.name;
      EXPECT_EQ(instead.needs, kNeedsNothing) << instead.name;
      EXPECT_EQ(instead.roundsFit, nullptr) << instead.name;
    }
  }
}

// --explain prints the settings as the registry accepts them (PEERLINK_ALGO=TWOSHOT, not two_shot).
TEST(CollChoice, SettingsAreSpelledAsTheRegistryAcceptsThem) {
  for (Algorithm algorithm : {Algorithm::Auto, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring}) {
    EXPECT_EQ(canonicalParamValue(paramSpec("PEERLINK_ALGO"), algorithmSetting(algorithm)),
              algorithmSetting(algorithm));
    EXPECT_EQ(parseAlgorithm(algorithmSetting(algorithm)), algorithm);
  }
  for (Protocol protocol : {Protocol::Auto, Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
    EXPECT_EQ(canonicalParamValue(paramSpec("PEERLINK_PROTO"), protocolName(protocol)), protocolName(protocol));
  }
  for (PushMode push : {PushMode::Auto, PushMode::Push, PushMode::Pull}) {
    EXPECT_EQ(canonicalParamValue(paramSpec("PEERLINK_COLL_PUSH"), pushModeName(push)), pushModeName(push));
  }
  for (CopyEngineMode mode : {CopyEngineMode::Auto, CopyEngineMode::On, CopyEngineMode::Off}) {
    EXPECT_EQ(canonicalParamValue(paramSpec("PEERLINK_COLL_CE"), copyEngineModeName(mode)), copyEngineModeName(mode));
  }
  const ChoiceSettings settings = choiceSettingsFrom(Params::fromMap({{"PEERLINK_ALGO", "twoshot"},
                                                                      {"PEERLINK_PROTO", "ll128"},
                                                                      {"PEERLINK_COLL_PUSH", "0"},
                                                                      {"PEERLINK_COLL_CE", "1"}}));
  EXPECT_EQ(settings.forced, Algorithm::TwoShot);
  EXPECT_EQ(settings.protocol, Protocol::Ll128);
  EXPECT_EQ(settings.push, PushMode::Pull);
  EXPECT_EQ(settings.copyEngine, CopyEngineMode::On);
}

TEST(CollChoice, TheCommunicatorsResourcesFromTheTopologyAndSettings) {
  const Topology h200 = testing::loadTopologyFixture("h200x4_vm");
  const ChoiceResources fourRanks = communicatorResources(h200, allDevices(h200), Params());
  EXPECT_TRUE(fourRanks.pushStages);  // AUTO may push on 3+ ranks of an NVLink mesh
  EXPECT_EQ(fourRanks.llMaxBytes, kernels::kCollLlMaxBytes);
  EXPECT_EQ(fourRanks.maxBlocks, 132);
  EXPECT_FALSE(communicatorResources(h200, {0, 1}, Params()).pushStages);
  const Params tuned = Params::fromMap({{"PEERLINK_COLL_PUSH", "0"},
                                        {"PEERLINK_COLL_MAX_BLOCKS", "64"},
                                        {"PEERLINK_COLL_RING_CHUNK", "4096"},
                                        {"PEERLINK_COLL_RING_REDUCE_BLOCKS", "16"}});
  const ChoiceResources fewer = communicatorResources(h200, allDevices(h200), tuned);
  EXPECT_FALSE(fewer.pushStages);
  EXPECT_EQ(fewer.maxBlocks, 64);
  EXPECT_EQ(fewer.ringChunkBytes, 4096u);
  EXPECT_EQ(fewer.ringReduceBlocks, 16);
  EXPECT_TRUE(communicatorResources(h200, {0, 1}, Params::fromMap({{"PEERLINK_COLL_PUSH", "1"}})).pushStages);
  const Topology pcie = testing::loadTopologyFixture("dual_socket_pcie");
  EXPECT_FALSE(communicatorResources(pcie, allDevices(pcie), Params()).pushStages);
  // Ranks sharing a GPU split its SMs; the setting caps the grid further.
  EXPECT_EQ(collGridCap({0, 1, 2, 3}, {132, 132, 132, 132}, 0), 132);
  EXPECT_EQ(collGridCap({0, 0, 1}, {132, 132, 100}, 0), 66);
  EXPECT_EQ(collGridCap({0, 1}, {132, 114}, 32), 32);
  EXPECT_EQ(collGridCap({0, 1}, {1000, 1000}, 0), kernels::kCollMaxBlocks);
}

}  // namespace
}  // namespace peerlink
