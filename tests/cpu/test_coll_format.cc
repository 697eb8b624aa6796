// `peerlink coll`'s pure parts: nccl-tests' sizes, counts and bus factors (checked against rows of the
// nccl-tests 2.28.9 run on the 4xH200), the table layout, the JSON round trip, and the host reference the
// checked runs are compared with.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "coll_bench/coll_bench.hpp"
#include "coll_bench/coll_bench_data.hpp"
#include "coll_bench/coll_nodes.hpp"
#include "coll_format.hpp"
#include "coll_json_read.hpp"
#include "coll_lists.hpp"
#include "peerlink/error.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using coll::CollRow;
using coll::CollRun;
using coll::collSizing;
using coll::Placement;

// Rows of nccl-tests 2.19.6 with NCCL 2.28.9, -g 4, float (shared/reference/nccl-tests-2.28.9-4xH200-g4.txt).
struct ReferenceRow {
  Collective collective;
  std::size_t requested, bytes, count;
  double timeUs, algbw, busbw;
};
const ReferenceRow kReference[] = {
    {Collective::AllReduce, 8, 8, 2, 24.46, 0.00, 0.00},
    {Collective::AllReduce, 536870912, 536870912, 134217728, 2321.78, 231.23, 346.85},
    {Collective::AllGather, 8, 0, 0, 0.88, 0.00, 0.00},
    {Collective::AllGather, 128, 128, 8, 26.80, 0.00, 0.00},
    {Collective::AllGather, 536870912, 536870912, 33554432, 1274.11, 421.37, 316.03},
    {Collective::ReduceScatter, 536870912, 536870912, 33554432, 1283.41, 418.32, 313.74},
    {Collective::AllToAll, 128, 128, 8, 40.62, 0.00, 0.00},
    {Collective::AllToAll, 536870912, 536870912, 33554432, 1308.67, 410.24, 307.68},
    {Collective::Broadcast, 536870912, 536870912, 134217728, 1502.41, 357.34, 357.34},
    {Collective::SendRecv, 536870912, 536870912, 134217728, 1512.78, 354.89, 354.89},
};

TEST(CollSizing, MatchesNcclTestsRowsAndBandwidths) {
  for (const ReferenceRow& ref : kReference) {
    SCOPED_TRACE(collectiveName(ref.collective) + std::string(" ") + std::to_string(ref.requested));
    const coll::CollSizing s = collSizing(ref.collective, ref.requested, DataType::F32, 4);
    EXPECT_EQ(s.bytes, ref.bytes);
    EXPECT_EQ(s.count, ref.count);
    const double algbw = static_cast<double>(s.bandwidthBytes) / (ref.timeUs * 1e-6) / 1e9;
    EXPECT_NEAR(algbw, ref.algbw, 0.006);
    EXPECT_NEAR(algbw * coll::busBandwidthFactor(ref.collective, 4), ref.busbw, 0.006);
  }
}

TEST(CollSizing, BuffersAndInPlaceOffsets) {
  const coll::CollSizing gather = collSizing(Collective::AllGather, 4096, DataType::F32, 4);
  EXPECT_EQ(gather.sendCount, 256u);
  EXPECT_EQ(gather.recvCount, 1024u);
  EXPECT_EQ(gather.sendInPlaceOffset, 256u);
  const coll::CollSizing scatter = collSizing(Collective::ReduceScatter, 4096, DataType::F32, 4);
  EXPECT_EQ(scatter.sendCount, 1024u);
  EXPECT_EQ(scatter.recvCount, 256u);
  EXPECT_EQ(scatter.recvInPlaceOffset, 256u);
  // Parts round down to 16 bytes: 100 B of int8 over 4 ranks is 25 elements each, 16 kept.
  EXPECT_EQ(collSizing(Collective::AllGather, 100, DataType::I8, 4).count, 16u);
  EXPECT_EQ(collSizing(Collective::AllReduce, 10, DataType::F64, 4).count, 1u);
}

TEST(CollSizing, BusFactors) {
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::ReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::AllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::Broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::Reduce, 4), 1.0);
  EXPECT_DOUBLE_EQ(coll::busBandwidthFactor(Collective::SendRecv, 4), 1.0);
}

