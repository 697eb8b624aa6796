#include "plan_format.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "coll_explain.hpp"
#include "coll_format.hpp"
#include "net/net_call.hpp"

namespace peerlink::cli {
namespace {

using net::kPiecesInFlight;
using nlohmann::json;

double algbw(const PlanRow& row, double us) {
  return us > 0 ? static_cast<double>(row.bandwidthBytes) / (us * 1e3) : 0;
}

std::string timeCells(const PlanRow& row, double us, double busFactor) {
  return fmt::format("  {:>7}  {:6.2f}  {:6.2f}", formatNcclTestsTime(us), algbw(row, us), algbw(row, us) * busFactor);
}

std::string bottleneckText(const plan::Prediction& p) {
  if (p.phase.empty()) return p.bottleneck;
  return p.bottleneck + (p.bottleneck == "latency" ? ": " : " in ") + p.phase;
}

// The bottleneck, and the in-place kernel where it is not the out-of-place one.
std::string remarks(const plan::Candidate& c) {
  std::string text = bottleneckText(c.outOfPlace);
  if (c.inPlace && (c.inPlace->kernel != c.outOfPlace.kernel || c.inPlace->algorithm != c.outOfPlace.algorithm)) {
    if (!c.inPlace->hostPath && !c.inPlace->arenaWay) {
      text += fmt::format(" [in place: {}, {}]", algorithmName(c.inPlace->algorithm), kernelName(c.inPlace->kernel));
    }
  }
  return text;
}

std::string modelLine(const PlanSweep& sweep) {
  std::string line = "# model: " + sweep.modelOrigin;
  const json& runs = sweep.modelProvenance.value("runs", json::array());
  if (!runs.empty()) {
    std::vector<std::string> machines;
    for (const json& run : runs) {
      const std::string machine = run.value("machine", std::string());
      if (std::find(machines.begin(), machines.end(), machine) == machines.end()) machines.push_back(machine);
    }
    line += fmt::format(", fitted to {} run(s) on {}", runs.size(), fmt::join(machines, "; "));
  }
  return line + " (docs/plan.md)\n";
}

// Which calls of `collective` on unregistered buffers across `ranks` ranks the arena ring takes, as
// PEERLINK_COLL_ARENA_RING says (coll::runsAsArenaRing), before the others' way.
std::string arenaRingLine(const plan::ProcessMode& mode, Collective collective, int ranks) {
  const std::string shape = mode.arenaRingShape
                                ? fmt::format(", {} blocks x {} KiB slots (PEERLINK_COLL_ARENA_RING_SHAPE)",
                                              mode.arenaRingShape->blocks, mode.arenaRingShape->slotBytes >> 10)
                                : std::string();
  if (mode.arenaRing == coll::ArenaRingMode::Off || !coll::arenaRingRuns(collective, ranks)) return "";
  if (mode.arenaRing == coll::ArenaRingMode::On)
    return "run as the arena ring (PEERLINK_COLL_ARENA_RING=ON" + shape + ")";
  const std::size_t least = coll::arenaRingAutoMinBytes(collective);
  if (least == 0) return "";
  return fmt::format("run as the arena ring from a call of {} MiB (PEERLINK_COLL_ARENA_RING=AUTO{}), smaller ones ",
                     least >> 20, shape);
}

std::string header(const PlanSweep& sweep) {
  const int ranks = sweep.ranksPerNode * sweep.network.nodes;
  std::string text =
      fmt::format("# peerlink plan: {}, {}, {} rank(s){}: {} x {} from {} ({}); PREDICTED, not measured\n",
                  collectiveName(sweep.collective), dataTypeName(sweep.type), ranks,
                  sweep.network.nodes > 1 ? fmt::format(" on {} nodes", sweep.network.nodes) : "", sweep.ranksPerNode,
                  sweep.gpuName, sweep.topology,
                  sweep.throughHost  ? "through host memory"
                  : sweep.nvlinkMesh ? "an NVLink mesh"
                                     : "not an NVLink mesh");
  if (sweep.throughHost) {
    text +=
        "# some pair of GPUs lacks peer access (or PEERLINK_COLL_HOST_STAGED names it): every call goes through host "
        "memory, each GPU's PCIe link to and from the host carrying it (docs/collectives.md, \"Machines without "
        "P2P\")\n";
  }
  if (sweep.network.nodes > 1) {
    const std::string path =
        sweep.network.path == plan::NetworkPath::Staged
            ? fmt::format(
                  "MPI's staged path, no GPUDirect RDMA: pieces of {} MiB copied to pinned host memory and "
                  "back, {} in flight, --net-path staged",
                  sweep.network.chunkBytes >> 20, kPiecesInFlight)
            : std::string("GPUDirect RDMA assumed");
    text += fmt::format(
        "# between nodes: {} NIC(s) per node of {:g} Gb/s, {:g} us per message ({}); within a node: the kernels "
        "peerlink chooses there\n",
        sweep.network.nicsPerNode > 0 ? sweep.network.nicsPerNode : sweep.ranksPerNode, sweep.network.nicGbps,
        sweep.network.nicLatencyUs, path);
  }
  if (sweep.mode.processes > 1) {
    const char* copies = sweep.mode.registered ? ""
                         : sweep.mode.stageOwnParts
                             ? "; each rank copies only the parts its peers touch, its own stay in the caller's "
                               "buffers (PEERLINK_COLL_STAGE_COPIES=PEERS)"
                             : "; each rank copies every byte in and out (PEERLINK_COLL_STAGE_COPIES=ALL)";
    const std::string ring = arenaRingLine(sweep.mode, sweep.collective, sweep.ranksPerNode);
    const std::string staged =
        sweep.mode.serialStaging
            ? "staged through the windows, each chunk's copies and kernel one after another "
              "(PEERLINK_COLL_STAGE_UNREGISTERED=SERIAL)"
            : "staged through the windows (copies in and out beside the kernels of the chunks before and after)";
    const bool allRing = sweep.mode.arenaRing == coll::ArenaRingMode::On && !ring.empty();
    text += fmt::format("# one process per GPU ({} processes), {}{}\n", sweep.mode.processes,
                        sweep.mode.registered
                            ? "buffers registered as windows (Communicator::registerWindow): no call is staged"
                            : "buffers not registered: calls whose kernels touch a peer's buffers " +
                                  (allRing ? ring : (ring.empty() ? "are " : ring) + staged),
                        allRing ? "" : copies);
  }
  text += modelLine(sweep);
  text += "# " + choiceSettingsLine(sweep.settings) + "\n";
  return text;
}

std::string nodeTable(const PlanSweep& sweep) {
  std::string text =
      "# Times per call in a CUDA graph (eager calls add the host's launch); * = the algorithm peerlink runs;\n"
      "# the bottleneck is the out-of-place call's: its busiest link or port and step, or latency.\n";
  text += fmt::format("#{:>62}{:>24}{:>25}\n", "", "out-of-place", "in-place");
  text += fmt::format("# {:>10}  {:>12}  {:>8}    {:<9}  {:<18}  {:>7}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {}\n",
                      "size", "count", "type", "algorithm", "kernel", "time", "algbw", "busbw", "time", "algbw",
                      "busbw", "bottleneck");
  text += fmt::format("# {:>10}  {:>12}  {:>8}    {:<9}  {:<18}  {:>7}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}\n", "(B)",
                      "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(GB/s)");
  for (const PlanRow& row : sweep.rows) {
    bool first = true;
    for (const plan::Candidate& c : row.candidates) {
      const std::string lead =
          first ? fmt::format("  {:>10}  {:>12}  {:>8}", row.size, row.count, ncclTestsTypeName(sweep.type))
                : fmt::format("  {:>10}  {:>12}  {:>8}", "", "", "");
      const std::string inPlace = c.inPlace ? timeCells(row, c.inPlace->timeUs, sweep.busFactor)
                                            : fmt::format("  {:>7}  {:>6}  {:>6}", "N/A", "N/A", "N/A");
      text += fmt::format("{}  {} {:<9}  {:<18}{}{}  {}\n", lead, c.chosen ? '*' : ' ',
                          algorithmName(c.outOfPlace.algorithm), kernelLabel(c.outOfPlace),
                          timeCells(row, c.outOfPlace.timeUs, sweep.busFactor), inPlace, remarks(c));
      first = false;
    }
  }
  return text;
}

std::string nodesTable(const PlanSweep& sweep) {
  std::string text =
      sweep.network.path == plan::NetworkPath::Staged
          ? "# Hierarchical plans (issue 36's shapes), out of place, eager. Within a node the phases run the kernels\n"
            "# peerlink chooses there; across nodes the transport's own algorithm on MPI's staged path.\n"
          : "# Hierarchical plans (issue 36's shapes), out of place; * = the quickest. Within a node the phases run "
            "the\n"
            "# kernels peerlink chooses there; across nodes the algorithm is MPI's, so each is shown.\n";
  text += fmt::format("# {:>10}  {:>12}  {:>8}    {:<46}  {:>7}  {:>6}  {:>6}  {}\n", "size", "count", "type",
                      "across nodes", "time", "algbw", "busbw", "slowest phase: bottleneck");
  text += fmt::format("# {:>10}  {:>12}  {:>8}    {:<46}  {:>7}  {:>6}  {:>6}\n", "(B)", "(elements)", "", "", "(us)",
                      "(GB/s)", "(GB/s)");
  for (const PlanRow& row : sweep.rows) {
    bool first = true;
    for (const plan::HierarchicalPrediction& h : row.acrossNodes) {
      const auto slowest = std::max_element(h.phases.begin(), h.phases.end(),
                                            [](const auto& a, const auto& b) { return a.timeUs < b.timeUs; });
      const auto across = std::find_if(h.phases.begin(), h.phases.end(), [](const plan::PhaseTime& phase) {
        return phase.name.find("across nodes") != std::string::npos;
      });
      const std::string lead =
          first ? fmt::format("  {:>10}  {:>12}  {:>8}", row.size, row.count, ncclTestsTypeName(sweep.type))
                : fmt::format("  {:>10}  {:>12}  {:>8}", "", "", "");
      text += fmt::format("{}  {} {:<46}{}  {} ({:.2f} us): {}\n", lead, h.fastest ? '*' : ' ',
                          across != h.phases.end() ? across->name : h.shape, timeCells(row, h.timeUs, sweep.busFactor),
                          slowest->name, slowest->timeUs, slowest->bottleneck);
      first = false;
    }
  }
  return text;
}

json predictionJson(const PlanRow& row, const plan::Prediction& p, double busFactor) {
  return {{"algorithm", algorithmName(p.algorithm)},
          {"kernel", kernelLabel(p)},
          {"time_us", p.timeUs},
          {"algbw_gbps", algbw(row, p.timeUs)},
          {"busbw_gbps", algbw(row, p.timeUs) * busFactor},
          {"fixed_us", p.fixedUs},
          {"data_us", p.dataUs},
          {"steps", p.steps},
          {"bottleneck", p.bottleneck},
          {"phase", p.phase}};
}

std::string signedPercent(double error) {
  return fmt::format("{:+.1f}%", 100 * error);
}

std::string cellName(const plan::CellCheck& c) {
  return fmt::format("{} {} B {}, {}", collectiveName(c.cell->call.collective), c.cell->size,
                     c.cell->call.inPlace ? "in place" : "out of place", ranName(c));
}

}  // namespace

std::string kernelLabel(const plan::Prediction& prediction) {
  if (prediction.arenaWay) return plan::arenaWayName(*prediction.arenaWay);
  return prediction.hostPath ? plan::hostPathName(*prediction.hostPath) : kernelName(prediction.kernel);
}

std::string ranName(const plan::CellCheck& check) {
  if (check.run != nullptr && check.run->nodes > 1) {
    const Collective c = check.cell->call.collective;
    return c == Collective::Broadcast || c == Collective::Reduce    ? "staged_chain"
           : c == Collective::AllToAll || c == Collective::SendRecv ? "staged_direct"
                                                                    : "staged_ring";
  }
  if (check.predicted.arenaWay) return plan::arenaWayName(*check.predicted.arenaWay);
  return check.predicted.hostPath ? plan::hostPathName(*check.predicted.hostPath) : kernelName(check.cell->ran.kernel);
}

std::string formatPlanText(const PlanSweep& sweep) {
  std::string text = header(sweep);
  text += sweep.network.nodes > 1 ? nodesTable(sweep) : nodeTable(sweep);
  return text;
}

json planToJson(const PlanSweep& sweep) {
  json rows = json::array();
  for (const PlanRow& row : sweep.rows) {
    json candidates = json::array();
    for (const plan::Candidate& c : row.candidates) {
      candidates.push_back(
          {{"chosen", c.chosen},
           {"reason", c.outOfPlace.hostPath || c.outOfPlace.arenaWay ? c.outOfPlace.phase : reasonText(c.choice)},
           {"out_of_place", predictionJson(row, c.outOfPlace, sweep.busFactor)},
           {"in_place", c.inPlace ? predictionJson(row, *c.inPlace, sweep.busFactor) : json()}});
    }
    json across = json::array();
    for (const plan::HierarchicalPrediction& h : row.acrossNodes) {
      json phases = json::array();
      for (const plan::PhaseTime& phase : h.phases) {
        phases.push_back({{"name", phase.name}, {"time_us", phase.timeUs}, {"bottleneck", phase.bottleneck}});
      }
      across.push_back({{"shape", h.shape},
                        {"fastest", h.fastest},
                        {"time_us", h.timeUs},
                        {"algbw_gbps", algbw(row, h.timeUs)},
                        {"busbw_gbps", algbw(row, h.timeUs) * sweep.busFactor},
                        {"phases", phases}});
    }
    json entry = {{"size", row.size}, {"count", row.count}, {"candidates", candidates}};
    if (sweep.network.nodes > 1) entry["across_nodes"] = across;
    rows.push_back(entry);
  }
  json network = {{"nodes", sweep.network.nodes}};
  if (sweep.network.nodes > 1) {
    network["path"] = plan::networkPathName(sweep.network.path);
    if (sweep.network.path == plan::NetworkPath::Staged) {
      network["chunk_bytes"] = sweep.network.chunkBytes;
      network["pieces_in_flight"] = kPiecesInFlight;
    }
    network["nic_gbps"] = sweep.network.nicGbps;
    network["nic_latency_us"] = sweep.network.nicLatencyUs;
    network["nics_per_node"] = sweep.network.nicsPerNode > 0 ? sweep.network.nicsPerNode : sweep.ranksPerNode;
  }
  return {{"schema", "peerlink.plan"},
          {"version", 1},
          {"predicted", true},
          {"collective", collectiveName(sweep.collective)},
          {"datatype", dataTypeName(sweep.type)},
          {"root", sweep.root},
          {"topology", sweep.topology},
          {"gpu", sweep.gpuName},
          {"ranks_per_node", sweep.ranksPerNode},
          {"nvlink_mesh", sweep.nvlinkMesh},
          {"through_host", sweep.throughHost},
          {"network", network},
          {"processes", sweep.mode.processes},
          {"registered", sweep.mode.registered},
          {"serial_staging", sweep.mode.serialStaging},
          {"staged_copies", sweep.mode.stageOwnParts ? "PEERS" : "ALL"},
          {"arena_ring", coll::arenaRingModeName(sweep.mode.arenaRing)},
          {"bus_factor", sweep.busFactor},
          {"settings", choiceSettingsJson(sweep.settings)},
          {"model", {{"origin", sweep.modelOrigin}, {"provenance", sweep.modelProvenance}}},
          {"rows", rows}};
}

namespace {

// Which run a table of a machine with several is, and how its processes drove the GPUs.
std::string runNote(const plan::MeasuredRun& run, const plan::MachineAccuracy& machine) {
  std::vector<std::string> notes;
  if (machine.runs.size() > 1) notes.push_back(std::filesystem::path(run.origin).filename().string());
  if (run.nodes > 1) {
    notes.push_back(fmt::format("{} nodes x {} rank(s), over MPI staged through pinned host memory, eager", run.nodes,
                                run.fabric.ranks()));
  } else if (run.mode.processes > 1 && run.fabric.throughHost) {
    notes.push_back("the host stages in shared memory");
  } else if (run.mode.processes > 1) {
    const bool ring = std::any_of(run.cells.begin(), run.cells.end(),
                                  [](const plan::Measurement& cell) { return cell.arenaRing.has_value(); });
    const std::string staged = run.mode.serialStaging   ? "staged, serially"
                               : run.mode.stageOwnParts ? "staged, the peers' parts only"
                                                        : "staged";
    notes.push_back(run.mode.registered ? "registered windows"
                    : ring ? "unregistered: large calls as the arena ring where the rows say, else " + staged
                           : "unregistered: large calls " + staged);
  }
  return notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, ", "));
}

}  // namespace

