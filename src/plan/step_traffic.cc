#include "plan/step_traffic.hpp"

#include <set>
#include <tuple>

#include <fmt/format.h>

#include "peerlink/error.hpp"

namespace peerlink::plan {
namespace {

class StepLoader {
 public:
  StepLoader(const Fabric& fabric, double wireFactor, std::size_t elementBytes, StepTraffic& step)
      : fabric_(fabric), wire_(wireFactor), elementBytes_(elementBytes), step_(step) {}

  void add(const coll::Transfer& transfer) {
    (transfer.kind == coll::TransferKind::Copy ? step_.copies : step_.reductions) = true;
    const double bytes = static_cast<double>(transfer.count * elementBytes_);
    for (const coll::BufferRef& src : transfer.srcs) {
      const auto key =
          std::make_tuple(transfer.executor, src.rank, static_cast<int>(src.buffer), src.offset, transfer.count);
      if (!read_.insert(key).second) continue;  // read once, stored several times
      flow(src.rank, transfer.executor, bytes);
    }
    flow(transfer.executor, transfer.dst.rank, bytes);
  }

 private:
  // Bytes from rank `from` to rank `to`: across their route, or through the memory of one rank.
  void flow(int from, int to, double bytes) {
    if (from == to || fabric_.route(from, to).empty()) {
      at(fabric_.memory[static_cast<std::size_t>(from)]) += bytes;
      return;
    }
    for (const int resource : fabric_.route(from, to)) at(resource) += bytes * wire_;
  }

  double& at(int resource) { return step_.bytes[static_cast<std::size_t>(resource)]; }

  const Fabric& fabric_;
  double wire_;
  std::size_t elementBytes_;
  StepTraffic& step_;
  std::set<std::tuple<int, int, int, std::size_t, std::size_t>> read_;
};

}  // namespace

std::vector<StepTraffic> stepTraffic(const coll::Plan& plan, const Fabric& fabric, double wireFactor) {
  if (plan.nranks > fabric.ranks()) {
    throw Error(ErrorCode::InvalidUsage,
                fmt::format("a plan of {} ranks over a fabric of {} GPUs", plan.nranks, fabric.ranks()));
  }
  const std::size_t elementBytes = dataTypeSize(plan.type);
  std::vector<StepTraffic> steps;
  for (const coll::Step& step : plan.steps) {
    StepTraffic traffic;
    traffic.bytes.assign(fabric.resources.size(), 0.0);
    StepLoader loader(fabric, wireFactor, elementBytes, traffic);
    for (const coll::Transfer& transfer : step.transfers) loader.add(transfer);
    steps.push_back(std::move(traffic));
  }
  return steps;
}

std::string stepKind(const StepTraffic& step) {
  if (step.copies && step.reductions) return "copies and reductions";
  return step.reductions ? "reductions" : "copies";
}

}  // namespace peerlink::plan
