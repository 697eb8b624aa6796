// The doctor's platform snapshot reader and checks, on the fake trees of tests/fixtures/doctor (built by
// generate.py there; README.md says what each holds) and on topologies built here.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "doctor/platform_checks.hpp"
#include "doctor/platform_snapshot.hpp"
#include "doctor/shortage_checks.hpp"
#include "finding_test_support.hpp"
#include "peerlink/topology.hpp"
#include "platform_test_support.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

// ---- the snapshot reader -------------------------------------------------------------------------

std::string configImage(std::size_t bytes, const std::vector<std::pair<std::size_t, std::uint32_t>>& words) {
  std::string image(bytes, '\0');
  for (auto [offset, value] : words) {
    for (int i = 0; i < 4; ++i) image[offset + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  }
  return image;
}

TEST(FindAcsControl, WalksTheExtendedCapabilityList) {
  // AER at 0x100 -> vendor-specific at 0x150 -> ACS at 0x300 with Control 0x001d.
  const auto image = configImage(4096, {{0x100, 0x0001u | (1u << 16) | (0x150u << 20)},
                                        {0x150, 0x000Bu | (1u << 16) | (0x300u << 20)},
                                        {0x300, 0x000Du | (1u << 16)},
                                        {0x304, 0x001D007Fu}});
  const AcsReading acs = findAcsControl(image);
  EXPECT_EQ(acs.status, AcsReading::Status::Found);
  EXPECT_EQ(acs.control, 0x001D);
  EXPECT_TRUE(acsRedirects(acs.control));
}

TEST(FindAcsControl, NoCapabilityShortAndMalformed) {
  EXPECT_EQ(findAcsControl(configImage(4096, {})).status, AcsReading::Status::NoCapability);
  EXPECT_EQ(findAcsControl(configImage(4096, {{0x100, 0x0001u}})).status, AcsReading::Status::NoCapability);
  EXPECT_EQ(findAcsControl(configImage(4096, {{0x100, 0xFFFFFFFFu}})).status, AcsReading::Status::NoCapability);
  EXPECT_EQ(findAcsControl(configImage(64, {})).status, AcsReading::Status::Short);
  EXPECT_EQ(findAcsControl(configImage(256, {})).bytes, 256u);
  EXPECT_EQ(findAcsControl(configImage(256, {})).status, AcsReading::Status::Short);
  // A capability pointing at itself, and one pointing back into the standard header.
  EXPECT_EQ(findAcsControl(configImage(4096, {{0x100, 0x0001u | (0x100u << 20)}})).status,
            AcsReading::Status::Malformed);
  EXPECT_EQ(findAcsControl(configImage(4096, {{0x100, 0x0001u | (0x040u << 20)}})).status,
            AcsReading::Status::Malformed);
}

TEST(AcsRedirects, OnlyRequestRedirectCompletionRedirectAndEgressControl) {
  EXPECT_FALSE(acsRedirects(0));
  EXPECT_FALSE(
      acsRedirects(kAcsSourceValidation | kAcsTranslationBlocking | kAcsUpstreamForwarding | kAcsDirectTranslatedP2p));
  EXPECT_TRUE(acsRedirects(kAcsP2pRequestRedirect));
  EXPECT_TRUE(acsRedirects(kAcsP2pCompletionRedirect));
  EXPECT_TRUE(acsRedirects(kAcsP2pEgressControl));
}

TEST(HypervisorFromDmi, KnownVendorsAndPhysicalMachines) {
  EXPECT_EQ(hypervisorFromDmi("QEMU", "Standard PC (Q35 + ICH9, 2009)"), "QEMU");
  EXPECT_EQ(hypervisorFromDmi("Red Hat", "KVM"), "KVM");
  EXPECT_EQ(hypervisorFromDmi("Amazon EC2", "p4d.24xlarge"), "Amazon EC2");
  EXPECT_EQ(hypervisorFromDmi("Amazon EC2", "p4d.metal"), std::nullopt);
  EXPECT_EQ(hypervisorFromDmi("Google", "Google Compute Engine"), "Google Compute Engine");
  EXPECT_EQ(hypervisorFromDmi("Microsoft Corporation", "Virtual Machine"), "Microsoft Hyper-V");
  EXPECT_EQ(hypervisorFromDmi("Microsoft Corporation", "Surface Pro"), std::nullopt);
  EXPECT_EQ(hypervisorFromDmi("Dell Inc.", "PowerEdge XE9680"), std::nullopt);
  EXPECT_EQ(hypervisorFromDmi("", ""), std::nullopt);
}

TEST(ReadPlatformSnapshot, PlxTreeReadsEveryBridge) {
  const Checked r = run("plx_acs_redirect");
  const PlatformSnapshot& s = r.snapshot;
  EXPECT_TRUE(s.unreadable.empty()) << ::testing::PrintToString(s.unreadable);
  EXPECT_TRUE(has(s.kernelCommandLine, "intel_iommu=on iommu=pt"));
  EXPECT_EQ(s.iommuGroupTypes, (Codes{"identity", "identity", "identity", "identity"}));
  EXPECT_EQ(s.iommuMode, "identity");
  EXPECT_FALSE(s.hypervisor);
  EXPECT_FALSE(s.pidNamespaceIsolated);
  EXPECT_FALSE(s.ipcNamespaceIsolated);
  EXPECT_EQ(s.ptraceScope, 0);
  EXPECT_EQ(s.openFileLimit, 1048576);
  ASSERT_EQ(s.bridges.size(), 8u);  // two root ports, two switches of three ports each
  for (const auto& b : s.bridges) EXPECT_TRUE(b.acsKnown) << b.busId;
  EXPECT_EQ(bridge(s, "0000:00:01.0")->vendor, "0x8086");
  EXPECT_TRUE(bridge(s, "0000:00:01.0")->acsRedirect);   // SV RR CR UF
  EXPECT_FALSE(bridge(s, "0000:01:00.0")->acsRedirect);  // no ACS capability
  EXPECT_FALSE(bridge(s, "0000:02:00.0")->acsRedirect);  // SV only
  EXPECT_EQ(bridge(s, "0000:05:00.0")->vendor, "0x10b5");
  EXPECT_TRUE(bridge(s, "0000:05:00.0")->acsRedirect);
  EXPECT_FALSE(bridge(s, "0000:05:01.0")->acsRedirect);
}

TEST(ReadPlatformSnapshot, RereadsPathsFromSysfsWhenTheTopologyHasNone) {
  Topology topology = topologyOf("plx_acs_redirect");
  for (Gpu& gpu : topology.gpus) gpu.pciPath.clear();
  const PlatformSnapshot s = readPlatformSnapshot(topology, rootsOf("plx_acs_redirect"));
  EXPECT_EQ(s.bridges.size(), 8u);
  EXPECT_TRUE(bridge(s, "0000:05:00.0")->acsRedirect);
}

TEST(ReadPlatformSnapshot, WithoutRootAcsIsUnknownAndSaysHowToCheck) {
  const PlatformSnapshot s = run("no_root").snapshot;
  ASSERT_EQ(s.bridges.size(), 8u);
  ASSERT_EQ(s.unreadable.size(), 8u) << ::testing::PrintToString(s.unreadable);
  for (size_t i = 0; i < s.bridges.size(); ++i) {
    EXPECT_FALSE(s.bridges[i].acsKnown);
    EXPECT_FALSE(s.bridges[i].acsRedirect);
    EXPECT_FALSE(s.bridges[i].vendor.empty());  // the vendor file is world-readable
    EXPECT_TRUE(has(s.unreadable[i], "64 of 4096 bytes")) << s.unreadable[i];
    EXPECT_TRUE(has(s.unreadable[i], "sudo lspci -vvv -s " + s.bridges[i].busId + " | grep -i ACSCtl"));
  }
  EXPECT_EQ(s.iommuGroupTypes, (Codes{"none", "none", "none", "none"}));
  EXPECT_EQ(s.iommuMode, "none");
}

TEST(ReadPlatformSnapshot, ContainerNamespacesDifferFromTheInitialOnes) {
  // /proc/1 is the container's own init there, in the same namespaces: the kernel's fixed inode numbers
  // of the initial namespaces are what tell.
  const PlatformSnapshot s = run("container", rootsOf("container", 1048576, 64 * kMiB)).snapshot;
  EXPECT_TRUE(s.pidNamespaceIsolated);
  EXPECT_TRUE(s.ipcNamespaceIsolated);
  EXPECT_EQ(s.ptraceScope, 1);
  EXPECT_EQ(s.devShmBytes, 64 * kMiB);
  EXPECT_EQ(s.bridges.size(), 24u);
  EXPECT_EQ(s.unreadable.size(), 24u);  // every ACS control: the container has no CAP_SYS_ADMIN
}

TEST(ReadPlatformSnapshot, VmAndDmaTrees) {
  const PlatformSnapshot vm = run("vm_flat").snapshot;
  EXPECT_TRUE(vm.hypervisor);
  EXPECT_EQ(vm.hypervisorVendor, "QEMU");
  EXPECT_TRUE(vm.bridges.empty());
  EXPECT_EQ(vm.iommuMode, "none");
  EXPECT_TRUE(vm.unreadable.empty()) << ::testing::PrintToString(vm.unreadable);
  const PlatformSnapshot dma = run("iommu_dma").snapshot;
  EXPECT_EQ(dma.iommuGroupTypes, (Codes{"DMA", "DMA"}));
  EXPECT_EQ(dma.iommuMode, "DMA");
  for (const auto& b : dma.bridges) EXPECT_TRUE(b.acsKnown && !b.acsRedirect) << b.busId;
}

TEST(ReadPlatformSnapshot, DevShmFromStatvfsWithoutOverride) {
  PlatformRoots roots = rootsOf("plx_acs_redirect");
  roots.devShmBytesOverride.reset();
  roots.openFileLimitOverride.reset();
  const PlatformSnapshot s = readPlatformSnapshot(topologyOf("plx_acs_redirect"), roots);
  EXPECT_GT(s.devShmBytes, 0);
  EXPECT_GT(s.openFileLimit, 0);
}

TEST(ReadPlatformSnapshot, MissingTreesNeverThrowAndListWhatIsMissing) {
  PlatformRoots roots;
  roots.sys = roots.proc = roots.dev = kDoctor + "does_not_exist";
  const Topology topology = topologyOf("plx_acs_redirect");
  PlatformSnapshot s;
  ASSERT_NO_THROW(s = readPlatformSnapshot(topology, roots));
  EXPECT_EQ(s.iommuGroupTypes, (Codes{"", "", "", ""}));
  EXPECT_FALSE(s.iommuMode.has_value());
  EXPECT_EQ(s.ptraceScope, -1);
  EXPECT_EQ(s.devShmBytes, -1);
  for (const auto& b : s.bridges) EXPECT_FALSE(b.acsKnown);
  for (const char* what :
       {"kernel command line", "CPU hypervisor flag", "DMI system vendor", "pid namespace", "ipc namespace",
        "ptrace scope", "/dev/shm size", "IOMMU group of GPU 3", "ACS control of bridge 0000:05:00.0"}) {
    EXPECT_TRUE(
        std::any_of(s.unreadable.begin(), s.unreadable.end(), [&](const std::string& u) { return has(u, what); }))
        << what << " not in " << ::testing::PrintToString(s.unreadable);
  }
}

TEST(ReadPlatformSnapshot, NamespaceRule) {
  const fs::path proc = fs::temp_directory_path() / ("peerlink_ns_" + std::to_string(::getpid()));
  fs::remove_all(proc);
  fs::create_directories(proc / "self" / "ns");
  fs::create_symlink("pid:[4026531836]", proc / "self" / "ns" / "pid");  // the initial PID namespace
  fs::create_symlink("ipc:[4026532500]", proc / "self" / "ns" / "ipc");  // another IPC namespace, no /proc/1
  PlatformRoots roots = rootsOf("plx_acs_redirect");
  roots.proc = proc.string();
  const PlatformSnapshot s = readPlatformSnapshot(Topology{}, roots);
  fs::remove_all(proc);
  EXPECT_FALSE(s.pidNamespaceIsolated);
  EXPECT_TRUE(s.ipcNamespaceIsolated);
}

// ---- checks on the fixture trees ---------------------------------------------------------------------

TEST(CheckPlatform, PlxSwitchPortWithAcsRedirect) {
  const auto findings = run("plx_acs_redirect").findings;
  EXPECT_EQ(codes(findings),
            (Codes{"acs_redirect", "iommu_identity", "p2p_not_reported", "p2p_not_reported", "p2p_not_reported"}));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].code, "acs_redirect");  // most severe first
  const Finding acs = only(findings, "acs_redirect");
  EXPECT_EQ(acs.severity, Verdict::Broken);
  EXPECT_EQ(acs.gpus, (Gpus{1, 2}));
  EXPECT_TRUE(has(acs.summary, "GPU 1 (0000:06:00.0) <-> GPU 2 (0000:07:00.0)")) << acs.summary;
  EXPECT_TRUE(has(acs.summary, "PLX/Broadcom switch port 0000:05:00.0")) << acs.summary;
  EXPECT_TRUE(has(acs.fix, "setpci -s 0000:05:00.0 ECAP_ACS+6.w=0000")) << acs.fix;
  EXPECT_TRUE(has(acs.fix, "pci=disable_acs_redir=0000:05:00.0")) << acs.fix;
  // The root port above every pair's divergence redirects too, but no pair turns there.
  for (const Finding& f : findings) {
    EXPECT_FALSE(has(f.summary + f.fix, "0000:00:01.0") || has(f.summary + f.fix, "0000:05:01.0")) << f.summary;
  }
  const Finding sockets = forGpus(findings, "p2p_not_reported", {0, 3});
  EXPECT_EQ(sockets.severity, Verdict::Unsupported);
  EXPECT_TRUE(has(sockets.summary, "different CPU sockets")) << sockets.summary;
}