CollMeasurement measured(double timeUs, std::size_t bandwidthBytes, double factor, std::int64_t wrong = 0) {
  CollMeasurement m;
  m.status = CollMeasurement::Status::Ok;
  m.timeUs = timeUs;
  m.algbwGBps = static_cast<double>(bandwidthBytes) / (timeUs * 1e-6) / 1e9;
  m.busbwGBps = m.algbwGBps * factor;
  m.wrong = wrong;
  return m;
}

// An all-reduce run over 4 GPUs with every configuration measured, from nccl-tests' own figures.
CollRun syntheticRun() {
  CollRun run;
  run.options.sizes = {8, 536870912};
  run.ranks = 4;
  run.devices = {0, 1, 2, 3};
  run.deviceNames.assign(4, "NVIDIA H200");
  run.deviceBusIds = {"0000:00:06.0", "0000:00:07.0", "0000:00:08.0", "0000:00:09.0"};
  run.nccl.loaded = true;
  run.nccl.version = "2.28.9";
  run.nccl.versionCode = 22809;
  run.nccl.path = "/usr/lib/libnccl.so.2";
  run.nccl.nvls = "NCCL_NVLS_ENABLE=0 (set by peerlink: NVLink multicast off)";
  run.nccl.initMilliseconds = 640.25;
  run.creationMilliseconds = 51.6;
  for (auto& status : run.configs) status.available = true;
  const double times[2][5] = {{24.46, 10.0, 24.46, 8.2, 6.0}, {2321.78, 2400.0, 2321.78, 2330.0, 2769.0}};
  for (int i = 0; i < 2; ++i) {
    const coll::CollSizing s = collSizing(Collective::AllReduce, run.options.sizes[i], DataType::F32, 4);
    CollRow row;
    row.bytes = s.bytes;
    row.count = s.count;
    row.peerlinkChoice = "one_shot";
    for (int c = 0; c < coll::kCollConfigCount; ++c) {
      row.outOfPlace[c] = measured(times[i][c], s.bandwidthBytes, 1.5);
      row.inPlace[c] = measured(times[i][c] * (i == 0 ? 23.61 / 24.46 : 2315.48 / 2321.78), s.bandwidthBytes, 1.5);
    }
    run.rows.push_back(row);
  }
  return run;
}

TEST(CollFormat, RowsAreNcclTestsRows) {
  const CollRun run = syntheticRun();
  EXPECT_EQ(formatCollRow(run, run.rows[0], CollConfig::Nccl),
            "           8             2     float     sum      -1    24.46    0.00    0.00       0    23.61    0.00    "
            "0.00       0");
  EXPECT_EQ(formatCollRow(run, run.rows[1], CollConfig::Nccl),
            "   536870912     134217728     float     sum      -1  2321.78  231.23  346.85       0  2315.48  231.86  "
            "347.79       0");
}

TEST(CollFormat, TimeColumnAndTypeNames) {
  EXPECT_EQ(formatNcclTestsTime(24.456), "  24.46");
  EXPECT_EQ(formatNcclTestsTime(2321.78), "2321.78");
  EXPECT_EQ(formatNcclTestsTime(31772.6), "31772.6");
  EXPECT_EQ(formatNcclTestsTime(123456.0), " 123456");
  EXPECT_STREQ(ncclTestsTypeName(DataType::F32), "float");
  EXPECT_STREQ(ncclTestsTypeName(DataType::BF16), "bfloat16");
  EXPECT_STREQ(ncclTestsTypeName(DataType::U64), "uint64");
}