std::string formatCheckText(const std::vector<plan::MachineAccuracy>& machines, const std::string& modelOrigin) {
  const bool acrossNodes = std::any_of(machines.begin(), machines.end(), [](const plan::MachineAccuracy& m) {
    return std::any_of(m.cells.begin(), m.cells.end(), [](const plan::CellCheck& c) { return c.run->nodes > 1; });
  });
  std::string text =
      fmt::format("# peerlink plan --check: the model ({}) against measured runs, graph times{}\n", modelOrigin,
                  acrossNodes ? " (runs across nodes: eager, as their calls run; \"across\": their phases across nodes "
                                "alone)"
                              : "");
  for (const plan::MachineAccuracy& m : machines) {
    text += fmt::format("#\n# == {}: {} cells from {} run(s)\n", m.machine, m.cells.size(), m.runs.size());
    for (const std::string& run : m.runs) text += "#    " + run + "\n";
    for (const std::string& note : m.skipped) text += "#    skipped " + note + "\n";
    if (m.cells.empty()) continue;
    const plan::CellCheck& worst = m.cells[m.worst];
    text += fmt::format("# median |error| {:.1f}%, worst {} ({}: predicted {:.2f} us, measured {:.2f} us)\n",
                        100 * m.medianAbsError, signedPercent(worst.error), cellName(worst), worst.predicted.timeUs,
                        worst.cell->timeUs);
    if (m.acrossCells > 0) {
      const plan::CellCheck& w = m.cells[m.acrossWorst];
      text += fmt::format(
          "# across nodes: {} cells, median |error| {:.1f}%, worst {} ({}: predicted {:.2f} us, measured {:.2f} us)\n",
          m.acrossCells, 100 * m.acrossMedianAbsError, signedPercent(*w.acrossError), cellName(w), *w.acrossPredictedUs,
          *w.cell->acrossNodesUs);
    }
    // Per collective and run, a row per size: out of place then in place side by side.
    using Table = std::pair<int, const plan::MeasuredRun*>;
    std::map<std::pair<Table, std::size_t>, std::pair<const plan::CellCheck*, const plan::CellCheck*>> rows;
    std::map<Table, std::vector<double>> errors;
    for (const plan::CellCheck& c : m.cells) {
      const Table table{static_cast<int>(c.cell->call.collective), c.run};
      auto& row = rows[{table, c.cell->size}];
      (c.cell->call.inPlace ? row.second : row.first) = &c;
      errors[table].push_back(std::fabs(c.error));
    }
    Table shown{-1, nullptr};
    for (const auto& [key, row] : rows) {
      if (key.first != shown) {
        shown = key.first;
        std::vector<double>& e = errors[shown];
        std::sort(e.begin(), e.end());
        text += fmt::format("# {}{}: median |error| {:.1f}%, worst {:.1f}%\n",
                            collectiveName(static_cast<Collective>(shown.first)), runNote(*shown.second, m),
                            100 * e[e.size() / 2], 100 * e.back());
        text += fmt::format("# {:>10}  {:<19}  {:>9}  {:>9}  {:>7}  {:>9}  {:>9}  {:>7}", "size (B)", "kernel",
                            "measured", "predicted", "error", "meas. ip", "pred. ip", "error");
        if (shown.second->nodes > 1) {
          text += fmt::format("  {:>9}  {:>9}  {:>7}  {:>9}  {:>9}  {:>7}", "across", "predicted", "error", "across ip",
                              "pred. ip", "error");
        }
        text += "\n";
      }
      const auto cells = [](const plan::CellCheck* c) {
        return c == nullptr ? fmt::format("  {:>9}  {:>9}  {:>7}", "-", "-", "-")
                            : fmt::format("  {:>9}  {:>9}  {:>7}", formatNcclTestsTime(c->cell->timeUs),
                                          formatNcclTestsTime(c->predicted.timeUs), signedPercent(c->error));
      };
      const auto across = [](const plan::CellCheck* c) {
        return c == nullptr || !c->acrossError
                   ? fmt::format("  {:>9}  {:>9}  {:>7}", "-", "-", "-")
                   : fmt::format("  {:>9}  {:>9}  {:>7}", formatNcclTestsTime(*c->cell->acrossNodesUs),
                                 formatNcclTestsTime(*c->acrossPredictedUs), signedPercent(*c->acrossError));
      };
      const plan::CellCheck* any = row.first != nullptr ? row.first : row.second;
      text += fmt::format("  {:>10}  {:<19}{}{}", key.second, ranName(*any), cells(row.first), cells(row.second));
      if (any->run->nodes > 1) text += across(row.first) + across(row.second);
      text += "\n";
    }
  }
  return text;
}

