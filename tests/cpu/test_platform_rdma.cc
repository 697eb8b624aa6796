// GPUDirect RDMA readiness on the fake machines of tests/fixtures/doctor (rdma_* built by generate.py and
// rdma_trees.py there; README.md says what each holds), and its decisions on snapshots changed here.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doctor/rdma_checks.hpp"
#include "doctor/rdma_snapshot.hpp"
#include "finding_test_support.hpp"
#include "peerlink/rdma_readiness.hpp"
#include "peerlink/topology.hpp"
#include "scratch_dir.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = PEERLINK_FIXTURES_DIR;
const std::string kDoctor = kFixtures + "/doctor/";

// The topology of a fixture: its own topology.json, or the topology fixture of the same machine.
Topology topologyOf(const std::string& name) {
  if (fs::exists(kDoctor + name + "/topology.json")) return loadTopologyFile(kDoctor + name + "/topology.json");
  const std::string shared = name == "rdma_other_socket"  ? "dual_socket_pcie"
                             : name == "rdma_soft_roce"   ? "vm_flat_numa_unknown"
                             : name == "plx_acs_redirect" ? "dual_socket_pcie"
                                                          : "h100x8_nvswitch";  // rdma_dgx, rdma_container
  return loadTopologyFile(kFixtures + "/topologies/" + shared + ".json");
}

RdmaReadiness check(const std::string& name) {
  return checkRdmaReadiness(topologyOf(name), rdmaOptionsUnder(kDoctor + name));
}

std::vector<std::string> nicNames(const RdmaReadiness& r, const NearestNics& n) {
  std::vector<std::string> names;
  for (int k : n.nics) names.push_back(r.snapshot.nics[static_cast<std::size_t>(k)].name);
  return names;
}

// ---- what the reader takes from the trees -----------------------------------------------------------

