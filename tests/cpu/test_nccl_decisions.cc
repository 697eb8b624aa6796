// The NCCL API's pure decisions: ncclConfig_t read by size, magic and version; NCCL's result codes for peerlink's
// errors; the type and op tables; the plan of each reduction (the shim's passes around peerlink's call); which
// library serves a communicator; the settings under the NCCL API.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nccl_api/call_plan.hpp"
#include "nccl_api/config.hpp"
#include "nccl_api/result.hpp"
#include "nccl_api/settings.hpp"
#include "nccl_api/types.hpp"
#include "nccl_api/world.hpp"

namespace peerlink::nccl {
namespace {

using Where = Place::Where;
using Kind = TransformStep::Kind;

// ---- ncclConfig_t ---------------------------------------------------------------------------------------

CommConfig readOk(const void* config) {
  auto read = readCommConfig(static_cast<const ncclConfig_t*>(config));
  EXPECT_TRUE(std::holds_alternative<CommConfig>(read)) << std::get<Failure>(read).message;
  return std::holds_alternative<CommConfig>(read) ? std::get<CommConfig>(read) : CommConfig{};
}

Failure readFails(const void* config) {
  auto read = readCommConfig(static_cast<const ncclConfig_t*>(config));
  EXPECT_TRUE(std::holds_alternative<Failure>(read));
  return std::holds_alternative<Failure>(read) ? std::get<Failure>(read) : Failure{};
}

TEST(NcclConfig, NoConfigIsTheDefaults) {
  const CommConfig config = readOk(nullptr);
  EXPECT_TRUE(config.blocking);
  EXPECT_EQ(config.size, 0u);
  EXPECT_TRUE(config.name.empty());
}

TEST(NcclConfig, ReadsWhatPyTorchSends) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.commName = "default_pg";
  config.maxCTAs = 16;
  const CommConfig read = readOk(&config);
  EXPECT_EQ(read.size, 80u);
  EXPECT_EQ(read.version, 22809u);
  EXPECT_TRUE(read.blocking);
  EXPECT_EQ(read.name, "default_pg");
  EXPECT_FALSE(read.newerFields);
  ASSERT_EQ(read.ignored.size(), 1u);
  EXPECT_EQ(read.ignored[0], "maxCTAs=16");
  EXPECT_NE(describeConfig(read).find("NCCL 2.28.9's 80-byte config; ignored: maxCTAs=16"), std::string::npos)
      << describeConfig(read);
}

TEST(NcclConfig, NonBlockingIsReadAndServedBlocking) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  EXPECT_FALSE(readOk(&config).blocking);
  EXPECT_NE(describeConfig(readOk(&config)).find("non-blocking (served blocking)"), std::string::npos);
}

TEST(NcclConfig, AnOlderCallerSendsFewerFieldsAndTheRestKeepDefaults) {
  // NCCL 2.14's config ended after netName (40 bytes); a later field beyond the caller's size must not be read.
  std::vector<unsigned char> bytes(sizeof(ncclConfig_t), 0xab);  // poison past the caller's struct
  ncclConfig_t old = NCCL_CONFIG_INITIALIZER;
  old.size = 40;
  old.version = 21400;
  old.blocking = 0;
  std::memcpy(bytes.data(), &old, 40);
  const CommConfig read = readOk(bytes.data());
  EXPECT_FALSE(read.blocking);
  EXPECT_TRUE(read.name.empty());     // commName lies past 40 bytes: the poison is not read as a pointer
  EXPECT_TRUE(read.ignored.empty());  // neither are the hints past it
  EXPECT_EQ(read.size, 40u);
}

TEST(NcclConfig, ANewerCallerSendsMoreFieldsWhichAreIgnored) {
  // NCCL 2.30's config is 96 bytes: the first 80 are 2.28's.
  std::vector<unsigned char> bytes(96, 0);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.size = 96;
  config.version = 23000;
  std::memcpy(bytes.data(), &config, sizeof config);
  std::memset(bytes.data() + sizeof config, 0x7f, 96 - sizeof config);
  const CommConfig read = readOk(bytes.data());
  EXPECT_TRUE(read.newerFields);
  EXPECT_EQ(read.size, 96u);
  EXPECT_NE(describeConfig(read).find("fields past 80 bytes ignored"), std::string::npos);
}

