#include "doctor_rdma_format.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "doctor_format.hpp"
#include "matrix_format.hpp"

namespace peerlink::cli {
namespace {

using nlohmann::json;

json optionalJson(const std::optional<bool>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string gpuBusId(const Topology& topology, int gpu) {
  return gpu >= 0 && static_cast<std::size_t>(gpu) < topology.gpus.size()
             ? topology.gpus[static_cast<std::size_t>(gpu)].pciBusId
             : std::string();
}

std::string netdevWords(const RdmaNic& nic) {
  std::vector<std::string> words;
  for (const RdmaNetdev& netdev : nic.netdevs) {
    std::string word = netdev.name + " " + (netdev.operstate.empty() ? "?" : netdev.operstate);
    if (netdev.speedMbps > 0) word += fmt::format(" {:g} Gb/s", static_cast<double>(netdev.speedMbps) / 1000);
    words.push_back(word);
  }
  return words.empty() ? "-" : fmt::format("{}", fmt::join(words, ", "));
}

std::string nicTable(const RdmaSnapshot& s) {
  std::vector<std::vector<std::string>> rows;
  for (const RdmaNic& nic : s.nics) {
    const std::string bus =
        !nic.pciBusId.empty() ? nic.pciBusId : "software" + (nic.parent.empty() ? "" : " over " + nic.parent);
    const std::string numa = nic.numaNode >= 0 ? std::to_string(nic.numaNode) : "?";
    if (nic.ports.empty()) rows.push_back({nic.name, bus, numa, "-", "-", "-", netdevWords(nic)});
    for (const RdmaPort& port : nic.ports) {
      std::string state = port.state.empty() ? "?" : port.state;
      if (port.state != "ACTIVE" && !port.physicalState.empty()) state += " (" + port.physicalState + ")";
      rows.push_back({nic.name, bus, numa, std::to_string(port.number), state, port.rate.empty() ? "?" : port.rate,
                      netdevWords(nic)});
    }
  }
  return formatTable({"NIC", "bus id", "NUMA", "port", "state", "rate", "netdev"}, rows);
}

std::string nearestTable(const Topology& topology, const RdmaReadiness& r) {
  std::vector<std::vector<std::string>> rows;
  for (const NearestNics& n : r.nearest) {
    std::vector<std::string> names;
    for (int k : n.nics) names.push_back(r.snapshot.nics[static_cast<std::size_t>(k)].name);
    rows.push_back({std::to_string(n.gpu), gpuBusId(topology, n.gpu),
                    names.empty() ? "-" : fmt::format("{}", fmt::join(names, ", ")),
                    n.path ? pathClassName(*n.path) : "?"});
  }
  return formatTable({"GPU", "bus id", "nearest RDMA NIC", "path"}, rows);
}

std::string mpiLine(const MpiCudaSupport& mpi) {
  const std::string aware = !mpi.cudaAware   ? "CUDA awareness unknown"
                            : *mpi.cudaAware ? "CUDA-aware"
                                             : "not CUDA-aware";
  return fmt::format("MPI: {}: {} ({}: {})\n", mpi.implementation, aware, mpi.tool, mpi.evidence);
}

json nicToJson(const RdmaNic& nic) {
  json ports = json::array();
  for (const RdmaPort& port : nic.ports) {
    ports.push_back({{"number", port.number},
                     {"state", port.state},
                     {"physical_state", port.physicalState},
                     {"link_layer", port.linkLayer},
                     {"rate", port.rate},
                     {"gbps", port.gbps}});
  }
  json netdevs = json::array();
  for (const RdmaNetdev& netdev : nic.netdevs) {
    netdevs.push_back({{"name", netdev.name},
                       {"operstate", netdev.operstate},
                       {"speed_mbps", netdev.speedMbps >= 0 ? json(netdev.speedMbps) : json(nullptr)}});
  }
  return {{"name", nic.name},
          {"pci_bus_id", nic.pciBusId},
          {"software", nic.pciBusId.empty()},
          {"parent", nic.parent},
          {"pci_path", nic.pciPath},
          {"numa_node", nic.numaNode},
          {"ports", ports},
          {"netdevs", netdevs},
          {"verbs_device", nic.verbsDevice},
          {"verbs_node_present", optionalJson(nic.verbsNodePresent)}};
}

json registrationToJson(const RdmaReadiness& r) {
  const RdmaSnapshot& s = r.snapshot;
  json gpus = json::array();
  for (const GpuRdmaAttributes& gpu : s.gpus) {
    gpus.push_back({{"gpudirect_rdma_supported", optionalJson(gpu.gpuDirectRdma)},
                    {"dma_buf_supported", optionalJson(gpu.dmaBuf)}});
  }
  return {{"usable", optionalJson(r.memoryRegistration)},
          {"how", r.registration},
          {"peermem_loaded", optionalJson(s.peermemLoaded)},
          {"peermem_module", s.peermemModule},
          {"kernel_release", s.kernelRelease},
          {"kernel_config_file", s.kernelConfigFile},
          {"config_dma_shared_buffer", optionalJson(s.configDmaSharedBuffer)},
          {"config_infiniband_user_mem", optionalJson(s.configInfinibandUserMem)},
          {"nvidia_driver_version", s.nvidiaDriverVersion},
          {"nvidia_open_modules", optionalJson(s.nvidiaOpenModules)},
          {"gpus", gpus}};
}

}  // namespace

std::string formatRdmaText(const Topology& topology, const RdmaReadiness& r, bool inExitCode) {
  if (!r.applicable) return fmt::format("\nGPUDirect RDMA: {}\n", r.summary);
  std::string out = fmt::format("\nGPUDirect RDMA, between machines{}: {}\n",
                                inExitCode ? "" : " (not part of the exit code)", verdictName(r.overall));
  out += nicTable(r.snapshot);
  if (!r.nearest.empty()) out += "\n" + nearestTable(topology, r);
  out += fmt::format("\nGPU memory registration: {}\n", r.registration);
  for (const MpiCudaSupport& mpi : r.snapshot.mpis) out += mpiLine(mpi);
  if (r.snapshot.mpis.empty()) out += "MPI: no MPI tool on PATH\n";
  out += findingsText(r.findings, "GPUDirect RDMA findings");
  // Without root every bridge's ACS control is unreadable: a few lines say what, --json has them all.
  constexpr std::size_t kShown = 3;
  const auto& unreadable = r.snapshot.unreadable;
  if (!unreadable.empty()) out += fmt::format("Not read, so unknown ({}):\n", unreadable.size());
  for (std::size_t i = 0; i < unreadable.size() && i < kShown; ++i) out += fmt::format("  - {}\n", unreadable[i]);
  if (unreadable.size() > kShown)
    out += fmt::format("  - and {} more (--json lists them)\n", unreadable.size() - kShown);
  return out;
}

json rdmaToJson(const Topology& topology, const RdmaReadiness& r) {
  const RdmaSnapshot& s = r.snapshot;
  json nics = json::array();
  for (const RdmaNic& nic : s.nics) nics.push_back(nicToJson(nic));
  const auto nicName = [&](int k) { return s.nics[static_cast<std::size_t>(k)].name; };
  const auto pathJson = [](const std::optional<PathClass>& path) {
    return path ? json(pathClassName(*path)) : json(nullptr);
  };
  json paths = json::array();
  for (const GpuNicPath& p : r.paths) {
    paths.push_back({{"gpu", p.gpu},
                     {"gpu_bus_id", gpuBusId(topology, p.gpu)},
                     {"nic", nicName(p.nic)},
                     {"path", pathJson(p.path)}});
  }
  json nearest = json::array();
  for (const NearestNics& n : r.nearest) {
    json names = json::array();
    for (int k : n.nics) names.push_back(nicName(k));
    nearest.push_back(
        {{"gpu", n.gpu}, {"gpu_bus_id", gpuBusId(topology, n.gpu)}, {"nics", names}, {"path", pathJson(n.path)}});
  }
  json mpis = json::array();
  for (const MpiCudaSupport& mpi : s.mpis) {
    mpis.push_back({{"implementation", mpi.implementation},
                    {"tool", mpi.tool},
                    {"cuda_aware", optionalJson(mpi.cudaAware)},
                    {"evidence", mpi.evidence}});
  }
  json findings = json::array();
  for (const Finding& finding : r.findings) findings.push_back(findingToJson(finding));
  const bool unlimited = s.memlockBytes == std::numeric_limits<std::uint64_t>::max();
  return {{"applicable", r.applicable},
          {"overall", verdictName(r.overall)},
          {"summary", r.summary},
          {"class_directory", s.classDirectory},
          {"nics", nics},
          {"gpu_nic_paths", paths},
          {"nearest", nearest},
          {"memory_registration", registrationToJson(r)},
          {"memlock_bytes", s.memlockBytes && !unlimited ? json(*s.memlockBytes) : json(nullptr)},
          {"memlock_unlimited", s.memlockBytes ? json(unlimited) : json(nullptr)},
          {"ipc_lock_capability", optionalJson(s.ipcLockCapability)},
          {"mpi", mpis},
          {"mpi_tools_tried", s.mpiToolsTried},
          {"findings", findings},
          {"unreadable", s.unreadable}};
}

}  // namespace peerlink::cli