TEST(CollFormat, TextHasHeaderEveryConfigurationAndComparison) {
  CollRun run = syntheticRun();
  run.configs[static_cast<int>(CollConfig::NcclSymmetric)] = {false,
                                                              "N/A (NCCL 2.26.2 < 2.27 (no ncclCommWindowRegister))"};
  for (CollRow& row : run.rows) {
    row.outOfPlace[static_cast<int>(CollConfig::NcclSymmetric)] = {};
    row.inPlace[static_cast<int>(CollConfig::NcclSymmetric)] = {};
  }
  run.rows[0].inPlace[static_cast<int>(CollConfig::Peerlink)].wrong = 3;
  const std::string text = formatCollText(run);
  EXPECT_NE(text.find("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time"),
            std::string::npos);
  EXPECT_NE(text.find("#  Rank  0 device  0 [0000:00:06.0] NVIDIA H200"), std::string::npos);
  EXPECT_NE(text.find("# NCCL 2.28.9: /usr/lib/libnccl.so.2"), std::string::npos);
  EXPECT_NE(text.find("NCCL_NVLS_ENABLE=0 (set by peerlink"), std::string::npos);
  EXPECT_NE(text.find("# NCCL symmetric: N/A (NCCL 2.26.2 < 2.27"), std::string::npos);
  EXPECT_NE(text.find("# communicators created in: peerlink 51.6 ms, NCCL (ncclCommInitAll) 640.2 ms (the GPUs' "
                      "contexts existed before)"),
            std::string::npos);
  for (CollConfig config : coll::kCollConfigs) {
    EXPECT_NE(text.find(std::string("# == ") + coll::collConfigName(config) + ":"), std::string::npos);
  }
  EXPECT_NE(text.find("# Out of bounds values : 3 FAILED"), std::string::npos);
  EXPECT_NE(text.find("# == peerlink vs the best NCCL configuration at each size, out-of-place"), std::string::npos);
  // Best NCCL at 8 B is nccl_graph (8.2 us, symmetric did not run): peerlink eager 24.46 -> 0.34, graph 10 -> 0.82.
  EXPECT_NE(text.find("nccl_graph        0.34     0.82  one_shot"), std::string::npos) << text;
  EXPECT_EQ(collFailures(run), 1);
}

// Sizes a configuration did not run for a reason of its own (peerlink's graph across nodes: calls too large to
// capture) are N/A cells with the reason once under the table, and no failure.
TEST(CollFormat, SizesNotRunAreNamedWithTheirReasonAndAreNoFailure) {
  CollRun run = syntheticRun();
  const std::string why = "allReduce of 134217728 elements on rank 0 inside a CUDA graph capture: too large";
  for (CollRow& row : run.rows) {
    if (row.bytes < 1024) continue;
    for (auto* m : {&row.outOfPlace[static_cast<int>(CollConfig::PeerlinkGraph)],
                    &row.inPlace[static_cast<int>(CollConfig::PeerlinkGraph)]}) {
      *m = {};
      m->status = CollMeasurement::Status::NotRun;
      m->reason = why;
    }
  }
  const std::string text = formatCollText(run);
  EXPECT_NE(text.find("# not run 2 times (536870912 B out-of-place ... 536870912 B in-place): " + why),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("FAILED"), std::string::npos) << text;
  EXPECT_EQ(collFailures(run), 0);
}

// Ranks of different processes on one GPU take turns on it: the text says their times are no measure of speed.
TEST(CollFormat, ProcessesSharingAGpuAreNoMeasureOfSpeed) {
  CollRun run = syntheticRun();
  const std::string note = "ranks in different processes share a GPU";
  EXPECT_EQ(formatCollText(run).find(note), std::string::npos);  // one process
  run.processes = 4;
  EXPECT_EQ(formatCollText(run).find(note), std::string::npos);  // four GPUs
  run.deviceBusIds[3] = run.deviceBusIds[1];
  EXPECT_NE(formatCollText(run).find(note), std::string::npos);
}

TEST(CollFormat, BestNcclAndRatio) {
  const CollRun run = syntheticRun();
  EXPECT_EQ(coll::bestNccl(run.rows[0], Placement::OutOfPlace), CollConfig::NcclSymmetric);
  EXPECT_EQ(coll::bestNccl(run.rows[1], Placement::OutOfPlace), CollConfig::Nccl);
  EXPECT_NEAR(*coll::ratioToBestNccl(run.rows[0], Placement::OutOfPlace, CollConfig::PeerlinkGraph), 0.6, 1e-12);
  CollRow empty;
  EXPECT_FALSE(coll::bestNccl(empty, Placement::OutOfPlace).has_value());
  EXPECT_FALSE(coll::ratioToBestNccl(empty, Placement::OutOfPlace, CollConfig::Peerlink).has_value());
}