TEST(CheckPlatform, AmdRootPortsWithAcsRedirect) {
  const auto findings = run("amd_root_port_acs").findings;
  EXPECT_EQ(codes(findings), (Codes{"acs_redirect", "acs_redirect", "acs_redirect", "iommu_identity"}));
  const Finding both = forGpus(findings, "acs_redirect", {0, 1});
  EXPECT_TRUE(has(both.summary, "AMD root port 0000:00:01.1 and AMD root port 0000:00:03.1")) << both.summary;
  EXPECT_TRUE(has(both.fix, "pci=disable_acs_redir=0000:00:01.1;0000:00:03.1")) << both.fix;
  const Finding across = forGpus(findings, "acs_redirect", {0, 2});
  EXPECT_TRUE(has(across.summary, "AMD root port 0000:00:01.1")) << across.summary;
  EXPECT_FALSE(has(across.summary, "0000:40:01.1")) << across.summary;  // its ACS control is 0
  EXPECT_TRUE(has(forGpus(findings, "acs_redirect", {1, 2}).fix, "setpci -s 0000:00:03.1 ECAP_ACS+6.w=0000"));
}

TEST(CheckPlatform, IommuDmaVersusIdentity) {
  const auto dma = run("iommu_dma").findings;
  EXPECT_EQ(codes(dma), (Codes{"iommu_translated"}));
  const Finding translated = only(dma, "iommu_translated");
  EXPECT_EQ(translated.severity, Verdict::Degraded);
  EXPECT_EQ(translated.gpus, (Gpus{0, 1}));
  EXPECT_TRUE(has(translated.summary, "GPU 0 (0000:03:00.0) (group type DMA)")) << translated.summary;
  EXPECT_TRUE(has(translated.fix, "iommu=pt")) << translated.fix;
  EXPECT_TRUE(has(translated.fix, "cat /sys/bus/pci/devices/0000:03:00.0/iommu_group/type")) << translated.fix;

  const auto identity = run("iommu_identity").findings;
  EXPECT_EQ(codes(identity), (Codes{"iommu_identity"}));
  EXPECT_EQ(identity[0].severity, Verdict::Ok);
  EXPECT_EQ(identity[0].gpus, (Gpus{0, 1}));
}