json checkToJson(const std::vector<plan::MachineAccuracy>& machines, const std::string& modelOrigin) {
  json out = json::array();
  for (const plan::MachineAccuracy& m : machines) {
    json cells = json::array();
    for (const plan::CellCheck& c : m.cells) {
      cells.push_back({{"run", c.run->origin},
                       {"collective", collectiveName(c.cell->call.collective)},
                       {"size", c.cell->size},
                       {"count", c.cell->call.count},
                       {"in_place", c.cell->call.inPlace},
                       {"algorithm", algorithmName(c.cell->ran.algorithm)},
                       {"kernel", ranName(c)},
                       {"measured_us", c.cell->timeUs},
                       {"predicted_us", c.predicted.timeUs},
                       {"error", c.error}});
      if (c.acrossError) {
        cells.back()["across_nodes_measured_us"] = *c.cell->acrossNodesUs;
        cells.back()["across_nodes_predicted_us"] = *c.acrossPredictedUs;
        cells.back()["across_nodes_error"] = *c.acrossError;
      }
      if (c.run->nodes > 1) cells.back()["bottleneck"] = c.predicted.bottleneck;
    }
    json machine = {{"machine", m.machine}, {"runs", m.runs}, {"skipped", m.skipped}, {"cells", cells}};
    if (!m.cells.empty()) {
      machine["median_abs_error"] = m.medianAbsError;
      machine["worst"] = cells[m.worst];
    }
    if (m.acrossCells > 0) {
      machine["across_nodes_cells"] = m.acrossCells;
      machine["across_nodes_median_abs_error"] = m.acrossMedianAbsError;
      machine["across_nodes_worst"] = cells[m.acrossWorst];
    }
    out.push_back(machine);
  }
  return {{"schema", "peerlink.plan_check"}, {"version", 1}, {"model", modelOrigin}, {"machines", out}};
}