TEST(NcclConfig, AWrongMagicIsAnInvalidArgumentNamingTheInitializer) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  const Failure failure = readFails(&config);
  EXPECT_EQ(failure.result, ncclInvalidArgument);
  EXPECT_NE(failure.message.find("magic 0x00000000"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("NCCL_CONFIG_INITIALIZER"), std::string::npos);
}

TEST(NcclConfig, AnUnknownSizeIsAnInvalidArgument) {
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{16}, std::size_t{39}, std::size_t{4097}, std::size_t{1} << 40}) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.size = size;
    const Failure failure = readFails(&config);
    EXPECT_EQ(failure.result, ncclInvalidArgument) << size;
    EXPECT_NE(failure.message.find("says it is " + std::to_string(size) + " bytes"), std::string::npos)
        << failure.message;
  }
}

TEST(NcclConfig, AVersionBeforeConfigsExistedIsAnInvalidArgument) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.version = 21300;
  EXPECT_NE(readFails(&config).message.find("NCCL version 21300"), std::string::npos);
}

TEST(NcclConfig, FieldsOutOfRangeAreInvalidArguments) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 2;
  EXPECT_NE(readFails(&config).message.find("blocking is 2"), std::string::npos);
  config = NCCL_CONFIG_INITIALIZER;
  config.splitShare = -3;
  EXPECT_NE(readFails(&config).message.find("splitShare is -3"), std::string::npos);
}

TEST(NcclConfig, VersionTextReadsBothEncodings) {
  EXPECT_EQ(versionText(22809), "2.28.9");
  EXPECT_EQ(versionText(23001), "2.30.1");
  EXPECT_EQ(versionText(2804), "2.8.4");
}

// ---- results ---------------------------------------------------------------------------------------------

TEST(NcclResult, EveryErrorCodeHasNcclsCode) {
  EXPECT_EQ(resultOf(ErrorCode::InvalidUsage), ncclInvalidUsage);
  EXPECT_EQ(resultOf(ErrorCode::Unsupported), ncclInvalidUsage);
  EXPECT_EQ(resultOf(ErrorCode::InvalidInput), ncclInvalidArgument);
  EXPECT_EQ(resultOf(ErrorCode::NoDevice), ncclUnhandledCudaError);
  EXPECT_EQ(resultOf(ErrorCode::CudaError), ncclUnhandledCudaError);
  EXPECT_EQ(resultOf(ErrorCode::NvmlError), ncclSystemError);
  EXPECT_EQ(resultOf(ErrorCode::SystemError), ncclSystemError);
  EXPECT_EQ(resultOf(ErrorCode::RemoteError), ncclRemoteError);
  EXPECT_EQ(resultOf(ErrorCode::Timeout), ncclInternalError);
  EXPECT_EQ(resultOf(ErrorCode::DataMismatch), ncclInternalError);
  EXPECT_EQ(resultOf(ErrorCode::Internal), ncclInternalError);
}

TEST(NcclResult, EveryResultHasAStringAndAName) {
  for (int r = ncclSuccess; r < ncclNumResults; ++r) {
    const auto result = static_cast<ncclResult_t>(r);
    EXPECT_STRNE(resultString(result), "unknown result code") << r;
    EXPECT_EQ(resultName(result).rfind("nccl", 0), 0u) << r;
  }
  EXPECT_STREQ(resultString(static_cast<ncclResult_t>(15)), "unknown result code");
  EXPECT_EQ(resultName(static_cast<ncclResult_t>(15)), "ncclResult 15");
}

