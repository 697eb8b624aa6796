// The pieces under GPUDirect RDMA readiness: parsers of sysfs / procfs / kernel-config text, the MPI tools'
// output, and running a tool with a deadline (real processes: sh, sleep, a fake ompi_info on PATH).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "doctor/bounded_command.hpp"
#include "doctor/mpi_cuda_probe.hpp"
#include "doctor/rdma_snapshot.hpp"
#include "finding_test_support.hpp"
#include "scratch_dir.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

TEST(RdmaParsers, SysfsEnumsRatesAndKernelReleases) {
  EXPECT_EQ(sysfsEnumName("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(sysfsEnumName("5: LinkUp\n"), "LinkUp");
  EXPECT_EQ(sysfsEnumName("ACTIVE"), "ACTIVE");
  EXPECT_EQ(sysfsEnumName("x: y"), "x: y");  // not "number: name"
  EXPECT_EQ(rateGbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_EQ(rateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(rateGbps(""), 0);
  EXPECT_EQ(rateGbps("fast"), 0);
  EXPECT_EQ(kernelVersion("6.8.0-45-generic"), std::make_pair(6, 8));
  EXPECT_EQ(kernelVersion("5.12"), std::make_pair(5, 12));
  EXPECT_EQ(kernelVersion("4.18.0-513.el8.x86_64"), std::make_pair(4, 18));
  EXPECT_FALSE(kernelVersion("").has_value());
  EXPECT_FALSE(kernelVersion("linux").has_value());
  EXPECT_FALSE(kernelVersion("6").has_value());
}

TEST(RdmaParsers, KernelConfigAnswers) {
  const std::string config =
      "CONFIG_INFINIBAND=m\n# CONFIG_INFINIBAND_USER_MEM is not set\nCONFIG_DMA_SHARED_BUFFER=y\nCONFIG_X_Y=n\n";
  EXPECT_TRUE(kernelConfigEnabled(config, "CONFIG_DMA_SHARED_BUFFER"));
  EXPECT_TRUE(kernelConfigEnabled(config, "CONFIG_INFINIBAND"));  // =m counts
  EXPECT_FALSE(kernelConfigEnabled(config, "CONFIG_INFINIBAND_USER_MEM"));
  EXPECT_FALSE(kernelConfigEnabled(config, "CONFIG_X_Y"));
  EXPECT_FALSE(kernelConfigEnabled(config, "CONFIG_ABSENT"));
  EXPECT_FALSE(kernelConfigEnabled("CONFIG_INFINIBAND_USER_MEM=y\n", "CONFIG_INFINIBAND"));  // a longer name
}

TEST(RdmaParsers, NvidiaModuleFlavourAndVersion) {
  std::string version;
  EXPECT_EQ(nvidiaOpenModules("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  "
                              "(dvs-builder@U16)  Thu Aug 15 2024\nGCC version:  gcc 12\n",
                              version),
            true);
  EXPECT_EQ(version, "560.35.03");
  EXPECT_EQ(nvidiaOpenModules("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC "
                              "2023\n",
                              version),
            false);
  EXPECT_EQ(version, "535.129.03");
  EXPECT_EQ(nvidiaOpenModules("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  575.57.08  Release Build\n",
                              version),
            true);
  EXPECT_FALSE(nvidiaOpenModules("something else\n", version).has_value());
}

TEST(RdmaParsers, ModulesLimitsAndCapabilities) {
  const std::string modules =
      "nvidia_uvm 4956160 0 - Live 0x0\nnvidia_peermem 16384 0 - Live 0x0\nnvidia 54308864 2 nvidia_uvm, Live 0x0\n";
  EXPECT_TRUE(moduleListed(modules, "nvidia_peermem"));
  EXPECT_TRUE(moduleListed(modules, "nvidia"));
  EXPECT_FALSE(moduleListed(modules, "nvidia_peer"));  // a prefix of a name is not the name
  EXPECT_FALSE(moduleListed(modules, "nv_peer_mem"));
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         8388608              unlimited            bytes     \n";
  EXPECT_EQ(memlockFromLimits(limits), 8388608u);  // the soft limit
  EXPECT_EQ(memlockFromLimits("Max locked memory         unlimited            unlimited            bytes\n"),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(memlockFromLimits("Max open files 1024 1024 files\n").has_value());
  EXPECT_EQ(effectiveCapability("Name:\tx\nCapEff:\t000001ffffffffff\n", 14), true);
  EXPECT_EQ(effectiveCapability("CapEff:\t00000000a80425fb\n", 14), false);  // Docker's default set
  EXPECT_FALSE(effectiveCapability("Name:\tx\n", 14).has_value());
  EXPECT_FALSE(effectiveCapability("CapEff:\tzz\n", 14).has_value());
}

// ---- the MPI's tools ----------------------------------------------------------------------------------

TEST(MpiCuda, OpenMpiFourAndFive) {
  const MpiCudaSupport no = mpiCudaFromOmpiInfo(
      "ompi:version:full:4.1.4\nmca:opal:base:param:opal_built_with_cuda_support:value:false\n"
      "mca:opal:base:param:opal_built_with_cuda_support:synonym:name:mpi_built_with_cuda_support\n"
      "mca:opal:base:param:opal_cuda_support:value:true\n");
  EXPECT_EQ(no.implementation, "Open MPI 4.1.4");
  EXPECT_EQ(no.cudaAware, false);
  EXPECT_EQ(no.evidence, "opal_built_with_cuda_support false");
  EXPECT_EQ(no.tool, "ompi_info --parsable --all");
  const MpiCudaSupport yes =
      mpiCudaFromOmpiInfo("ompi:version:full:5.0.3\nmca:mpi:base:param:mpi_built_with_cuda_support:value:true\n");
  EXPECT_EQ(yes.implementation, "Open MPI 5.0.3");
  EXPECT_EQ(yes.cudaAware, true);
  EXPECT_EQ(yes.evidence, "mpi_built_with_cuda_support true");
  const MpiCudaSupport silent = mpiCudaFromOmpiInfo("ompi:version:full:3.0.0\n");
  EXPECT_FALSE(silent.cudaAware.has_value());
  EXPECT_TRUE(has(silent.evidence, "no *_built_with_cuda_support")) << silent.evidence;
}

TEST(MpiCuda, MpichSaysOnlyWhatItsConfigureOptionsSay) {
  const auto with = [](const std::string& options) {
    return mpiCudaFromMpichVersion("MPICH Version:      4.2.0\nMPICH configure:    " + options + "\n");
  };
  EXPECT_EQ(with("--prefix=/opt --with-cuda=/usr/local/cuda").cudaAware, true);
  EXPECT_EQ(with("'--prefix=/opt' '--with-cuda'").cudaAware, true);
  EXPECT_EQ(with("--prefix=/opt --without-cuda").cudaAware, false);
  EXPECT_EQ(with("--prefix=/opt --with-cuda=no").cudaAware, false);
  const MpiCudaSupport silent = with("--prefix=/opt --with-device=ch4:ofi");
  EXPECT_FALSE(silent.cudaAware.has_value());
  EXPECT_TRUE(has(silent.evidence, "MPICH 4 looks for CUDA by itself")) << silent.evidence;
  EXPECT_EQ(silent.implementation, "MPICH 4.2.0");
  const MpiCudaSupport mvapich =
      mpiCudaFromMpichVersion("MVAPICH2 Version:     2.3.7\nMVAPICH2 configure:   --with-cuda=/usr/local/cuda\n");
  EXPECT_EQ(mvapich.implementation, "MVAPICH2 2.3.7");
  EXPECT_EQ(mvapich.cudaAware, true);
  EXPECT_EQ(mvapich.evidence, "configured --with-cuda=/usr/local/cuda");
}

TEST(MpiCuda, SavedOutputsStandForTheTools) {
  ScratchDir dir;
  EXPECT_TRUE(probeMpiCuda(std::chrono::seconds(1), dir / "").empty());  // no file: no tool
  std::ofstream(dir / "mpichversion.txt") << "MPICH Version: 4.1\nMPICH configure: --without-cuda\n";
  const auto found = probeMpiCuda(std::chrono::seconds(1), dir / "");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].implementation, "MPICH 4.1");
  EXPECT_EQ(found[0].cudaAware, false);
}

// A fake ompi_info (and a hanging mpichversion) first on PATH: the tools really run, bounded.
TEST(MpiCuda, RunsTheToolsFoundOnPathWithADeadline) {
  ScratchDir dir;
  const auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(dir / name, fs::perms::owner_all);
  };
  script("ompi_info",
         "[ \"$1 $2\" = \"--parsable --all\" ] || exit 9\n"
         "echo ompi:version:full:9.9.9\necho mca:opal:base:param:opal_built_with_cuda_support:value:true");
  script("mpichversion", "exec sleep 30");
  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  ::setenv("PATH", (dir / "" + ":" + saved).c_str(), 1);
  const auto start = Clock::now();
  const auto found = probeMpiCuda(std::chrono::milliseconds(300), "");
  const auto took = Clock::now() - start;
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_LT(took, std::chrono::seconds(5));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].implementation, "Open MPI 9.9.9");
  EXPECT_EQ(found[0].cudaAware, true);
  EXPECT_EQ(found[1].implementation, "MPICH");
  EXPECT_FALSE(found[1].cudaAware.has_value());
  EXPECT_TRUE(has(found[1].evidence, "mpichversion did not finish within 300 ms")) << found[1].evidence;
}

