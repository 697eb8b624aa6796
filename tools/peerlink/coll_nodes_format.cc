#include "coll_nodes_format.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coll_format.hpp"

namespace peerlink::cli {
namespace {

using coll::CollConfig;
using coll::CollMeasurement;
using coll::CollRow;
using coll::Placement;

std::string gbps(std::size_t bytes, double us) {
  return us > 0 ? fmt::format("{:.2f}", static_cast<double>(bytes) / us / 1e3) : std::string("N/A");
}

std::string timeOrNa(double us) {
  return us > 0 ? formatNcclTestsTime(us) : std::string("N/A");
}

}  // namespace

std::string formatCollNodesText(const coll::CollRun& run) {
  const coll::CollNodes& nodes = run.nodes;
  if (nodes.nodes == 0) return "";
  std::string out = fmt::format(
      "#\n# == across nodes: {} nodes x {} ranks over MPI ({}, {}; {})\n", nodes.nodes, nodes.ranksPerNode,
      nodes.mpi.empty() ? "?" : nodes.mpi,
      nodes.mpiInitializedHere ? "initialized by peerlink with MPI_THREAD_MULTIPLE" : "initialized by the program",
      nodes.mpiLibrary);
  out +=
      "# peerlink: its eager calls' phases across nodes, per call (the transport's calls, start to data in place -- in "
      "pinned memory for calls that return once queued; the slowest rank), and their share of the call\n"
      "# MPI p2p: MPI's own MPI_Isend/MPI_Irecv of the same bytes on the same path (every rank to the next node's rank "
      "of its local index and from the one before, both at once, every rail at once, pinned host memory; the slowest "
      "rank)\n"
      "# ratio = MPI p2p time / peerlink time (1: the phases across nodes move data as fast as MPI itself)\n";
  out += fmt::format("# {:>10}  {:>11}  {:<12}  {:>9}  {:>7}  {:>5}  {:>9}  {:>7}  {:>5}\n", "size", "across/rank",
                     "placement", "peerlink", "GB/s", "share", "MPI p2p", "GB/s", "ratio");
  out +=
      fmt::format("# {:>10}  {:>11}  {:<12}  {:>9}  {:>7}  {:>5}  {:>9}\n", "(B)", "(B)", "", "(us)", "", "", "(us)");
  std::vector<std::string> gaps;
  for (const CollRow& row : run.rows) {
    if (!row.acrossNodes) continue;
    const coll::CollAcrossNodes& across = *row.acrossNodes;
    for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
      const CollMeasurement& m = row.at(placement)[static_cast<int>(CollConfig::Peerlink)];
      if (placement == Placement::InPlace && m.status == CollMeasurement::Status::NotRun) continue;
      const double peerlinkUs = m.ok() ? m.acrossNodesUs : 0;
      const std::optional<double> ratio = coll::acrossNodesRatio(row, placement);
      out += fmt::format(
          "  {:>10}  {:>11}  {:<12}  {:>9}  {:>7}  {:>5}  {:>9}  {:>7}  {:>5}\n", row.bytes, across.bytesPerRank,
          placement == Placement::InPlace ? "in-place" : "out-of-place", timeOrNa(peerlinkUs),
          gbps(across.bytesPerRank, peerlinkUs),
          peerlinkUs > 0 && m.timeUs > 0 ? fmt::format("{:.0f}%", 100 * peerlinkUs / m.timeUs) : std::string("N/A"),
          timeOrNa(across.mpiUs), gbps(across.bytesPerRank, across.mpiUs),
          ratio ? fmt::format("{:.2f}", *ratio) : std::string("N/A"));
    }
    if (!across.mpiReason.empty() && std::find(gaps.begin(), gaps.end(), across.mpiReason) == gaps.end()) {
      gaps.push_back(across.mpiReason);
    }
  }
  for (const std::string& gap : gaps) out += fmt::format("# MPI p2p not measured: {}\n", gap);
  return out;
}

nlohmann::json collNodesToJson(const coll::CollNodes& nodes) {
  if (nodes.nodes == 0) return nullptr;
  return {{"nodes", nodes.nodes},
          {"ranks_per_node", nodes.ranksPerNode},
          {"mpi", nodes.mpi},
          {"mpi_library", nodes.mpiLibrary},
          {"mpi_initialized_here", nodes.mpiInitializedHere}};
}

nlohmann::json acrossNodesToJson(const CollRow& row) {
  if (!row.acrossNodes) return nullptr;
  const coll::CollAcrossNodes& across = *row.acrossNodes;
  nlohmann::json out = {
      {"bytes_per_rank", across.bytesPerRank}, {"mpi_us", across.mpiUs}, {"mpi_reason", across.mpiReason}};
  for (Placement placement : {Placement::OutOfPlace, Placement::InPlace}) {
    const std::optional<double> ratio = coll::acrossNodesRatio(row, placement);
    out[placement == Placement::InPlace ? "ratio_in_place" : "ratio_out_of_place"] =
        ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
  }
  return out;
}

void addAcrossNodesUs(const CollMeasurement& m, nlohmann::json& out) {
  if (m.ok() && m.acrossNodesUs > 0) out["across_nodes_us"] = m.acrossNodesUs;
}

}  // namespace peerlink::cli
