// `peerlink doctor --rdma` in-process: on the fake machines of tests/fixtures/doctor (--platform-root with
// the machine's topology file), its refusals, and on this machine (whatever NICs it has).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "exit_codes.hpp"
#include "finding_test_support.hpp"

namespace peerlink::cli {
namespace {

const std::string kFixtures = PEERLINK_FIXTURES_DIR;

CliResult rdmaOn(const std::string& machine, const std::string& topology, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"doctor",          "--rdma",
                                   "--platform-root", kFixtures + "/doctor/" + machine,
                                   "--topo-file",     kFixtures + "/" + topology};
  args.insert(args.end(), more.begin(), more.end());
  return runCli(args);
}

TEST(DoctorRdmaCli, DgxLikeNodeTablesAndExitOk) {
  const CliResult r = rdmaOn("rdma_dgx", "topologies/h100x8_nvswitch.json");
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(has(r.out, "GPUDirect RDMA, between machines: OK\n")) << r.out;
  EXPECT_TRUE(has(r.out, "NIC     bus id        NUMA  port  state   rate                 netdev\n")) << r.out;
  EXPECT_TRUE(has(r.out, "mlx5_7  0000:dc:00.0  1     1     ACTIVE  400 Gb/sec (4X NDR)  ibp220s0 up 400 Gb/s\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "GPU  bus id        nearest RDMA NIC  path\n0    0000:18:00.0  mlx5_0            PIX\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "GPU memory registration: nvidia_peermem is loaded\n")) << r.out;
  EXPECT_TRUE(has(r.out, "MPI: Open MPI 4.1.7a1: CUDA-aware")) << r.out;
  EXPECT_TRUE(has(r.out, "GPUDirect RDMA findings: none\n")) << r.out;
  EXPECT_TRUE(has(r.out, "GPUDirect RDMA readiness: OK (exit 0)\n")) << r.out;
}

TEST(DoctorRdmaCli, ExitCodesFollowTheWorstFinding) {
  const CliResult degraded = rdmaOn("rdma_peermem_missing", "doctor/rdma_peermem_missing/topology.json");
  EXPECT_EQ(degraded.code, kExitDegraded) << degraded.out;
  EXPECT_TRUE(has(degraded.out, "DEGRADED rdma_peermem_missing\n")) << degraded.out;
  EXPECT_TRUE(has(degraded.out, "  fix: sudo modprobe nvidia-peermem")) << degraded.out;
  const CliResult broken = rdmaOn("rdma_other_socket", "topologies/dual_socket_pcie.json");
  EXPECT_EQ(broken.code, kExitBroken) << broken.out;
  EXPECT_TRUE(has(broken.out, "DEGRADED rdma_nic_other_socket (3 times)\n")) << broken.out;
  EXPECT_TRUE(has(broken.out, "3    0000:81:00.0  mlx5_0            PHB\n")) << broken.out;
}

TEST(DoctorRdmaCli, WithoutNicsOneLine) {
  const CliResult r = rdmaOn("plx_acs_redirect", "topologies/dual_socket_pcie.json");
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string section = r.out.substr(r.out.find('\n') + 1);
  EXPECT_EQ(section, "\nGPUDirect RDMA: no RDMA NIC (" + kFixtures +
                         "/doctor/plx_acs_redirect/sys/class/infiniband does not exist); MPI: no MPI tool on PATH\n");
}

TEST(DoctorRdmaCli, UnreadableFilesAreCountedAndShortened) {
  const CliResult r = rdmaOn("rdma_container", "topologies/h100x8_nvswitch.json");
  EXPECT_EQ(r.code, kExitDegraded);
  EXPECT_TRUE(has(r.out, "Not read, so unknown (17):\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  - and 14 more (--json lists them)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "DEGRADED rdma_verbs_unavailable (8 times)\n")) << r.out;
}

TEST(DoctorRdmaCli, JsonHasEveryFactAndFinding) {
  const CliResult r = rdmaOn("rdma_link_down", "doctor/rdma_link_down/topology.json", {"--json", "-"});
  EXPECT_EQ(r.code, kExitDegraded) << r.err;
  const nlohmann::json document = nlohmann::json::parse(r.out);
  EXPECT_EQ(document.at("schema"), "peerlink.rdma");
  EXPECT_EQ(document.at("version"), 1);
  EXPECT_EQ(document.at("exit_code"), kExitDegraded);
  const nlohmann::json& rdma = document.at("rdma");
  EXPECT_EQ(rdma.at("applicable"), true);
  EXPECT_EQ(rdma.at("overall"), "DEGRADED");
  ASSERT_EQ(rdma.at("nics").size(), 3u);
  const nlohmann::json& down = rdma.at("nics")[1];
  EXPECT_EQ(down.at("name"), "mlx5_1");
  EXPECT_EQ(down.at("ports")[0].at("state"), "DOWN");
  EXPECT_EQ(down.at("ports")[0].at("physical_state"), "Polling");
  EXPECT_TRUE(down.at("netdevs")[0].at("speed_mbps").is_null());  // no speed while the link is down
  EXPECT_EQ(rdma.at("gpu_nic_paths").size(), 6u);
  EXPECT_EQ(rdma.at("nearest")[1].at("nics"), (std::vector<std::string>{"mlx5_1", "mlx5_2"}));
  EXPECT_EQ(rdma.at("nearest")[1].at("path"), "PHB");
  const nlohmann::json& registration = rdma.at("memory_registration");
  EXPECT_EQ(registration.at("usable"), true);
  EXPECT_EQ(registration.at("peermem_module"), "nvidia_peermem");
  EXPECT_EQ(registration.at("nvidia_open_modules"), true);
  EXPECT_TRUE(registration.at("gpus")[0].at("dma_buf_supported").is_null());  // CUDA not asked: from a file
  EXPECT_EQ(rdma.at("memlock_unlimited"), true);
  EXPECT_EQ(rdma.at("mpi")[0].at("cuda_aware"), true);
  std::vector<std::string> codes;
  for (const auto& finding : rdma.at("findings")) codes.push_back(finding.at("code"));
  EXPECT_EQ(codes, (std::vector<std::string>{"rdma_port_down", "rdma_port_down", "rdma_rate_differs",
                                             "rdma_nic_through_cpu", "rdma_nic_through_cpu"}));
  EXPECT_EQ(rdma.at("findings")[0].at("gpus"), (std::vector<int>{1}));
}

TEST(DoctorRdmaCli, Refusals) {
  const std::string root = kFixtures + "/doctor/rdma_dgx";
  const std::string topology = kFixtures + "/topologies/h100x8_nvswitch.json";
  const CliResult noTopology = runCli({"doctor", "--rdma", "--platform-root", root});
  EXPECT_EQ(noTopology.code, kExitUsage);
  EXPECT_TRUE(has(noTopology.err, "--platform-root needs --topo-file")) << noTopology.err;
  const CliResult noRdma = runCli({"doctor", "--platform-root", root, "--topo-file", topology});
  EXPECT_EQ(noRdma.code, kExitUsage);
  EXPECT_TRUE(has(noRdma.err, "--platform-root reads a fake machine for --rdma only")) << noRdma.err;
  // A topology file of another machine beside this machine's NICs would pair GPUs and NICs of two machines.
  const CliResult otherMachine = runCli({"doctor", "--rdma", "--topo-file", topology});
  EXPECT_EQ(otherMachine.code, kExitUsage);
  EXPECT_TRUE(has(otherMachine.err, "doctor cannot check a saved topology")) << otherMachine.err;
  for (const char* other : {"--quick", "--no-cache", "--no-cross-process"}) {
    const CliResult both = runCli({"doctor", "--rdma", other});
    EXPECT_EQ(both.code, kExitUsage) << other;
    EXPECT_TRUE(has(both.err, "excludes")) << other << ": " << both.err;
  }
}

// This machine, whatever it has: the section is there and the exit code is one of the verdicts'.
TEST(DoctorRdmaCli, ThisMachine) {
  const CliResult r = runCli({"doctor", "--rdma"});
  EXPECT_TRUE(r.code == kExitOk || r.code == kExitDegraded || r.code == kExitBroken) << r.code << " " << r.err;
  EXPECT_TRUE(has(r.out, "peerlink doctor --rdma: ")) << r.out;
  EXPECT_TRUE(has(r.out, "\nGPUDirect RDMA")) << r.out;
}

}  // namespace
}  // namespace peerlink::cli