std::string formatModelText(const plan::CostModel& model) {
  std::string text = fmt::format("# step between ranks (a barrier): {:.3f} us\n", model.stepUs);
  text += fmt::format("# each peer (added to every launch): {:.3f} us\n", model.peerUs);
  text += fmt::format("# each process beyond the first (added to every launch, one process per GPU): {:.3f} us\n",
                      model.processUs);
  text += fmt::format(
      "# a staging copy (unregistered buffers across processes): {:.3f} us, {:.3f} of the memory's "
      "bandwidth, {} cells, {}\n",
      model.stagingCopy.launchUs, model.stagingCopy.efficiency, model.stagingCopy.cells, model.stagingCopy.source);
  text += fmt::format("# {:<19}  {:<14}  {:>9}  {:>10}  {:>5}  {}\n", "kernel", "collective", "launch us", "efficiency",
                      "cells", "source");
  const auto line = [](const char* kernel, const char* collective, const plan::KernelCost& cost) {
    return fmt::format("  {:<19}  {:<14}  {:>9.3f}  {:>10.3f}  {:>5}  {}\n", kernel, collective, cost.launchUs,
                       cost.efficiency, cost.cells, cost.source);
  };
  for (const KernelInfo& info : kernelRegistry()) {
    const plan::KernelCosts& costs = model.costs(info.kernel);
    text += line(info.name, "(all)", costs.all);
    for (const auto& [collective, cost] : costs.byCollective) text += line("", collectiveName(collective), cost);
  }
  text += fmt::format(
      "# through host memory (efficiency: of the GPUs' PCIe links to and from the host); a staged plan's step: {:.3f} "
      "us; each process beyond the first: {:.3f} us\n",
      model.hostStepUs, model.hostProcessUs);
  for (std::size_t i = 0; i < plan::kHostPathCount; ++i) {
    const auto path = static_cast<plan::HostPath>(i);
    const plan::KernelCosts& costs = model.costs(path);
    text += line(plan::hostPathName(path), "(all)", costs.all);
    for (const auto& [collective, cost] : costs.byCollective) text += line("", collectiveName(collective), cost);
  }
  text += fmt::format(
      "# a call across nodes on MPI's staged path, beyond its copies (plan_steps' costs) and messages: {:.3f} us, {} "
      "cells\n",
      model.netCallUs, model.netCallCells);
  text += fmt::format(
      "# the arena ring (unregistered buffers across processes; efficiency: of the link model's bandwidth); a slot "
      "a block moves: {:.3f} us\n",
      model.arenaSlotUs);
  for (std::size_t i = 0; i < plan::kArenaWayCount; ++i) {
    const auto way = static_cast<plan::ArenaWay>(i);
    const plan::KernelCosts& costs = model.costs(way);
    text += line(plan::arenaWayName(way), "(all)", costs.all);
    for (const auto& [collective, cost] : costs.byCollective) text += line("", collectiveName(collective), cost);
  }
  return text;
}

}  // namespace peerlink::cli