TEST(CheckPlatform, VmWithAFlatBusAndNoNuma) {
  const auto findings = run("vm_flat").findings;
  EXPECT_EQ(codes(findings), (Codes{"flat_pcie_tree", "iommu_off", "numa_unknown", "vm_detected"}));
  const Finding vm = only(findings, "vm_detected");
  EXPECT_TRUE(has(vm.summary, "QEMU") && has(vm.summary, "the probe decides")) << vm.summary;
  EXPECT_EQ(only(findings, "flat_pcie_tree").gpus, (Gpus{0, 1, 2, 3}));
  EXPECT_EQ(only(findings, "numa_unknown").gpus, (Gpus{0, 1, 2, 3}));
  EXPECT_TRUE(has(only(findings, "iommu_off").summary, "host's IOMMU"));
  for (const Finding& f : findings) EXPECT_EQ(f.severity, Verdict::Ok) << f.code;
}

TEST(CheckPlatform, LinkTrainedDownToX8Gen3) {
  const auto findings = run("link_x8_gen3").findings;
  EXPECT_EQ(codes(findings), (Codes{"iommu_off", "link_gen_below_max", "link_trained_down"}));
  const Finding down = only(findings, "link_trained_down");
  EXPECT_EQ(down.severity, Verdict::Degraded);
  EXPECT_EQ(down.gpus, (Gpus{1}));
  EXPECT_TRUE(has(down.summary, "GPU 1 (0000:39:00.0)") && has(down.summary, "Gen3 x8") &&
              has(down.summary, "Gen5 x16"))
      << down.summary;
  EXPECT_TRUE(has(down.fix, "sudo lspci -vvv -s 0000:39:00.0")) << down.fix;
  const Finding idle = only(findings, "link_gen_below_max");
  EXPECT_EQ(idle.severity, Verdict::Ok);
  EXPECT_EQ(idle.gpus, (Gpus{0}));
  EXPECT_TRUE(has(idle.summary, "Gen1") && has(idle.summary, "may be normal")) << idle.summary;
}