TEST(ReadRdmaSnapshot, DgxEveryNicWithItsPortNetdevPathAndVerbsDevice) {
  const Topology topology = topologyOf("rdma_dgx");
  const RdmaSnapshot s = readRdmaSnapshot(topology, rdmaOptionsUnder(kDoctor + "rdma_dgx"));
  EXPECT_TRUE(s.unreadable.empty()) << ::testing::PrintToString(s.unreadable);
  EXPECT_TRUE(s.classPresent);
  ASSERT_EQ(s.nics.size(), 8u);
  const RdmaNic& first = s.nics[0];
  EXPECT_EQ(first.name, "mlx5_0");
  EXPECT_EQ(first.pciBusId, "0000:19:00.0");
  EXPECT_EQ(first.pciPath,
            (std::vector<std::string>{"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:02.0", "0000:19:00.0"}));
  EXPECT_EQ(first.numaNode, 0);
  EXPECT_EQ(s.nics[7].numaNode, 1);
  ASSERT_EQ(first.ports.size(), 1u);
  EXPECT_EQ(first.ports[0].number, 1);
  EXPECT_EQ(first.ports[0].state, "ACTIVE");
  EXPECT_EQ(first.ports[0].physicalState, "LinkUp");
  EXPECT_EQ(first.ports[0].linkLayer, "InfiniBand");
  EXPECT_EQ(first.ports[0].rate, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(first.ports[0].gbps, 400);
  ASSERT_EQ(first.netdevs.size(), 1u);
  EXPECT_EQ(first.netdevs[0].name, "ibp25s0");
  EXPECT_EQ(first.netdevs[0].operstate, "up");
  EXPECT_EQ(first.netdevs[0].speedMbps, 400000);
  EXPECT_EQ(first.verbsDevice, "uverbs0");
  EXPECT_EQ(first.verbsNodePresent, true);
  EXPECT_EQ(s.peermemLoaded, true);
  EXPECT_EQ(s.peermemModule, "nvidia_peermem");
  EXPECT_EQ(s.kernelRelease, "5.15.0-1042-nvidia");
  EXPECT_EQ(s.configDmaSharedBuffer, true);
  EXPECT_EQ(s.configInfinibandUserMem, true);
  EXPECT_EQ(s.nvidiaOpenModules, true);
  EXPECT_EQ(s.nvidiaDriverVersion, "535.161.08");
  EXPECT_EQ(s.memlockBytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(s.ipcLockCapability, true);
  // Each GPU and its NIC part at two downstream ports of their switch: 16 bridges, ACS off on all.
  ASSERT_EQ(s.bridges.size(), 16u);
  for (const auto& b : s.bridges) EXPECT_TRUE(b.acsKnown && !b.acsRedirect) << b.busId;
}

TEST(ReadRdmaSnapshot, ContainerMissesTheVerbsNodesMemlockAndAcs) {
  const RdmaSnapshot s = check("rdma_container").snapshot;
  ASSERT_EQ(s.nics.size(), 8u);
  for (const RdmaNic& nic : s.nics) {
    EXPECT_FALSE(nic.verbsDevice.empty()) << nic.name;
    EXPECT_EQ(nic.verbsNodePresent, false) << nic.name;
  }
  EXPECT_EQ(s.memlockBytes, 65536u);
  EXPECT_EQ(s.ipcLockCapability, false);
  EXPECT_TRUE(s.kernelConfigFile.empty());
  EXPECT_FALSE(s.configDmaSharedBuffer.has_value());
  ASSERT_EQ(s.unreadable.size(), 17u) << ::testing::PrintToString(s.unreadable);  // the config, 16 bridges
  EXPECT_TRUE(has(s.unreadable[0], "kernel configuration")) << s.unreadable[0];
  EXPECT_TRUE(has(s.unreadable[1], "64 of 4096 bytes")) << s.unreadable[1];
  EXPECT_TRUE(s.mpis.empty());
  EXPECT_EQ(s.mpiToolsTried, (std::vector<std::string>{"ompi_info", "mpichversion"}));
}

TEST(ReadRdmaSnapshot, WithoutNicsReadsNothingElse) {
  const RdmaSnapshot s = check("plx_acs_redirect").snapshot;
  EXPECT_FALSE(s.classPresent);
  EXPECT_TRUE(s.nics.empty());
  EXPECT_TRUE(s.unreadable.empty()) << ::testing::PrintToString(s.unreadable);
  EXPECT_FALSE(s.peermemLoaded.has_value());
  EXPECT_TRUE(s.kernelRelease.empty());
}

TEST(ReadRdmaSnapshot, MissingTreesNeverThrow) {
  RdmaReadinessOptions options = rdmaOptionsUnder(kDoctor + "does_not_exist");
  RdmaReadiness r;
  ASSERT_NO_THROW(r = checkRdmaReadiness(topologyOf("rdma_dgx"), options));
  EXPECT_FALSE(r.applicable);
  EXPECT_TRUE(has(r.summary, "does not exist")) << r.summary;
}

// ---- the fixtures' conclusions ------------------------------------------------------------------------

TEST(CheckRdmaReadiness, DgxLikeNodeEachGpuBesideItsOwnNic) {
  const RdmaReadiness r = check("rdma_dgx");
  EXPECT_TRUE(r.applicable);
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(codes(r.findings));
  EXPECT_EQ(r.overall, Verdict::Ok);
  EXPECT_EQ(r.paths.size(), 64u);
  ASSERT_EQ(r.nearest.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.nearest[static_cast<std::size_t>(i)].path, PathClass::PIX) << i;
    EXPECT_EQ(nicNames(r, r.nearest[static_cast<std::size_t>(i)]),
              (std::vector<std::string>{"mlx5_" + std::to_string(i)}));
  }
  // A NIC on the other socket of GPU 0 is SYS; one on its own socket's other host bridge NODE.
  const auto path = [&](int gpu, int nic) {
    for (const GpuNicPath& p : r.paths) {
      if (p.gpu == gpu && p.nic == nic) return p.path;
    }
    return std::optional<PathClass>();
  };
  EXPECT_EQ(path(0, 7), PathClass::SYS);
  EXPECT_EQ(path(0, 1), PathClass::NODE);
  EXPECT_EQ(r.memoryRegistration, true);
  EXPECT_EQ(r.registration, "nvidia_peermem is loaded");
  ASSERT_EQ(r.snapshot.mpis.size(), 1u);
  EXPECT_EQ(r.snapshot.mpis[0].cudaAware, true);
  EXPECT_TRUE(has(r.summary, "8 RDMA NICs, 8 with an active port; nearest NIC per GPU: 8 PIX")) << r.summary;
}

TEST(CheckRdmaReadiness, NicOnTheOtherSocketMakesPoorPairs) {
  const RdmaReadiness r = check("rdma_other_socket");
  EXPECT_EQ(codes(r.findings), (Codes{"mpi_cuda_unknown", "rdma_acs_redirect", "rdma_nic_other_socket",
                                      "rdma_nic_other_socket", "rdma_nic_other_socket", "rdma_nic_through_cpu"}));
  EXPECT_EQ(r.overall, Verdict::Broken);
  EXPECT_EQ(r.findings[0].code, "rdma_acs_redirect");  // most severe first
  const auto far = all(r.findings, "rdma_nic_other_socket");
  ASSERT_EQ(far.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const Finding& f = far[static_cast<std::size_t>(i)];
    EXPECT_EQ(f.severity, Verdict::Degraded);
    EXPECT_EQ(f.gpus, (Gpus{i}));
    EXPECT_TRUE(has(f.summary, "mlx5_0 (0000:82:00.0) is on the other CPU socket (SYS)")) << f.summary;
    EXPECT_TRUE(has(f.summary, "GPU-NIC pair is poor")) << f.summary;
  }
  const Finding near = only(r.findings, "rdma_nic_through_cpu");
  EXPECT_EQ(near.gpus, (Gpus{3}));
  EXPECT_EQ(near.severity, Verdict::Ok);
  EXPECT_TRUE(has(near.summary, "(PHB)")) << near.summary;
  const Finding acs = only(r.findings, "rdma_acs_redirect");
  EXPECT_EQ(acs.severity, Verdict::Broken);
  EXPECT_EQ(acs.gpus, (Gpus{3}));
  EXPECT_TRUE(has(acs.summary, "GPU 3 (0000:81:00.0) <-> mlx5_0 (0000:82:00.0)")) << acs.summary;
  EXPECT_TRUE(has(acs.summary, "0000:80:01.0 and 0000:80:03.0")) << acs.summary;
  EXPECT_TRUE(has(acs.fix, "setpci -s 0000:80:03.0 ECAP_ACS+6.w=0000")) << acs.fix;
  EXPECT_TRUE(has(acs.fix, "pci=disable_acs_redir=0000:80:01.0;0000:80:03.0")) << acs.fix;
  EXPECT_EQ(r.snapshot.nics[0].ports[0].linkLayer, "Ethernet");
  const Finding mpi = only(r.findings, "mpi_cuda_unknown");
  EXPECT_TRUE(has(mpi.summary, "MPICH 4.2.0")) << mpi.summary;
}

TEST(CheckRdmaReadiness, PeermemMissingAndNoDmaBufSaysEachReasonAndFix) {
  const RdmaReadiness r = check("rdma_peermem_missing");
  EXPECT_EQ(codes(r.findings), (Codes{"mpi_not_cuda_aware", "rdma_peermem_missing"}));
  EXPECT_EQ(r.overall, Verdict::Degraded);
  EXPECT_EQ(r.memoryRegistration, false);
  const Finding f = only(r.findings, "rdma_peermem_missing");
  EXPECT_EQ(f.severity, Verdict::Degraded);
  EXPECT_TRUE(has(f.summary, "nvidia_peermem is not loaded and DMA-BUF cannot replace it")) << f.summary;
  EXPECT_TRUE(has(f.summary, "the kernel is 5.4.0-150-generic")) << f.summary;
  EXPECT_TRUE(has(f.summary, "(470.256.02) are the proprietary ones")) << f.summary;
  EXPECT_TRUE(has(f.summary, "the NICs cannot register GPU memory")) << f.summary;
  EXPECT_TRUE(has(f.fix, "sudo modprobe nvidia-peermem")) << f.fix;
  EXPECT_TRUE(has(f.fix, "boot a kernel of 5.12 or later")) << f.fix;
  EXPECT_TRUE(has(f.fix, "open kernel modules")) << f.fix;
  for (const NearestNics& n : r.nearest) EXPECT_EQ(n.path, PathClass::PIX) << n.gpu;
  const Finding mpi = only(r.findings, "mpi_not_cuda_aware");
  EXPECT_TRUE(has(mpi.summary, "Open MPI 4.1.6, not CUDA-aware (ompi_info: opal_built_with_cuda_support false)"))
      << mpi.summary;
}

TEST(CheckRdmaReadiness, LinksDownNotConfiguredAndSlow) {
  const RdmaReadiness r = check("rdma_link_down");
  EXPECT_EQ(codes(r.findings), (Codes{"rdma_nic_through_cpu", "rdma_nic_through_cpu", "rdma_port_down",
                                      "rdma_port_down", "rdma_rate_differs"}));
  EXPECT_EQ(r.overall, Verdict::Degraded);
  const auto down = all(r.findings, "rdma_port_down");
  ASSERT_EQ(down.size(), 2u);
  EXPECT_TRUE(has(down[0].summary, "mlx5_1 (0000:3a:00.0) port 1 is DOWN: no link (physical state Polling)"))
      << down[0].summary;
  EXPECT_TRUE(has(down[0].fix, "mlxlink -d 0000:3a:00.0")) << down[0].fix;
  EXPECT_TRUE(has(down[1].summary, "mlx5_2 (0000:3b:00.0) port 1 is INIT")) << down[1].summary;
  EXPECT_TRUE(has(down[1].fix, "subnet manager")) << down[1].fix;
  for (const Finding& f : down) {
    EXPECT_EQ(f.severity, Verdict::Degraded);  // mlx5_0 still has active ports
    EXPECT_EQ(f.gpus, (Gpus{1}));              // both are GPU 1's nearest
  }
  const Finding slow = only(r.findings, "rdma_rate_differs");
  EXPECT_TRUE(has(slow.summary, "mlx5_0 (0000:18:00.0) port 2 runs at 200 Gb/sec (4X HDR)")) << slow.summary;
  EXPECT_TRUE(has(slow.summary, "400 Gb/sec")) << slow.summary;
  EXPECT_EQ(slow.gpus, (Gpus{0}));
  ASSERT_EQ(r.nearest.size(), 2u);
  EXPECT_EQ(nicNames(r, r.nearest[0]), (std::vector<std::string>{"mlx5_0"}));
  EXPECT_EQ(nicNames(r, r.nearest[1]), (std::vector<std::string>{"mlx5_1", "mlx5_2"}));  // a tie lists both
  EXPECT_EQ(r.nearest[1].path, PathClass::PHB);
}

TEST(CheckRdmaReadiness, EveryPortDownIsBroken) {
  const Topology topology = topologyOf("rdma_link_down");
  RdmaSnapshot s = readRdmaSnapshot(topology, rdmaOptionsUnder(kDoctor + "rdma_link_down"));
  for (RdmaNic& nic : s.nics) {
    for (RdmaPort& port : nic.ports) port.state = "DOWN";
  }
  const RdmaReadiness r = decideRdmaReadiness(topology, s);
  const auto down = all(r.findings, "rdma_port_down");
  ASSERT_EQ(down.size(), 4u);
  for (const Finding& f : down) {
    EXPECT_EQ(f.severity, Verdict::Broken);
    EXPECT_TRUE(has(f.summary, "no RDMA NIC here has an active port")) << f.summary;
  }
  EXPECT_EQ(r.overall, Verdict::Broken);
  EXPECT_TRUE(all(r.findings, "rdma_rate_differs").empty());  // rates of ports that are down do not count
}

TEST(CheckRdmaReadiness, ContainerWithoutRdmaDevicesOrMemlock) {
  const RdmaReadiness r = check("rdma_container");
  Codes expected(8, "rdma_verbs_unavailable");
  expected.insert(expected.end(), {"mpi_not_found", "rdma_acs_unknown", "rdma_memlock_limit"});
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(codes(r.findings), expected);
  const Finding verbs = all(r.findings, "rdma_verbs_unavailable")[0];
  EXPECT_TRUE(has(verbs.summary, "/dev/infiniband/uverbs0 does not exist here")) << verbs.summary;
  EXPECT_TRUE(has(verbs.fix, "--device=/dev/infiniband")) << verbs.fix;
  EXPECT_EQ(verbs.gpus, (Gpus{0}));
  const Finding memlock = only(r.findings, "rdma_memlock_limit");
  EXPECT_TRUE(has(memlock.summary, "64 KiB")) << memlock.summary;
  const Finding acs = only(r.findings, "rdma_acs_unknown");
  EXPECT_EQ(acs.gpus, (Gpus{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(has(acs.summary, "0000:17:00.0, 0000:17:02.0")) << acs.summary;
  EXPECT_TRUE(has(only(r.findings, "mpi_not_found").summary, "ompi_info, mpichversion"));
  // The kernel configuration is missing, but nvidia_peermem answers for registration.
  EXPECT_EQ(r.memoryRegistration, true);
}

TEST(CheckRdmaReadiness, SoftRoceOnlyIsNoNicInOneLine) {
  const RdmaReadiness r = check("rdma_soft_roce");
  EXPECT_FALSE(r.applicable);
  EXPECT_EQ(codes(r.findings), (Codes{"mpi_not_found", "rdma_no_nic"}));
  EXPECT_EQ(r.overall, Verdict::Ok);
  ASSERT_EQ(r.snapshot.nics.size(), 1u);
  EXPECT_TRUE(r.snapshot.nics[0].pciBusId.empty());
  EXPECT_EQ(r.snapshot.nics[0].parent, "eth0");
  EXPECT_TRUE(r.paths.empty());
  EXPECT_EQ(r.summary,
            "no RDMA NIC with a PCI device (software RDMA only: rxe0 over eth0, which cannot reach GPU memory); MPI: "
            "no MPI tool on PATH");
  EXPECT_EQ(r.summary.find('\n'), std::string::npos);
}

TEST(CheckRdmaReadiness, NoNicAtAllAndAnEmptyClass) {
  const RdmaReadiness none = check("plx_acs_redirect");
  EXPECT_FALSE(none.applicable);
  EXPECT_EQ(codes(none.findings), (Codes{"mpi_not_found", "rdma_no_nic"}));
  EXPECT_TRUE(has(none.summary, "no RDMA NIC (" + kDoctor + "plx_acs_redirect/sys/class/infiniband does not exist)"))
      << none.summary;
  EXPECT_EQ(only(none.findings, "rdma_no_nic").severity, Verdict::Ok);

  ScratchDir root;
  fs::create_directories(root / "sys/class/infiniband");
  const RdmaReadiness empty = checkRdmaReadiness(Topology{}, rdmaOptionsUnder(root / ""));
  EXPECT_FALSE(empty.applicable);
  EXPECT_TRUE(has(empty.summary, "class/infiniband is empty)")) << empty.summary;
}

// This machine: no NIC and an Open MPI without CUDA. GPU data goes through host memory either way, so the MPI
// is a note and the section stays OK; with a NIC the same MPI costs GPUDirect RDMA (rdma_peermem_missing).
TEST(CheckRdmaReadiness, MpiWithoutCudaIsANoteWithoutNic) {
  ScratchDir root;
  fs::create_directories(root / "sys/class");
  fs::create_directories(root / "mpi");
  fs::copy_file(kDoctor + "rdma_peermem_missing/mpi/ompi_info.txt", root / "mpi/ompi_info.txt");
  const RdmaReadiness r = checkRdmaReadiness(Topology{}, rdmaOptionsUnder(root / ""));
  EXPECT_FALSE(r.applicable);
  EXPECT_EQ(codes(r.findings), (Codes{"mpi_not_cuda_aware", "rdma_no_nic"}));
  EXPECT_EQ(only(r.findings, "mpi_not_cuda_aware").severity, Verdict::Ok);
  EXPECT_EQ(r.overall, Verdict::Ok);
  EXPECT_TRUE(has(r.summary, "; MPI: Open MPI 4.1.6, not CUDA-aware")) << r.summary;
  EXPECT_EQ(only(check("rdma_peermem_missing").findings, "mpi_not_cuda_aware").severity, Verdict::Degraded);
}

// ---- decisions on snapshots changed here ------------------------------------------------------------

// What checkRdmaReadiness read of rdma_dgx, where nothing is wrong: the tests below change one thing.
RdmaSnapshot dgxSnapshot() {
  return check("rdma_dgx").snapshot;
}

TEST(DecideRdmaReadiness, AcsRedirectOnTheNicsSwitchPort) {
  RdmaSnapshot s = dgxSnapshot();
  for (auto& bridge : s.bridges) bridge.acsRedirect = bridge.busId == "0000:17:02.0";
  const RdmaReadiness r = decideRdmaReadiness(topologyOf("rdma_dgx"), s);
  EXPECT_EQ(codes(r.findings), (Codes{"rdma_acs_redirect"}));
  const Finding f = only(r.findings, "rdma_acs_redirect");
  EXPECT_EQ(f.gpus, (Gpus{0}));
  EXPECT_TRUE(has(f.summary, "GPU 0 (0000:18:00.0) <-> mlx5_0 (0000:19:00.0): PCIe ACS redirect is on at 0000:17:02.0"))
      << f.summary;
  EXPECT_EQ(r.overall, Verdict::Broken);
}

TEST(DecideRdmaReadiness, GpusCudaSaysCannotDoGpuDirectRdma) {
  RdmaSnapshot s = dgxSnapshot();
  s.gpus.assign(8, GpuRdmaAttributes{true, true});
  s.gpus[2].gpuDirectRdma = false;
  s.gpus[5].gpuDirectRdma = false;
  const RdmaReadiness r = decideRdmaReadiness(topologyOf("rdma_dgx"), s);
  const Finding f = only(r.findings, "rdma_gpu_unsupported");
  EXPECT_EQ(f.gpus, (Gpus{2, 5}));
  EXPECT_EQ(f.severity, Verdict::Degraded);
}

TEST(DecideRdmaReadiness, PathsUnknownWithoutPciPaths) {
  Topology topology = topologyOf("rdma_dgx");
  for (Gpu& gpu : topology.gpus) gpu.pciPath.clear();
  const RdmaReadiness r = decideRdmaReadiness(topology, dgxSnapshot());
  const Finding f = only(r.findings, "rdma_nic_path_unknown");
  EXPECT_EQ(f.gpus, (Gpus{0, 1, 2, 3, 4, 5, 6, 7}));
  for (const NearestNics& n : r.nearest) {
    EXPECT_FALSE(n.path.has_value());
    EXPECT_TRUE(n.nics.empty());
  }
  EXPECT_TRUE(has(r.summary, "nearest NIC per GPU: unknown")) << r.summary;
}

TEST(DecideRdmaReadiness, MemlockLimitUnlessUnlimitedLargeOrCapable) {
  const Topology topology = topologyOf("rdma_dgx");
  RdmaSnapshot s = dgxSnapshot();
  s.memlockBytes = std::uint64_t{8} << 20;
  s.ipcLockCapability = false;
  EXPECT_EQ(codes(decideRdmaReadiness(topology, s).findings), (Codes{"rdma_memlock_limit"}));
  s.ipcLockCapability = true;
  EXPECT_TRUE(decideRdmaReadiness(topology, s).findings.empty());
  s.ipcLockCapability.reset();
  s.memlockBytes = std::uint64_t{2} << 30;
  EXPECT_TRUE(decideRdmaReadiness(topology, s).findings.empty());
  s.memlockBytes.reset();
  EXPECT_TRUE(decideRdmaReadiness(topology, s).findings.empty());
}

TEST(DecideRdmaReadiness, VerbsDeviceMissingMeansIbUverbsIsNotLoaded) {
  RdmaSnapshot s = dgxSnapshot();
  s.nics[3].verbsDevice.clear();
  s.nics[3].verbsNodePresent.reset();
  const RdmaReadiness r = decideRdmaReadiness(topologyOf("rdma_dgx"), s);
  const Finding f = only(r.findings, "rdma_verbs_unavailable");
  EXPECT_TRUE(has(f.summary, "mlx5_3 (0000:5e:00.0) has no user-space verbs device")) << f.summary;
  EXPECT_TRUE(has(f.fix, "modprobe ib_uverbs")) << f.fix;
  EXPECT_EQ(f.gpus, (Gpus{3}));
}

// ---- GPU memory registration: nvidia_peermem, else DMA-BUF ------------------------------------------

RdmaSnapshot dmaBufReady() {
  RdmaSnapshot s;
  s.peermemLoaded = false;
  s.kernelRelease = "6.8.0-45-generic";
  s.kernelConfigFile = "/boot/config-6.8.0-45-generic";
  s.configDmaSharedBuffer = true;
  s.configInfinibandUserMem = true;
  s.nvidiaOpenModules = true;
  s.nvidiaDriverVersion = "550.90.07";
  s.gpus.assign(2, GpuRdmaAttributes{true, true});
  return s;
}

TEST(DecideMemoryRegistration, PeermemLoadedIsEnough) {
  RdmaSnapshot s;
  s.peermemLoaded = true;
  s.peermemModule = "nv_peer_mem";
  const MemoryRegistration m = decideMemoryRegistration(s);
  EXPECT_EQ(m.usable, true);
  EXPECT_EQ(m.how, "nv_peer_mem is loaded");
  EXPECT_TRUE(m.findings.empty());
}

TEST(DecideMemoryRegistration, DmaBufWithoutPeermem) {
  const MemoryRegistration m = decideMemoryRegistration(dmaBufReady());
  EXPECT_EQ(m.usable, true);
  ASSERT_EQ(m.findings.size(), 1u);
  EXPECT_EQ(m.findings[0].code, "rdma_dmabuf_only");
  EXPECT_EQ(m.findings[0].severity, Verdict::Ok);
  EXPECT_TRUE(has(m.how,
                  "DMA-BUF (kernel 6.8.0-45-generic, the open NVIDIA kernel modules, CUDA says every GPU "
                  "supports it)"))
      << m.how;
}

TEST(DecideMemoryRegistration, EachDmaBufRequirementThatFailsIsNamed) {
  struct Case {
    const char* what;
    void (*change)(RdmaSnapshot&);
    const char* reason;
    const char* fix;
  };
  const Case cases[] = {
      {"old kernel", [](RdmaSnapshot& s) { s.kernelRelease = "5.11.0-49-generic"; }, "the kernel is 5.11.0-49-generic",
       "5.12 or later"},
      {"config", [](RdmaSnapshot& s) { s.configInfinibandUserMem = false; }, "CONFIG_INFINIBAND_USER_MEM is off",
       "CONFIG_INFINIBAND_USER_MEM=y"},
      {"dma-buf config", [](RdmaSnapshot& s) { s.configDmaSharedBuffer = false; }, "CONFIG_DMA_SHARED_BUFFER is off",
       "CONFIG_DMA_SHARED_BUFFER=y"},
      {"proprietary", [](RdmaSnapshot& s) { s.nvidiaOpenModules = false; }, "are the proprietary ones",
       "open kernel modules"},
      {"cuda says no", [](RdmaSnapshot& s) { s.gpus[1].dmaBuf = false; }, "CUDA says GPUs 1 do not support DMA-BUF",
       "R515 or later"},
  };
  for (const Case& c : cases) {
    RdmaSnapshot s = dmaBufReady();
    c.change(s);
    const MemoryRegistration m = decideMemoryRegistration(s);
    EXPECT_EQ(m.usable, false) << c.what;
    ASSERT_EQ(m.findings.size(), 1u) << c.what;
    EXPECT_EQ(m.findings[0].code, "rdma_peermem_missing") << c.what;
    EXPECT_EQ(m.findings[0].severity, Verdict::Degraded) << c.what;
    EXPECT_TRUE(has(m.findings[0].summary, c.reason)) << c.what << ": " << m.findings[0].summary;
    EXPECT_TRUE(has(m.findings[0].fix, c.fix)) << c.what << ": " << m.findings[0].fix;
    EXPECT_TRUE(has(m.findings[0].fix, "sudo modprobe nvidia-peermem")) << c.what;
  }
}

TEST(DecideMemoryRegistration, UnknownIsSaidNeverGuessed) {
  RdmaSnapshot s = dmaBufReady();
  s.gpus.assign(2, GpuRdmaAttributes{});  // CUDA not asked (a topology from a file)
  MemoryRegistration m = decideMemoryRegistration(s);
  EXPECT_FALSE(m.usable.has_value());
  ASSERT_EQ(m.findings.size(), 1u);
  EXPECT_EQ(m.findings[0].code, "rdma_peermem_missing");
  EXPECT_TRUE(
      has(m.findings[0].summary, "whether DMA-BUF can replace it is unknown: CUDA was not asked about GPUs 0, 1"))
      << m.findings[0].summary;
  EXPECT_TRUE(has(m.findings[0].summary, "may not be able to")) << m.findings[0].summary;

  s.peermemLoaded.reset();  // the modules could not be read either
  m = decideMemoryRegistration(s);
  EXPECT_FALSE(m.usable.has_value());
  ASSERT_EQ(m.findings.size(), 1u);
  EXPECT_EQ(m.findings[0].code, "rdma_registration_unknown");
  EXPECT_EQ(m.findings[0].severity, Verdict::Ok);

  s = dmaBufReady();
  s.peermemLoaded.reset();  // DMA-BUF answers by itself
  m = decideMemoryRegistration(s);
  EXPECT_EQ(m.usable, true);
  EXPECT_TRUE(m.findings.empty());
  EXPECT_TRUE(has(m.how, "whether nvidia_peermem is loaded is unknown")) << m.how;

  s = dmaBufReady();
  s.kernelRelease.clear();
  m = decideMemoryRegistration(s);
  EXPECT_FALSE(m.usable.has_value());
  EXPECT_TRUE(has(m.how, "the kernel release could not be read")) << m.how;
}

}  // namespace
}  // namespace peerlink