TEST(NcclResult, AFailureKeepsTheCodeAndNamesTheCall) {
  const Failure fromApi = failureOf(ApiError(ncclInvalidArgument, "sendbuff is NULL"), "ncclAllReduce");
  EXPECT_EQ(fromApi.result, ncclInvalidArgument);
  EXPECT_EQ(fromApi.message, "ncclAllReduce: sendbuff is NULL");
  const Failure fromError = failureOf(Error(ErrorCode::RemoteError, "rank 3 exited"), "ncclAllReduce");
  EXPECT_EQ(fromError.result, ncclRemoteError);
  EXPECT_EQ(fromError.message, "ncclAllReduce: rank 3 exited");
  EXPECT_EQ(failureOf(std::runtime_error("x"), "ncclSend").result, ncclInternalError);
}

// ---- types and ops ----------------------------------------------------------------------------------------

TEST(NcclTypes, EveryTypeIsCarriedWithItsSize) {
  const std::size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int t = 0; t < ncclNumTypes; ++t) {
    const auto info = typeInfo(static_cast<ncclDataType_t>(t));
    ASSERT_TRUE(info) << t;
    EXPECT_EQ(info->bytes, sizes[t]) << info->name;
    EXPECT_EQ(dataTypeSize(info->carrier), info->bytes) << info->name;
    EXPECT_EQ(info->fp8, t >= ncclFloat8e4m3) << info->name;
    EXPECT_EQ(info->reducible.has_value(), !info->fp8) << info->name;
  }
  EXPECT_EQ(typeInfo(ncclBfloat16)->reducible, DataType::BF16);
  EXPECT_EQ(typeInfo(ncclFloat8e5m2)->carrier, DataType::U8);
  EXPECT_FALSE(typeInfo(ncclNumTypes));
  EXPECT_FALSE(typeInfo(static_cast<ncclDataType_t>(15)));
}

TEST(NcclTypes, BuiltInOpsMapByNameNotNumber) {
  EXPECT_EQ(builtinOp(ncclSum), ReduceOp::Sum);
  EXPECT_EQ(builtinOp(ncclProd), ReduceOp::Prod);
  EXPECT_EQ(builtinOp(ncclMax), ReduceOp::Max);  // NCCL numbers Max (2) before Min (3)
  EXPECT_EQ(builtinOp(ncclMin), ReduceOp::Min);
  EXPECT_EQ(builtinOp(ncclAvg), ReduceOp::Avg);
  EXPECT_FALSE(builtinOp(ncclNumOps));
  EXPECT_STREQ(builtinOpName(ncclMax), "ncclMax");
}

// ---- reduction plans --------------------------------------------------------------------------------------

CallPlan planOk(Collective collective, ncclDataType_t type, std::optional<ReduceOp> op, std::size_t count, int rank = 0,
                int nranks = 4, int root = 0) {
  ReductionRequest request;
  request.collective = collective;
  request.type = type;
  request.op = op;
  request.count = count;
  request.rank = rank;
  request.nranks = nranks;
  request.root = root;
  auto plan = planReduction(request);
  EXPECT_TRUE(std::holds_alternative<CallPlan>(plan));
  return std::holds_alternative<CallPlan>(plan) ? std::get<CallPlan>(plan) : CallPlan{};
}

TEST(NcclPlan, ATypeAndOpPeerlinkReducesGoStraightThrough) {
  for (const Collective collective : {Collective::AllReduce, Collective::Reduce, Collective::ReduceScatter}) {
    const CallPlan plan = planOk(collective, ncclBfloat16, ReduceOp::Max, 100);
    EXPECT_TRUE(plan.before.empty());
    EXPECT_TRUE(plan.after.empty());
    EXPECT_EQ(plan.scratchBytes, 0u);
    EXPECT_EQ(plan.call.send, (Place{Where::Send, 0}));
    EXPECT_EQ(plan.call.recv, (Place{Where::Recv, 0}));
    EXPECT_EQ(plan.call.type, DataType::BF16);
    EXPECT_EQ(plan.call.op, ReduceOp::Max);
    EXPECT_EQ(plan.call.count, 100u);
  }
}