TEST(CheckPlatform, ContainerNamespacesSmallShmAndPtraceScope) {
  const auto findings = run("container", rootsOf("container", 1048576, 64 * kMiB)).findings;
  // ACS of every bridge is unreadable there, but every pair has NVLink: no ACS finding.
  EXPECT_EQ(codes(findings), (Codes{"container_ipc_namespace", "container_pid_namespace", "iommu_identity",
                                    "ptrace_scope", "small_dev_shm"}));
  EXPECT_TRUE(has(only(findings, "container_pid_namespace").fix, "--pid=host"));
  EXPECT_TRUE(has(only(findings, "container_ipc_namespace").fix, "--ipc=host"));
  const Finding shm = only(findings, "small_dev_shm");
  EXPECT_TRUE(has(shm.summary, "64 MiB")) << shm.summary;
  EXPECT_TRUE(has(shm.summary, "stage through it")) << shm.summary;
  EXPECT_TRUE(has(shm.fix, "--shm-size=1g")) << shm.fix;
  EXPECT_TRUE(has(only(findings, "ptrace_scope").summary, "ptrace_scope is 1"));

  const auto few = run("container", rootsOf("container", 256, 64 * kMiB)).findings;
  const Finding files = only(few, "open_file_limit");
  EXPECT_EQ(files.severity, Verdict::Degraded);
  EXPECT_TRUE(has(files.summary, "is 256")) << files.summary;
  EXPECT_TRUE(has(files.fix, "ulimit -n")) << files.fix;
}

