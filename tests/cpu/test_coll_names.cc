// The collectives vocabulary (include/peerlink/collectives.hpp, src/coll/collective_names.cc): names as
// the CLI, logs and JSON spell them, nccl-tests' and PEERLINK_ALGO's spellings, sizes, and which ops each
// type supports.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "coll_lists.hpp"
#include "peerlink/collectives.hpp"

namespace peerlink {
namespace {

constexpr const auto& kTypes = kEveryDataType;
constexpr const auto& kOps = kEveryReduceOp;
constexpr const auto& kCollectives = kEveryCollective;
constexpr Algorithm kAlgorithms[] = {Algorithm::Auto, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring};

TEST(CollectiveNames, DataTypes) {
  const char* const names[] = {"f64", "f32", "f16", "bf16", "i32", "u32", "i64", "u64", "i8", "u8"};
  const char* const ncclTests[] = {"double", "float", "half",   "bfloat16", "int32",
                                   "uint32", "int64", "uint64", "int8",     "uint8"};
  const std::size_t sizes[] = {8, 4, 2, 2, 4, 4, 8, 8, 1, 1};
  for (std::size_t i = 0; i < std::size(kTypes); ++i) {
    const DataType type = kTypes[i];
    EXPECT_STREQ(dataTypeName(type), names[i]);
    EXPECT_EQ(dataTypeSize(type), sizes[i]) << names[i];
    EXPECT_EQ(parseDataType(names[i]), type);
    EXPECT_EQ(parseDataType(ncclTests[i]), type);
    EXPECT_EQ(isFloatingPoint(type), i < 4) << names[i];
  }
  EXPECT_EQ(parseDataType("F32"), DataType::F32);
  EXPECT_EQ(parseDataType("BFloat16"), DataType::BF16);
  EXPECT_EQ(parseDataType("f8"), std::nullopt);
  EXPECT_EQ(parseDataType(""), std::nullopt);
  EXPECT_EQ(parseDataType("int"), std::nullopt);
}

TEST(CollectiveNames, ReduceOps) {
  const char* const names[] = {"sum", "prod", "min", "max", "avg"};
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    EXPECT_STREQ(reduceOpName(kOps[i]), names[i]);
    EXPECT_EQ(parseReduceOp(names[i]), kOps[i]);
  }
  EXPECT_EQ(parseReduceOp("SUM"), ReduceOp::Sum);
  EXPECT_EQ(parseReduceOp("Avg"), ReduceOp::Avg);
  EXPECT_EQ(parseReduceOp("mean"), std::nullopt);
  EXPECT_EQ(parseReduceOp("all"), std::nullopt);
}

TEST(CollectiveNames, AvgOnlyForFloatingPoint) {
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      EXPECT_EQ(reduceOpSupported(type, op), op != ReduceOp::Avg || isFloatingPoint(type))
          << dataTypeName(type) << " " << reduceOpName(op);
    }
  }
}

TEST(CollectiveNames, Collectives) {
  const char* const names[] = {"all_reduce",     "broadcast",  "reduce",   "all_gather",
                               "reduce_scatter", "all_to_all", "send_recv"};
  const char* const ncclTests[] = {"allreduce",     "broadcast", "reduce",  "allgather",
                                   "reducescatter", "alltoall",  "sendrecv"};
  for (std::size_t i = 0; i < std::size(kCollectives); ++i) {
    EXPECT_STREQ(collectiveName(kCollectives[i]), names[i]);
    EXPECT_EQ(parseCollective(names[i]), kCollectives[i]);
    EXPECT_EQ(parseCollective(ncclTests[i]), kCollectives[i]);
  }
  EXPECT_EQ(parseCollective("AllReduce"), Collective::AllReduce);
  EXPECT_EQ(parseCollective("ALL_GATHER"), Collective::AllGather);
  // "reduce" and "reduce_scatter" stay apart although one is a prefix of the other.
  EXPECT_EQ(parseCollective("reduce"), Collective::Reduce);
  EXPECT_EQ(parseCollective("scatter"), std::nullopt);
  EXPECT_EQ(parseCollective("gather"), std::nullopt);
  EXPECT_EQ(parseCollective(""), std::nullopt);
}

TEST(CollectiveNames, Algorithms) {
  const char* const names[] = {"auto", "one_shot", "two_shot", "ring"};
  const char* const env[] = {"AUTO", "ONESHOT", "TWOSHOT", "RING"};
  for (std::size_t i = 0; i < std::size(kAlgorithms); ++i) {
    EXPECT_STREQ(algorithmName(kAlgorithms[i]), names[i]);
    EXPECT_EQ(parseAlgorithm(names[i]), kAlgorithms[i]);
    EXPECT_EQ(parseAlgorithm(env[i]), kAlgorithms[i]);
  }
  EXPECT_EQ(parseAlgorithm("TwoShot"), Algorithm::TwoShot);
  EXPECT_EQ(parseAlgorithm("one-shot"), std::nullopt);  // only underscores are ignored
  EXPECT_EQ(parseAlgorithm("tree"), std::nullopt);
}

// Every name is distinct, so JSON and logs can be read back unambiguously.
TEST(CollectiveNames, NamesAreDistinct) {
  std::set<std::string> seen;
  for (DataType type : kTypes) EXPECT_TRUE(seen.insert(dataTypeName(type)).second);
  for (ReduceOp op : kOps) EXPECT_TRUE(seen.insert(reduceOpName(op)).second);
  for (Collective collective : kCollectives) {
    EXPECT_TRUE(seen.insert(collectiveName(collective)).second) << collectiveName(collective);
  }
  for (Algorithm algorithm : kAlgorithms) EXPECT_TRUE(seen.insert(algorithmName(algorithm)).second);
}

}  // namespace
}  // namespace peerlink