TEST(NcclPlan, IntegerAverageIsTheSumDividedWhereTheResultLands) {
  const CallPlan all = planOk(Collective::AllReduce, ncclInt32, ReduceOp::Avg, 10);
  EXPECT_EQ(all.call.op, ReduceOp::Sum);
  ASSERT_EQ(all.after.size(), 1u);
  EXPECT_EQ(all.after[0].kind, Kind::Divide);
  EXPECT_EQ(all.after[0].in, (Place{Where::Recv, 0}));
  EXPECT_EQ(all.after[0].count, 10u);
  // Reduce: only the root holds a result to divide.
  EXPECT_EQ(planOk(Collective::Reduce, ncclUint64, ReduceOp::Avg, 10, 2, 4, 2).after.size(), 1u);
  EXPECT_TRUE(planOk(Collective::Reduce, ncclUint64, ReduceOp::Avg, 10, 1, 4, 2).after.empty());
  // Floating point averages stay peerlink's.
  EXPECT_EQ(planOk(Collective::AllReduce, ncclFloat16, ReduceOp::Avg, 10).call.op, ReduceOp::Avg);
}

TEST(NcclPlan, PreMultipliedSumsScaleIntoRecvOrScratchThenSum) {
  const CallPlan all = planOk(Collective::AllReduce, ncclFloat32, std::nullopt, 8);
  ASSERT_EQ(all.before.size(), 1u);
  EXPECT_EQ(all.before[0].kind, Kind::Scale);
  EXPECT_EQ(all.before[0].out, (Place{Where::Recv, 0}));
  EXPECT_EQ(all.call.send, (Place{Where::Recv, 0}));
  EXPECT_EQ(all.call.recv, (Place{Where::Recv, 0}));
  EXPECT_EQ(all.call.op, ReduceOp::Sum);
  EXPECT_EQ(all.scratchBytes, 0u);
  // The reduce's root in place in its recv; another rank in scratch, its recv unused.
  EXPECT_EQ(planOk(Collective::Reduce, ncclFloat64, std::nullopt, 8, 0, 4, 0).scratchBytes, 0u);
  const CallPlan other = planOk(Collective::Reduce, ncclFloat64, std::nullopt, 8, 1, 4, 0);
  EXPECT_EQ(other.scratchBytes, 64u);
  EXPECT_EQ(other.call.send, (Place{Where::Scratch, 0}));
  EXPECT_EQ(other.call.recv.where, Where::None);
  // Reduce-scatter scales the whole input (nranks * count) into scratch.
  const CallPlan scatter = planOk(Collective::ReduceScatter, ncclInt64, std::nullopt, 8, 1, 4);
  EXPECT_EQ(scatter.scratchBytes, 4u * 8u * 8u);
  EXPECT_EQ(scatter.before[0].count, 32u);
  EXPECT_EQ(scatter.call.send, (Place{Where::Scratch, 0}));
  EXPECT_EQ(scatter.call.recv, (Place{Where::Recv, 0}));
}

TEST(NcclPlan, Fp8WidensToHalfReducesThereAndNarrowsTheResult) {
  for (const ncclDataType_t type : {ncclFloat8e4m3, ncclFloat8e5m2}) {
    const CallPlan all = planOk(Collective::AllReduce, type, ReduceOp::Prod, 100);
    EXPECT_EQ(all.scratchBytes, 200u);
    ASSERT_EQ(all.before.size(), 1u);
    EXPECT_EQ(all.before[0].kind, Kind::Widen);
    EXPECT_FALSE(all.before[0].scaled);
    EXPECT_EQ(all.call.type, DataType::F16);
    EXPECT_EQ(all.call.op, ReduceOp::Prod);
    EXPECT_EQ(all.call.send, all.call.recv);  // in place in scratch
    ASSERT_EQ(all.after.size(), 1u);
    EXPECT_EQ(all.after[0].kind, Kind::Narrow);
    EXPECT_EQ(all.after[0].out, (Place{Where::Recv, 0}));
  }
  // Reduce-scatter: this rank's shard of the widened input is its result.
  const CallPlan scatter = planOk(Collective::ReduceScatter, ncclFloat8e4m3, ReduceOp::Sum, 10, 3, 4);
  EXPECT_EQ(scatter.scratchBytes, 4u * 10u * 2u);
  EXPECT_EQ(scatter.call.recv, (Place{Where::Scratch, 3u * 10u * 2u}));
  EXPECT_EQ(scatter.after[0].in, scatter.call.recv);
  EXPECT_EQ(scatter.after[0].count, 10u);
  // A pre-multiplied FP8 sum scales while widening.
  const CallPlan premul = planOk(Collective::AllReduce, ncclFloat8e5m2, std::nullopt, 4);
  EXPECT_TRUE(premul.before[0].scaled);
  EXPECT_EQ(premul.call.op, ReduceOp::Sum);
  // Off the reduce's root nothing is narrowed.
  EXPECT_TRUE(planOk(Collective::Reduce, ncclFloat8e4m3, ReduceOp::Max, 4, 1, 4, 0).after.empty());
}