// ---- runBoundedCommand ----------------------------------------------------------------------------------

TEST(BoundedCommand, OutputAndExitStatus) {
  const CommandOutput run =
      runBoundedCommand({"sh", "-c", "echo hello; echo lost >&2; exit 3"}, std::chrono::seconds(10));
  EXPECT_TRUE(run.started);
  EXPECT_FALSE(run.timedOut);
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_EQ(run.out, "hello\n");  // standard error is discarded
  EXPECT_TRUE(run.problem.empty()) << run.problem;
}

TEST(BoundedCommand, NotOnPath) {
  const CommandOutput run = runBoundedCommand({"peerlink-no-such-tool-7f3a"}, std::chrono::seconds(10));
  EXPECT_FALSE(run.started);
  EXPECT_EQ(run.problem, "peerlink-no-such-tool-7f3a is not on PATH");
}

TEST(BoundedCommand, KilledWithWhatItStartedAtTheDeadline) {
  // The background job outlives the deadline: killing only the shell would leave it to write its file.
  ScratchDir dir;
  const std::string mark = dir / "survivor";
  const auto start = Clock::now();
  const CommandOutput run = runBoundedCommand({"sh", "-c", "echo started; (sleep 1; touch " + mark + ") & sleep 30"},
                                              std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(run.started);
  EXPECT_TRUE(run.timedOut);
  EXPECT_EQ(run.exitCode, -1);
  EXPECT_EQ(run.out, "started\n");
  EXPECT_EQ(run.problem, "sh did not finish within 300 ms");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(fs::exists(mark)) << "a process the command started survived the deadline";
}

TEST(BoundedCommand, KeepsAtMostTheCapAndStillReadsToTheEnd) {
  const CommandOutput run =
      runBoundedCommand({"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"}, std::chrono::seconds(10), 1000);
  EXPECT_EQ(run.exitCode, 0);  // the writer was not blocked by a full pipe
  EXPECT_EQ(run.out, std::string(1000, 'x'));
}

TEST(BoundedCommand, EmptyCommand) {
  EXPECT_FALSE(runBoundedCommand({}, std::chrono::seconds(1)).started);
}

}  // namespace
}  // namespace peerlink
