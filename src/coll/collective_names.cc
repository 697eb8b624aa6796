// Names of data types, reduction ops, collectives and algorithms (include/peerlink/collectives.hpp).
#include <algorithm>
#include <cctype>

#include "peerlink/collectives.hpp"

namespace peerlink {
namespace {

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::size_t dataTypeSize(DataType type) noexcept {
  switch (type) {
    case DataType::F64:
    case DataType::I64:
    case DataType::U64: return 8;
    case DataType::F32:
    case DataType::I32:
    case DataType::U32: return 4;
    case DataType::F16:
    case DataType::BF16: return 2;
    case DataType::I8:
    case DataType::U8: return 1;
  }
  return 1;
}

const char* dataTypeName(DataType type) noexcept {
  switch (type) {
    case DataType::F64: return "f64";
    case DataType::F32: return "f32";
    case DataType::F16: return "f16";
    case DataType::BF16: return "bf16";
    case DataType::I32: return "i32";
    case DataType::U32: return "u32";
    case DataType::I64: return "i64";
    case DataType::U64: return "u64";
    case DataType::I8: return "i8";
    case DataType::U8: return "u8";
  }
  return "?";
}

bool isFloatingPoint(DataType type) noexcept {
  return type == DataType::F64 || type == DataType::F32 || type == DataType::F16 || type == DataType::BF16;
}

std::optional<DataType> parseDataType(const std::string& name) {
  static const struct {
    const char* ours;
    const char* ncclTests;
    DataType type;
  } kNames[] = {
      {"f64", "double", DataType::F64},     {"f32", "float", DataType::F32},  {"f16", "half", DataType::F16},
      {"bf16", "bfloat16", DataType::BF16}, {"i32", "int32", DataType::I32},  {"u32", "uint32", DataType::U32},
      {"i64", "int64", DataType::I64},      {"u64", "uint64", DataType::U64}, {"i8", "int8", DataType::I8},
      {"u8", "uint8", DataType::U8},
  };
  const std::string key = lowered(name);
  for (const auto& entry : kNames) {
    if (key == entry.ours || key == entry.ncclTests) {
      return entry.type;
    }
  }
  return std::nullopt;
}

const char* reduceOpName(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

std::optional<ReduceOp> parseReduceOp(const std::string& name) {
  const std::string key = lowered(name);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg}) {
    if (key == reduceOpName(op)) {
      return op;
    }
  }
  return std::nullopt;
}

bool reduceOpSupported(DataType type, ReduceOp op) noexcept {
  return op != ReduceOp::Avg || isFloatingPoint(type);
}

const char* collectiveName(Collective collective) noexcept {
  switch (collective) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::SendRecv: return "send_recv";
  }
  return "?";
}

std::optional<Collective> parseCollective(const std::string& name) {
  std::string key = lowered(name);
  key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
  for (Collective collective : {Collective::AllReduce, Collective::Broadcast, Collective::Reduce, Collective::AllGather,
                                Collective::ReduceScatter, Collective::AllToAll, Collective::SendRecv}) {
    std::string candidate = collectiveName(collective);
    candidate.erase(std::remove(candidate.begin(), candidate.end(), '_'), candidate.end());
    if (key == candidate) {
      return collective;
    }
  }
  return std::nullopt;
}

const char* algorithmName(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::Auto: return "auto";
    case Algorithm::OneShot: return "one_shot";
    case Algorithm::TwoShot: return "two_shot";
    case Algorithm::Ring: return "ring";
  }
  return "?";
}

std::optional<Algorithm> parseAlgorithm(const std::string& name) {
  std::string key = lowered(name);
  key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
  for (Algorithm algorithm : {Algorithm::Auto, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Ring}) {
    std::string candidate = algorithmName(algorithm);
    candidate.erase(std::remove(candidate.begin(), candidate.end(), '_'), candidate.end());
    if (key == candidate) {
      return algorithm;
    }
  }
  return std::nullopt;
}

}  // namespace peerlink