TEST(NcclPlan, AnUnknownTypeAndAnUnaddressableCountFail) {
  ReductionRequest request;
  request.type = static_cast<ncclDataType_t>(12);
  request.op = ReduceOp::Sum;
  auto plan = planReduction(request);
  ASSERT_TRUE(std::holds_alternative<Failure>(plan));
  EXPECT_EQ(std::get<Failure>(plan).result, ncclInvalidArgument);
  request.type = ncclFloat32;
  request.count = std::size_t{1} << 62;
  EXPECT_TRUE(std::holds_alternative<Failure>(planReduction(request)));
}

TEST(NcclPlan, AnAllToAllInPlaceCopiesItsInputAside) {
  const CallPlan plan = planInPlaceAllToAll(6, 4, DataType::U32, 4);
  EXPECT_EQ(plan.scratchBytes, 96u);
  ASSERT_EQ(plan.before.size(), 1u);
  EXPECT_EQ(plan.before[0].kind, Kind::Copy);
  EXPECT_EQ(plan.before[0].count, 96u);
  EXPECT_EQ(plan.call.send, (Place{Where::Scratch, 0}));
  EXPECT_EQ(plan.call.recv, (Place{Where::Recv, 0}));
  EXPECT_EQ(plan.call.count, 6u);
  EXPECT_EQ(describePlan(Collective::AllToAll, plan), "copy aside, all_to_all in u32");
  EXPECT_EQ(describePlan(Collective::AllReduce, planOk(Collective::AllReduce, ncclFloat8e4m3, ReduceOp::Sum, 4)),
            "widen to f16, all_reduce sum in f16, narrow to fp8");
}

TEST(NcclScratch, GrowsAtLeastDoubleInWholeMegabytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  EXPECT_EQ(grownScratchCapacity(0, 1), kMiB);
  EXPECT_EQ(grownScratchCapacity(kMiB, kMiB), 0u);
  EXPECT_EQ(grownScratchCapacity(kMiB, kMiB + 1), 2 * kMiB);
  EXPECT_EQ(grownScratchCapacity(2 * kMiB, 7 * kMiB + 3), 8 * kMiB);
}

// ---- who serves a communicator ----------------------------------------------------------------------------

LaunchEnvironment launch(int size, std::optional<int> localSize) {
  LaunchEnvironment environment;
  environment.launcher = Launcher::Torchrun;
  environment.size = size;
  environment.localSize = localSize;
  environment.source = "WORLD_SIZE";
  return environment;
}

bool servedByNccl(const std::variant<Server, Failure>& choice) {
  EXPECT_TRUE(std::holds_alternative<Server>(choice));
  return std::holds_alternative<Server>(choice) && std::get<Server>(choice).nccl;
}

IdKind idKind(const std::variant<IdChoice, Failure>& choice) {
  EXPECT_TRUE(std::holds_alternative<IdChoice>(choice));
  return std::holds_alternative<IdChoice>(choice) ? std::get<IdChoice>(choice).kind : IdKind::Peerlink;
}

LaunchEnvironment noLauncher() {
  return {};
}