TEST(CheckPlatform, TenGpusExceedThePeerLimit) {
  const auto findings = run("ten_gpus", rootsOf("ten_gpus", 1024)).findings;
  EXPECT_EQ(codes(findings), (Codes{"iommu_off", "peer_limit"}));
  const Finding limit = only(findings, "peer_limit");
  EXPECT_EQ(limit.severity, Verdict::Degraded);
  EXPECT_TRUE(limit.gpus.empty());  // advice: no single pair is worse for it
  EXPECT_TRUE(has(limit.summary, "GPUs 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 each have up to 9 P2P peers")) << limit.summary;
  EXPECT_TRUE(has(limit.summary, "cudaErrorTooManyPeers (711)")) << limit.summary;
  EXPECT_TRUE(has(limit.fix, "at most 8 per GPU")) << limit.fix;
}

TEST(CheckPlatform, NoRootLeavesAcsUnknownWithTheManualCommand) {
  const auto findings = run("no_root").findings;
  EXPECT_EQ(codes(findings),
            (Codes{"acs_unknown", "iommu_off", "p2p_not_reported", "p2p_not_reported", "p2p_not_reported"}));
  const Finding acs = only(findings, "acs_unknown");
  EXPECT_EQ(acs.severity, Verdict::Ok);
  EXPECT_EQ(acs.gpus, (Gpus{0, 1, 2}));
  EXPECT_TRUE(has(acs.summary, "0000:02:00.0, 0000:02:01.0, 0000:05:00.0, 0000:05:01.0 could not be read"))
      << acs.summary;
  for (const char* elsewhere : {"0000:00:01.0", "0000:01:00.0", "0000:04:00.0", "0000:80:01.0"}) {
    EXPECT_FALSE(has(acs.summary, elsewhere)) << elsewhere;
  }
  EXPECT_TRUE(has(acs.fix, "sudo lspci -vvv -s 0000:05:01.0 | grep -i ACSCtl")) << acs.fix;
}

