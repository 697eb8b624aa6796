// `peerlink coll` across nodes (docs/multinode.md): the nodes and the MPI of the run, and a table of peerlink's calls
// across nodes beside MPI's own exchange of the same bytes on the same path, in text and JSON (and back).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "coll_bench/coll_bench.hpp"

namespace peerlink::cli {

/// The section of a run across nodes ("" on one host): the nodes, the MPI and who initialized it, and per size and
/// placement the bytes a rank sends between nodes, peerlink's time across nodes per call and its share of the call,
/// MPI's exchange of those bytes, and their ratio.
std::string formatCollNodesText(const coll::CollRun& run);

/// The run's "nodes" object (null on one host), a row's "across_nodes" (null where not across nodes), and a
/// measurement's time across nodes added to its object where there is one.
nlohmann::json collNodesToJson(const coll::CollNodes& nodes);
nlohmann::json acrossNodesToJson(const coll::CollRow& row);
void addAcrossNodesUs(const coll::CollMeasurement& m, nlohmann::json& out);

}  // namespace peerlink::cli