TEST(NcclServer, OneMachineIsPeerlinksUnlessAllIsForwarded) {
  EXPECT_EQ(idKind(chooseIdServer(Fallback::Auto, launch(8, 8), true, "")), IdKind::Peerlink);
  EXPECT_EQ(idKind(chooseIdServer(Fallback::Auto, launch(1, std::nullopt), true, "")), IdKind::Peerlink);
  EXPECT_EQ(idKind(chooseIdServer(Fallback::None, launch(8, 8), true, "")), IdKind::Peerlink);
  EXPECT_EQ(idKind(chooseIdServer(Fallback::All, launch(8, 8), true, "")), IdKind::Nccl);
}

TEST(NcclServer, AJobAcrossMachinesIsTheRealNcclsUnderAutoWhenLoaded) {
  const auto choice = chooseIdServer(Fallback::Auto, launch(16, 8), true, "");
  EXPECT_EQ(idKind(choice), IdKind::Nccl);
  EXPECT_NE(std::get<IdChoice>(choice).reason.find("16 ranks, 8 on this machine"), std::string::npos);
  EXPECT_EQ(idKind(chooseIdServer(Fallback::Auto, launch(16, 8), false, "not found")), IdKind::Peerlink);
  const auto refused = chooseIdServer(Fallback::None, launch(16, 8), true, "");
  EXPECT_NE(std::get<IdChoice>(refused).reason.find("PEERLINK_NCCL_FALLBACK=NONE"), std::string::npos);
}

TEST(NcclServer, AJobWhoseLauncherDoesNotSayIsDecidedAtTheRendezvous) {
  // No launcher at all (Ray, a user's own script), or one that gives no local size.
  const auto bare = chooseIdServer(Fallback::Auto, noLauncher(), true, "");
  EXPECT_EQ(idKind(bare), IdKind::Rendezvous);
  EXPECT_NE(std::get<IdChoice>(bare).reason.find("no launcher says"), std::string::npos);
  const auto partial = chooseIdServer(Fallback::Auto, launch(16, std::nullopt), true, "");
  EXPECT_EQ(idKind(partial), IdKind::Rendezvous);
  EXPECT_NE(std::get<IdChoice>(partial).reason.find("16 ranks but not how many"), std::string::npos);
  // NONE never loads nor forwards; without the library there is nothing to carry.
  const auto none = chooseIdServer(Fallback::None, noLauncher(), false, "PEERLINK_NCCL_FALLBACK=NONE");
  EXPECT_EQ(idKind(none), IdKind::Peerlink);
  EXPECT_NE(std::get<IdChoice>(none).reason.find("not allowed (PEERLINK_NCCL_FALLBACK=NONE)"), std::string::npos);
  const auto missing = chooseIdServer(Fallback::Auto, noLauncher(), false, "no libnccl.so.2 found");
  EXPECT_EQ(idKind(missing), IdKind::Peerlink);
  EXPECT_NE(std::get<IdChoice>(missing).reason.find("not loaded (no libnccl.so.2 found)"), std::string::npos);
  EXPECT_EQ(idKind(chooseIdServer(Fallback::All, noLauncher(), true, "")), IdKind::Nccl);
}

TEST(NcclServer, AllWithoutTheRealLibraryIsAFailureSayingWhatToSet) {
  const auto choice = chooseIdServer(Fallback::All, launch(4, 4), false, "no libnccl.so.2 found");
  ASSERT_TRUE(std::holds_alternative<Failure>(choice));
  EXPECT_NE(std::get<Failure>(choice).message.find("PEERLINK_NCCL_LIBRARY"), std::string::npos);
  EXPECT_NE(std::get<Failure>(choice).message.find("no libnccl.so.2 found"), std::string::npos);
}

TEST(NcclServer, TheIdDecidesForEveryRank) {
  EXPECT_FALSE(servedByNccl(chooseRankServer(Fallback::All, true, true, "")));  // made by a peerlink process
  EXPECT_TRUE(servedByNccl(chooseRankServer(Fallback::Auto, false, true, "")));
  const auto none = chooseRankServer(Fallback::None, false, true, "");
  ASSERT_TRUE(std::holds_alternative<Failure>(none));
  EXPECT_EQ(std::get<Failure>(none).result, ncclInvalidArgument);
  EXPECT_NE(std::get<Failure>(none).message.find("PEERLINK_NCCL_FALLBACK=NONE"), std::string::npos);
  const auto missing = chooseRankServer(Fallback::Auto, false, false, "PEERLINK_NCCL_LIBRARY=/x: not found");
  EXPECT_NE(std::get<Failure>(missing).message.find("/x: not found"), std::string::npos);
}