// ---- checks on topologies alone ----------------------------------------------------------------------

Topology topologyFile(const std::string& name) {
  return loadTopologyFile(std::string(PEERLINK_FIXTURES_DIR) + "/topologies/" + name + ".json");
}

TEST(DivergenceBridges, WherePathsPart) {
  const std::vector<std::string> a = {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
  const std::vector<std::string> b = {"pci0000:00",   "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                                      "0000:04:00.0", "0000:05:00.0", "0000:06:00.0"};
  EXPECT_EQ(divergenceBridges(a, b), (Codes{"0000:02:00.0", "0000:02:01.0"}));
  EXPECT_EQ(
      divergenceBridges({"pci0000:00", "0000:00:01.1", "0000:01:00.0"}, {"pci0000:40", "0000:40:01.1", "0000:41:00.0"}),
      (Codes{"0000:00:01.1", "0000:40:01.1"}));
  EXPECT_TRUE(divergenceBridges({"pci0000:00", "0000:00:05.0"}, {"pci0000:00", "0000:00:06.0"}).empty());
  EXPECT_TRUE(divergenceBridges({}, b).empty());
}

TEST(CheckPlatform, NvswitchPairWithoutNvlinksPointsAtFabricManager) {
  Topology topology = topologyFile("h100x8_nvswitch");
  topology.pair(0, 5).nvlinks = topology.pair(5, 0).nvlinks = 0;
  topology.gpus[3].nvlink.activeLinks = 16;
  const auto findings = checkPlatform(topology, PlatformSnapshot{});
  // No snapshot: the PCIe route of 0 <-> 5 crosses bridges whose ACS is unknown.
  EXPECT_EQ(codes(findings), (Codes{"acs_unknown", "nvlink_count_differs", "nvlink_missing_on_nvswitch"}));
  const Finding fabric = only(findings, "nvlink_missing_on_nvswitch");
  EXPECT_EQ(fabric.gpus, (Gpus{0, 5}));
  EXPECT_TRUE(has(fabric.summary, "802")) << fabric.summary;
  EXPECT_TRUE(has(fabric.fix, "nvidia-fabricmanager")) << fabric.fix;
  const Finding links = only(findings, "nvlink_count_differs");
  EXPECT_EQ(links.gpus, (Gpus{3}));
  EXPECT_TRUE(has(links.summary, "16 active NVLinks") && has(links.summary, "has 18")) << links.summary;
}

TEST(CheckPlatform, IommuTranslationIgnoresNvlinkPairs) {
  PlatformSnapshot snapshot;
  snapshot.iommuGroupTypes.assign(8, "DMA-FQ");
  EXPECT_TRUE(checkPlatform(topologyFile("h100x8_nvswitch"), snapshot).empty());
  snapshot.iommuGroupTypes = {"DMA-FQ", "identity", "identity", "identity"};
  Topology dual = topologyFile("dual_socket_pcie");
  for (Gpu& gpu : dual.gpus) gpu.pciPath.clear();  // leave ACS out of it
  const auto findings = checkPlatform(dual, snapshot);
  EXPECT_EQ(all(findings, "iommu_translated").size(), 2u);
  const Finding f = forGpus(findings, "iommu_translated", {0, 2});
  EXPECT_TRUE(has(f.summary, "GPU 0 (0000:03:00.0) (group type DMA-FQ)") && !has(f.summary, "GPU 2 (0000:07:00.0) ("))
      << f.summary;
  EXPECT_EQ(only(findings, "iommu_identity").gpus, (Gpus{1, 2, 3}));
}

TEST(CheckPlatform, ConsumerGpusWithoutP2p) {
  const auto findings = checkPlatform(topologyFile("rtx4090x2"), PlatformSnapshot{});
  EXPECT_EQ(codes(findings), (Codes{"p2p_not_reported"}));
  EXPECT_EQ(findings[0].severity, Verdict::Unsupported);
  EXPECT_TRUE(has(findings[0].summary, "GeForce")) << findings[0].summary;
}

TEST(CheckPlatform, DriverAndRuntimeVersions) {
  Topology topology = topologyFile("rtx4090x2");
  topology.cudaRuntimeVersion = 12040;
  topology.cudaDriverVersion = 11080;
  Finding old = only(checkPlatform(topology, {}), "cuda_driver_too_old");
  EXPECT_EQ(old.severity, Verdict::Broken);
  EXPECT_TRUE(has(old.summary, "runtime is 12.4") && has(old.summary, "CUDA 11.8") && has(old.summary, "(35)"));
  topology.cudaDriverVersion = 12020;
  const Finding minor = only(checkPlatform(topology, {}), "cuda_minor_version_compat");
  EXPECT_EQ(minor.severity, Verdict::Ok);
  EXPECT_TRUE(has(minor.summary, "(36)")) << minor.summary;
  topology.cudaDriverVersion = 12080;
  EXPECT_TRUE(all(checkPlatform(topology, {}), "cuda_minor_version_compat").empty());
}

TEST(CheckPlatform, OrderingHandlesAndVisibility) {
  Topology topology = topologyFile("dual_socket_pcie");
  std::swap(topology.gpus[0].pciBusId, topology.gpus[3].pciBusId);  // CUDA's fastest-first order
  topology.cudaVisibleDevices = "0,1,2,3";
  topology.nvmlGpus.push_back({4, "GPU-hidden", "0000:82:00.0"});
  topology.gpus[0].handles.vmm = false;
  topology.gpus[1].handles.posixFd = false;
  const auto findings = checkPlatform(topology, PlatformSnapshot{});
  EXPECT_EQ(only(findings, "cuda_order_differs").fix,
            "set CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers the "
            "GPUs as nvidia-smi does");
  EXPECT_TRUE(has(only(findings, "cuda_visible_devices_hides").summary, "CUDA_VISIBLE_DEVICES=0,1,2,3 hides 1 of 5"));
  EXPECT_EQ(only(findings, "no_vmm").gpus, (Gpus{0}));
  EXPECT_EQ(only(findings, "no_posix_fd_handles").gpus, (Gpus{1}));
}

TEST(CheckPlatform, MigModeOnAGpuDegradesIt) {
  Topology topology = topologyFile("h100x8_nvswitch");
  topology.gpus[2].migMode = 1;
  topology.gpus[3].migMode = 0;
  const auto findings = checkPlatform(topology, PlatformSnapshot{});
  const Finding mig = only(findings, "mig_enabled");
  EXPECT_EQ(mig.severity, Verdict::Degraded);
  EXPECT_EQ(mig.gpus, (Gpus{2}));
  EXPECT_TRUE(has(mig.fix, "nvidia-smi -i 2 -mig 0")) << mig.fix;
}

TEST(CheckPlatform, SmallBar1MattersOnlyForPciePeers) {
  Topology dual = topologyFile("dual_socket_pcie");
  for (Gpu& gpu : dual.gpus) {
    gpu.pciPath.clear();  // leave ACS out of it
    gpu.bar1Bytes = 256ull << 20;
  }
  const auto findings = checkPlatform(dual, PlatformSnapshot{});
  ASSERT_FALSE(all(findings, "bar1_small").empty());
  const Finding bar1 = all(findings, "bar1_small").front();
  EXPECT_EQ(bar1.severity, Verdict::Degraded);
  EXPECT_TRUE(has(bar1.summary, "BAR1 is 256 MiB")) << bar1.summary;

  // The same small BAR1 behind NVLink changes nothing: peers do not map through it.
  Topology nvswitch = topologyFile("h100x8_nvswitch");
  for (Gpu& gpu : nvswitch.gpus) gpu.bar1Bytes = 256ull << 20;
  EXPECT_TRUE(all(checkPlatform(nvswitch, PlatformSnapshot{}), "bar1_small").empty());
  // A large BAR1 on PCIe peers is fine too.
  for (Gpu& gpu : dual.gpus) gpu.bar1Bytes = 64ull << 30;
  EXPECT_TRUE(all(checkPlatform(dual, PlatformSnapshot{}), "bar1_small").empty());
}

// ---- what this process is short of: root causes, and the readings that failed because of them ---------------

}  // namespace
}  // namespace peerlink