TEST(CollJson, RoundTrip) {
  CollRun run = syntheticRun();
  run.rows[1].outOfPlace[static_cast<int>(CollConfig::Peerlink)].status = CollMeasurement::Status::Failed;
  run.rows[1].outOfPlace[static_cast<int>(CollConfig::Peerlink)].reason = "cudaErrorIllegalAddress";
  run.rows[0].inPlace[static_cast<int>(CollConfig::Nccl)].wrong = -1;
  const nlohmann::json document = collToJson(run, Params());
  EXPECT_EQ(document.at("schema"), "peerlink.coll");
  EXPECT_EQ(document.at("version"), 1);
  EXPECT_TRUE(document.at("rows")[0].at("out_of_place").at("nccl").at("time_us").is_number());
  EXPECT_TRUE(document.at("rows")[0].at("in_place").at("nccl").at("wrong").is_null());
  EXPECT_EQ(document.at("rows")[0].at("out_of_place").at("best_nccl"), "nccl_symmetric");
  EXPECT_DOUBLE_EQ(document.at("bus_factor").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(document.at("creation_ms").get<double>(), 51.6);
  EXPECT_DOUBLE_EQ(document.at("nccl").at("init_ms").get<double>(), 640.25);
  const SavedColl saved = collFromJson(nlohmann::json::parse(document.dump()), "test");
  EXPECT_EQ(formatCollText(saved.run), formatCollText(run));
  EXPECT_EQ(collToJson(saved.run, Params()), document);
}

// --iteration-times: each eager cell's iterations kept in the JSON and summarized in the text (fastest,
// median, slowest and which iteration was slowest); graph cells and runs without them show no table.
TEST(CollFormat, IterationTimesTableAndRoundTrip) {
  CollRun run = syntheticRun();
  EXPECT_EQ(formatCollText(run).find("--iteration-times"), std::string::npos);
  run.options.iterationTimes = true;
  CollMeasurement& eager = run.rows[1].outOfPlace[static_cast<int>(CollConfig::Peerlink)];
  eager.iterationUs = {2400.5, 2399.0, 3105.25, 2401.0, 2398.5};
  const std::string text = formatCollText(run);
  EXPECT_NE(text.find("# == every eager iteration timed on its own (--iteration-times)"), std::string::npos) << text;
  EXPECT_NE(text.find("   536870912  peerlink        out-of-place     2398.50     2400.50     3105.25          3"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("peerlink_graph  out-of-place"), std::string::npos);
  const nlohmann::json document = collToJson(run, Params());
  EXPECT_EQ(document.at("options").at("iteration_times"), true);
  EXPECT_EQ(document.at("rows")[1].at("out_of_place").at("peerlink").at("iteration_us").size(), 5u);
  EXPECT_FALSE(document.at("rows")[0].at("out_of_place").at("peerlink").contains("iteration_us"));
  const SavedColl saved = collFromJson(nlohmann::json::parse(document.dump()), "test");
  EXPECT_EQ(saved.run.rows[1].outOfPlace[static_cast<int>(CollConfig::Peerlink)].iterationUs, eager.iterationUs);
  EXPECT_TRUE(saved.run.options.iterationTimes);
  EXPECT_EQ(formatCollText(saved.run), text);
}

// A run with neither side created (--no-nccl and no communicator) has no creation line; files written before
// the times were recorded read as 0 (no line).
TEST(CollFormat, CreationLineOnlyForCreatedCommunicators) {
  CollRun run = syntheticRun();
  run.nccl.initMilliseconds = 0;
  EXPECT_NE(formatCollText(run).find("# communicators created in: peerlink 51.6 ms (the GPUs'"), std::string::npos);
  run.creationMilliseconds = 0;
  EXPECT_EQ(formatCollText(run).find("created in"), std::string::npos);
  nlohmann::json older = collToJson(syntheticRun(), Params());
  older.erase("creation_ms");
  older.at("nccl").erase("init_ms");
  EXPECT_EQ(formatCollText(collFromJson(older, "older").run).find("created in"), std::string::npos);
}

// A run across 2 nodes x 2: the section of the phases across nodes beside MPI's own exchange, its ratio, the rows
// where MPI's exchange was not measured; everything read back from the JSON. One host: no section, no fields.
TEST(CollFormat, AcrossNodesSectionAndRoundTrip) {
  CollRun run = syntheticRun();
  EXPECT_EQ(formatCollText(run).find("across nodes"), std::string::npos);
  EXPECT_FALSE(collToJson(run, Params()).contains("nodes"));
  EXPECT_FALSE(collToJson(run, Params()).at("rows")[0].contains("across_nodes"));
  run.nodes = {2, 2, "Open MPI v4.1.6", "/opt/peerlink/lib/libpeerlink_mpi.so", true};
  run.rows[0].acrossNodes = coll::CollAcrossNodes{0, 0, "nothing crosses nodes"};
  // 512 MiB over 2 x 2: a shard of 256 MiB per rank, all of it sent to the other node (2 (N-1)/N = 1).
  run.rows[1].acrossNodes = coll::CollAcrossNodes{268435456, 25000.0, ""};
  run.rows[1].outOfPlace[static_cast<int>(CollConfig::Peerlink)].acrossNodesUs = 1250.0;
  run.rows[1].inPlace[static_cast<int>(CollConfig::Peerlink)].acrossNodesUs = 1200.0;
  EXPECT_NEAR(*coll::acrossNodesRatio(run.rows[1], Placement::OutOfPlace), 20.0, 1e-12);
  EXPECT_FALSE(coll::acrossNodesRatio(run.rows[0], Placement::OutOfPlace).has_value());
  const std::string text = formatCollText(run);
  EXPECT_NE(text.find("# == across nodes: 2 nodes x 2 ranks over MPI (Open MPI v4.1.6, initialized by peerlink with "
                      "MPI_THREAD_MULTIPLE; /opt/peerlink/lib/libpeerlink_mpi.so)"),
            std::string::npos)
      << text;
  // 268435456 B in 1250 us: 214.75 GB/s, 54% of the 2321.78 us call; MPI 25000 us: 10.74 GB/s; ratio 20.00.
  EXPECT_NE(text.find("   536870912    268435456  out-of-place    1250.00   214.75    54%    25000.0    10.74  20.00"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("           8            0  out-of-place        N/A      N/A    N/A        N/A      N/A    N/A"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# MPI p2p not measured: nothing crosses nodes"), std::string::npos);
  const nlohmann::json document = collToJson(run, Params());
  EXPECT_EQ(document.at("nodes").at("ranks_per_node"), 2);
  EXPECT_EQ(document.at("rows")[1].at("across_nodes").at("bytes_per_rank"), 268435456u);
  EXPECT_DOUBLE_EQ(document.at("rows")[1].at("across_nodes").at("ratio_out_of_place").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(document.at("rows")[1].at("out_of_place").at("peerlink").at("across_nodes_us").get<double>(),
                   1250.0);
  const SavedColl saved = collFromJson(nlohmann::json::parse(document.dump()), "test");
  EXPECT_EQ(formatCollText(saved.run), text);
  EXPECT_EQ(collToJson(saved.run, Params()), document);
}

// What a call sends between nodes, from the hierarchical plan the communicator runs: an all-reduce's ring sends
// 2 (N-1)/N of a rank's shard; a broadcast only from the root's rail (MPI's exchange is not its reference).
TEST(CollAcrossNodes, TrafficFromTheHierarchicalPlan) {
  const coll::CollSizing sizing = collSizing(Collective::AllReduce, 1 << 20, DataType::F32, 4);
  const coll::AcrossNodesTraffic pair =
      coll::acrossNodesTraffic(Collective::AllReduce, {2, 2}, sizing, DataType::F32, 0);
  EXPECT_EQ(pair.bytesPerRank, std::size_t{1} << 19);  // a shard of 512 KiB, N = 2: all of it
  EXPECT_TRUE(pair.everyRankSends);
  EXPECT_EQ(coll::mpiReferenceGap(pair), "");
  const coll::CollSizing six = collSizing(Collective::AllReduce, 3 << 20, DataType::F32, 6);
  const coll::AcrossNodesTraffic three = coll::acrossNodesTraffic(Collective::AllReduce, {3, 2}, six, DataType::F32, 0);
  EXPECT_EQ(three.bytesPerRank, (std::size_t{3} << 19) * 4 / 3);  // 2 (N-1)/N of a 1.5 MiB shard
  const coll::AcrossNodesTraffic broadcast = coll::acrossNodesTraffic(
      Collective::Broadcast, {2, 2}, collSizing(Collective::Broadcast, 4096, DataType::F32, 4), DataType::F32, 1);
  EXPECT_EQ(broadcast.bytesPerRank, 4096u);
  EXPECT_FALSE(broadcast.everyRankSends);
  EXPECT_NE(coll::mpiReferenceGap(broadcast).find("not every rank sends"), std::string::npos);
  EXPECT_EQ(coll::mpiReferenceGap({}), "nothing crosses nodes");
}

TEST(CollJson, RejectsOtherDocuments) {
  EXPECT_THROW(collFromJson(nlohmann::json{{"schema", "peerlink.bench"}}, "x"), Error);
  nlohmann::json document = collToJson(syntheticRun(), Params());
  document["version"] = 2;
  EXPECT_THROW(collFromJson(document, "x"), Error);
  document["version"] = 1;
  document["options"]["collective"] = "all_sum";
  try {
    collFromJson(document, "saved.json");
    FAIL() << "accepted an unknown collective";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidInput);
    EXPECT_NE(std::string(error.what()).find("saved.json"), std::string::npos);
  }
}

// ---- the host reference ---------------------------------------------------------------------------

// Each rank's receive buffer, made from the inputs by plain data movement and arithmetic (independently of
// expectedValue), for sum and byte copies.
std::vector<std::vector<unsigned char>> simulate(const coll::CheckSpec& spec) {
  const std::size_t size = dataTypeSize(spec.type);
  const coll::CollSizing& s = spec.sizing;
  std::vector<std::vector<unsigned char>> in(spec.ranks, std::vector<unsigned char>(s.sendCount * size));
  std::vector<std::vector<unsigned char>> out(spec.ranks, std::vector<unsigned char>(s.recvCount * size, 0xFF));
  for (int r = 0; r < spec.ranks; ++r) coll::fillInput(spec, r, in[r].data());
  auto sumAt = [&](std::size_t index, unsigned char* target) {
    double total = 0;
    for (int r = 0; r < spec.ranks; ++r) total += coll::decodeElement(spec.type, in[r].data() + index * size);
    coll::encodeElement(spec.type, total, target);
  };
  const std::size_t block = s.count * size;
  for (int r = 0; r < spec.ranks; ++r) {
    switch (spec.collective) {
      case Collective::AllReduce:
      case Collective::Reduce:
        for (std::size_t i = 0; i < s.recvCount; ++i) sumAt(i, out[r].data() + i * size);
        break;
      case Collective::ReduceScatter:
        for (std::size_t i = 0; i < s.recvCount; ++i) sumAt(r * s.count + i, out[r].data() + i * size);
        break;
      case Collective::Broadcast: out[r] = in[spec.root]; break;
      case Collective::AllGather:
        for (int q = 0; q < spec.ranks; ++q) std::memcpy(out[r].data() + q * block, in[q].data(), block);
        break;
      case Collective::AllToAll:
        for (int q = 0; q < spec.ranks; ++q) std::memcpy(out[r].data() + q * block, in[q].data() + r * block, block);
        break;
      case Collective::SendRecv: out[r] = in[(r + spec.ranks - 1) % spec.ranks]; break;
    }
  }
  return out;
}

TEST(CollReference, AgreesWithSimulatedCollectives) {
  const Collective collectives[] = {Collective::AllReduce, Collective::Reduce,    Collective::ReduceScatter,
                                    Collective::Broadcast, Collective::AllGather, Collective::AllToAll,
                                    Collective::SendRecv};
  for (DataType type : {DataType::F32, DataType::BF16, DataType::F16, DataType::I8, DataType::U64}) {
    for (Collective collective : collectives) {
      for (int ranks : {2, 3, 8}) {
        SCOPED_TRACE(std::string(collectiveName(collective)) + " " + dataTypeName(type) + " " + std::to_string(ranks));
        coll::CheckSpec spec{collective, type, ReduceOp::Sum, ranks, 1, collSizing(collective, 12345 * 8, type, ranks)};
        std::vector<std::vector<unsigned char>> out = simulate(spec);
        for (int r = 0; r < ranks; ++r) EXPECT_EQ(coll::countWrong(spec, r, out[r].data()), 0) << "rank " << r;
        // One corrupted element, and the poison, are caught.
        const int victim = collective == Collective::Reduce ? spec.root : ranks - 1;
        out[victim][dataTypeSize(type) * 7] ^= 0x40;
        EXPECT_EQ(coll::countWrong(spec, victim, out[victim].data()), 1);
        std::vector<unsigned char> poison(out[victim].size(), coll::kPoisonByte);
        EXPECT_EQ(coll::countWrong(spec, victim, poison.data()),
                  static_cast<std::int64_t>(coll::checkedElements(spec, victim)));
      }
    }
  }
}

TEST(CollReference, ShiftedDataIsWrong) {
  coll::CheckSpec spec{Collective::AllGather,
                       DataType::F32,
                       ReduceOp::Sum,
                       4,
                       0,
                       collSizing(Collective::AllGather, 1 << 20, DataType::F32, 4)};
  std::vector<std::vector<unsigned char>> out = simulate(spec);
  std::vector<unsigned char> shifted(out[0].size());
  std::memcpy(shifted.data() + 16 * 4, out[0].data(), out[0].size() - 16 * 4);  // 16 elements later
  EXPECT_GT(coll::countWrong(spec, 0, shifted.data()), static_cast<std::int64_t>(spec.sizing.recvCount / 2));
}

TEST(CollReference, ReductionsOtherThanSum) {
  coll::CheckSpec spec{Collective::AllReduce,
                       DataType::F32,
                       ReduceOp::Prod,
                       8,
                       0,
                       collSizing(Collective::AllReduce, 4096, DataType::F32, 8)};
  for (std::size_t i = 0; i < spec.sizing.count; ++i) {
    const double value = coll::expectedValue(spec, 0, i);
    EXPECT_GE(value, 1.0);
    EXPECT_LE(value, 256.0);
  }
  spec.op = ReduceOp::Avg;
  spec.ranks = 3;
  std::vector<unsigned char> in(spec.sizing.count * 4);
  double minimum = 1e9;
  for (int r = 0; r < 3; ++r) {
    coll::fillInput(spec, r, in.data());
    minimum = std::min(minimum, coll::decodeElement(DataType::F32, in.data()));
  }
  spec.op = ReduceOp::Min;
  EXPECT_EQ(coll::expectedValue(spec, 0, 0), minimum);
}

TEST(CollReference, ElementCodecsAreExactForSmallIntegers) {
  for (DataType type : kEveryDataType) {
    for (double value : {0.0, 1.0, 2.0, 15.0, 120.0}) {
      unsigned char bytes[8] = {};
      coll::encodeElement(type, value, bytes);
      EXPECT_EQ(coll::decodeElement(type, bytes), value) << dataTypeName(type);
    }
  }
  unsigned char half[2] = {0x00, 0x3c};  // 1.0 in IEEE half
  EXPECT_EQ(coll::decodeElement(DataType::F16, half), 1.0);
  unsigned char poison[2] = {coll::kPoisonByte, coll::kPoisonByte};
  EXPECT_TRUE(std::isnan(coll::decodeElement(DataType::F16, poison)));
}

}  // namespace
}  // namespace peerlink::cli