// What a process's hello tells a rendezvous root that may forward: only AUTO or ALL with the real library loaded
// can follow it to the real NCCL.
TEST(NcclServer, OnlyAProcessWithARealNcclItMayUseCanFollowAForward) {
  EXPECT_EQ(forwardAbility(Fallback::Auto, true), ForwardAbility::Able);
  EXPECT_EQ(forwardAbility(Fallback::All, true), ForwardAbility::Able);
  EXPECT_EQ(forwardAbility(Fallback::Auto, false), ForwardAbility::NoRealNccl);
  EXPECT_EQ(forwardAbility(Fallback::All, false), ForwardAbility::NoRealNccl);
  EXPECT_EQ(forwardAbility(Fallback::None, true), ForwardAbility::FallbackNone);
  EXPECT_EQ(forwardAbility(Fallback::None, false), ForwardAbility::FallbackNone);
}

TEST(NcclServer, ScalableIdsAreAllPeerlinksOrAllTheRealNcclsNeverMixed) {
  EXPECT_FALSE(checkScalableIds({true}));
  EXPECT_FALSE(checkScalableIds({false}));
  EXPECT_FALSE(checkScalableIds({true, true, true}));
  EXPECT_FALSE(checkScalableIds({false, false}));
  const std::optional<Failure> mixed = checkScalableIds({false, false, true, false});
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->result, ncclInvalidArgument);
  EXPECT_EQ(
      mixed->message,
      "unique id 0 is not peerlink's (the real NCCL's), unique id 2 is peerlink's: the ids were made by processes "
      "of different settings; make every id in processes with the same PEERLINK_NCCL_FALLBACK and launcher");
  EXPECT_NE(checkScalableIds({true, false})->message.find("unique id 0 is peerlink's, unique id 1 is not peerlink's"),
            std::string::npos);
}

// ---- settings -----------------------------------------------------------------------------------------------

TEST(NcclSettings, DeadlinesUnsetByTheUserBecomeLongUnderTheNcclApi) {
  const ApiSettings defaults = apiSettingsFrom(Params::fromMap({}));
  EXPECT_EQ(defaults.params.getInt("PEERLINK_TIMEOUT_MS"), 3600000);
  EXPECT_EQ(defaults.params.getInt("PEERLINK_BOOTSTRAP_TIMEOUT_MS"), 3600000);
  EXPECT_EQ(defaults.fallback, Fallback::Auto);
  EXPECT_EQ(defaults.versionCode, 22809);
  const ApiSettings set = apiSettingsFrom(Params::fromMap({{"PEERLINK_TIMEOUT_MS", "5000"},
                                                           {"PEERLINK_NCCL_FALLBACK", "none"},
                                                           {"PEERLINK_NCCL_VERSION", "22703"},
                                                           {"PEERLINK_NCCL_LIBRARY", "/opt/nccl/libnccl.so.2"}}));
  EXPECT_EQ(set.params.getInt("PEERLINK_TIMEOUT_MS"), 5000);
  EXPECT_EQ(set.params.getInt("PEERLINK_BOOTSTRAP_TIMEOUT_MS"), 3600000);
  EXPECT_EQ(set.fallback, Fallback::None);
  EXPECT_EQ(set.versionCode, 22703);
  EXPECT_EQ(set.library, "/opt/nccl/libnccl.so.2");
  EXPECT_THROW(Params::fromMap({{"PEERLINK_NCCL_VERSION", "2.28.9"}}), Error);
  EXPECT_THROW(Params::fromMap({{"PEERLINK_NCCL_FALLBACK", "sometimes"}}), Error);
}

}  // namespace
}  // namespace peerlink::nccl
