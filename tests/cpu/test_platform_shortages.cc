// The doctor short of something (file descriptors, memory, device files): a reading that failed is recorded as a
// failure and explained by the shortage, never taken for a fact about the hardware (doctor/shortage_checks.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doctor/platform_checks.hpp"
#include "doctor/platform_snapshot.hpp"
#include "doctor/shortage_checks.hpp"
#include "finding_test_support.hpp"
#include "peerlink/topology.hpp"
#include "platform_test_support.hpp"

namespace peerlink {
namespace {

// The trees tell what the process has left: descriptors, memory, the cgroup's headroom and the device files.
TEST(ReadPlatformSnapshot, ProcessResourcesFromTheTrees) {
  const PlatformSnapshot healthy = run("container").snapshot;
  EXPECT_EQ(healthy.openFiles, 12);
  EXPECT_EQ(healthy.memAvailableBytes, std::int64_t{480} << 30);
  EXPECT_EQ(healthy.cgroupMemoryFreeBytes, -1);  // memory.max is "max"
  EXPECT_EQ(healthy.addressSpaceLimit, -1);
  EXPECT_TRUE(healthy.gpuDeviceFiles.empty()) << ::testing::PrintToString(healthy.gpuDeviceFiles);
  EXPECT_TRUE(healthy.failed.empty()) << ::testing::PrintToString(healthy.failed);

  PlatformRoots roots = rootsOf("short_of_memory");
  roots.addressSpaceLimitOverride = std::int64_t{4} << 30;
  const PlatformSnapshot starved = run("short_of_memory", roots).snapshot;
  EXPECT_EQ(starved.memAvailableBytes, std::int64_t{256} << 20);
  EXPECT_EQ(starved.cgroupMemoryFreeBytes, std::int64_t{100} << 20);
  EXPECT_EQ(starved.addressSpaceLimit, std::int64_t{4} << 30);

  // A GPU's file missing says nothing (its number is the driver's minor number, not an index); nvidia-uvm does.
  const PlatformSnapshot hidden = run("hidden_device_files").snapshot;
  ASSERT_EQ(hidden.gpuDeviceFiles.size(), 1u) << ::testing::PrintToString(hidden.gpuDeviceFiles);
  EXPECT_TRUE(has(hidden.gpuDeviceFiles[0], "/dev/nvidia-uvm: No such file or directory"));
  PlatformRoots none = rootsOf("container");
  none.dev = kDoctor + "container/dev/shm";  // a /dev without NVIDIA files at all
  const PlatformSnapshot bare = readPlatformSnapshot(Topology{}, none);
  ASSERT_EQ(bare.gpuDeviceFiles.size(), 3u) << ::testing::PrintToString(bare.gpuDeviceFiles);
  EXPECT_TRUE(has(bare.gpuDeviceFiles[0], "no GPU's device file in this process's /dev"));
}

// Too few descriptors: NVML could not open GPUs 5-7, so it counted no NVLinks for them. Read as facts those
// zeros become NVLink findings that send the user to reseat GPUs; read as failed readings they are reported
// under their cause, and nothing is concluded about the links.
TEST(CheckPlatform, FewDescriptorsNeverBecomeAnNvlinkFinding) {
  const auto roots = rootsOf("few_descriptors", 64);
  Checked checked = run("few_descriptors", roots);
  EXPECT_EQ(codes(checked.findings), (Codes{"iommu_identity", "nvlink_unreadable", "open_file_limit"}));
  ASSERT_GE(checked.findings.size(), 2u);
  EXPECT_EQ(checked.findings[0].code, "open_file_limit");  // the root cause first, its consequences under it
  EXPECT_EQ(checked.findings[1].code, "nvlink_unreadable");
  const Finding nvlink = only(checked.findings, "nvlink_unreadable");
  EXPECT_EQ(nvlink.cause, "open_file_limit");
  EXPECT_EQ(nvlink.severity, Verdict::Ok);
  EXPECT_EQ(nvlink.gpus, (Gpus{5, 6, 7}));
  EXPECT_TRUE(has(nvlink.summary,
                  "could not read the NVLink state of GPU 5 (0000:ab:00.0): "
                  "nvmlDeviceGetHandleByIndex_v2(device 5) failed: Unknown Error (999); GPU 6"))
      << nvlink.summary;

  // The same readings taken as facts: what the doctor used to conclude.
  for (Gpu& gpu : checked.topology.gpus) gpu.failed = {};
  const auto blamed = checkPlatform(checked.topology, checked.snapshot);
  EXPECT_EQ(all(blamed, "nvlink_count_differs").size(), 3u);
  EXPECT_TRUE(has(all(blamed, "nvlink_count_differs")[0].fix, "reseat"));
}

// The limit is high, but the process holds nearly all of it: the shortage is named as such.
TEST(CheckPlatform, DescriptorsNearlyExhaustedUnderAHighLimit) {
  const auto high = run("few_descriptors", rootsOf("few_descriptors", 4096)).findings;  // 60 of 4096 open
  EXPECT_TRUE(all(high, "out_of_file_descriptors").empty());
  EXPECT_TRUE(all(high, "open_file_limit").empty());
  EXPECT_EQ(only(high, "nvlink_unreadable").cause, "");  // no shortage to blame: the failure stands alone
  PlatformSnapshot snapshot;
  snapshot.openFileLimit = 4096;
  snapshot.openFiles = 4090;
  std::vector<Finding> exhausted = checkPlatform(topologyOf("few_descriptors"), snapshot);
  const Finding cause = only(exhausted, "out_of_file_descriptors");
  EXPECT_TRUE(has(cause.summary, "holds 4090 file descriptors of the 4096")) << cause.summary;
  EXPECT_EQ(exhausted[0].code, "out_of_file_descriptors");
  EXPECT_EQ(only(exhausted, "nvlink_unreadable").cause, "out_of_file_descriptors");
}

// A reading that failed with EMFILE is itself the evidence, whatever the limit says.
TEST(CheckPlatform, AReadingThatFailedWithEmfileNamesTheShortage) {
  PlatformSnapshot snapshot;
  snapshot.openFileLimit = 1048576;
  snapshot.failed = {"kernel command line: cannot read /proc/cmdline: Too many open files"};
  const Topology topology = topologyOf("container");
  const auto findings = checkPlatform(topology, snapshot);
  const Finding cause = only(findings, "out_of_file_descriptors");
  EXPECT_TRUE(has(cause.summary, "Too many open files")) << cause.summary;
  const Finding platform = only(findings, "platform_unreadable");
  EXPECT_EQ(platform.cause, "out_of_file_descriptors");
  EXPECT_TRUE(has(platform.summary, "could not read kernel command line")) << platform.summary;
}

TEST(CheckPlatform, ShortOfMemoryIsTheCauseOfAFailedSysfsReading) {
  PlatformRoots roots = rootsOf("short_of_memory");
  roots.addressSpaceLimitOverride = std::int64_t{4} << 30;
  const auto findings = run("short_of_memory", roots).findings;
  EXPECT_EQ(codes(findings), (Codes{"address_space_limit", "iommu_identity", "memory_low", "sysfs_unreadable"}));
  const Finding limit = only(findings, "address_space_limit");
  EXPECT_EQ(limit.severity, Verdict::Degraded);
  EXPECT_TRUE(has(limit.summary, "limited to 4.0 GiB")) << limit.summary;
  EXPECT_TRUE(has(limit.fix, "ulimit -v unlimited")) << limit.fix;
  EXPECT_TRUE(has(only(findings, "memory_low").summary, "its cgroup has 100 MiB left"))
      << only(findings, "memory_low").summary;
  const Finding sysfs = only(findings, "sysfs_unreadable");
  EXPECT_EQ(sysfs.cause, "address_space_limit");
  EXPECT_EQ(sysfs.gpus, (Gpus{3}));
  EXPECT_TRUE(has(sysfs.summary, "the NUMA node of GPU 3 (0000:5d:00.0) (cannot read")) << sysfs.summary;
  // No numa_unknown: the node is unknown because the reading failed, not because the machine says -1.
  EXPECT_TRUE(all(findings, "numa_unknown").empty());
  EXPECT_EQ(findings[0].code, "address_space_limit");
  EXPECT_EQ(findings[1].code, "sysfs_unreadable");

  // Without the limit, the host's low memory is the cause.
  const auto low = run("short_of_memory").findings;
  EXPECT_EQ(only(low, "sysfs_unreadable").cause, "memory_low");
}

TEST(CheckPlatform, DeviceFilesHiddenFromTheProcessExplainFailedNvml) {
  const auto findings = run("hidden_device_files").findings;
  const Finding files = only(findings, "gpu_device_files");
  EXPECT_EQ(files.severity, Verdict::Degraded);
  EXPECT_TRUE(has(files.summary, "/dev/nvidia-uvm")) << files.summary;
  EXPECT_TRUE(has(files.fix, "nvidia-modprobe")) << files.fix;
  const Finding nvlink = only(findings, "nvlink_unreadable");
  EXPECT_EQ(nvlink.cause, "gpu_device_files");  // "Insufficient Permissions"
  EXPECT_EQ(nvlink.gpus, (Gpus{2}));
  EXPECT_TRUE(all(findings, "nvlink_count_differs").empty());
  EXPECT_TRUE(all(findings, "nvlink_missing_on_nvswitch").empty());
}

// CUDA that cannot start is explained by what the process is short of, never by the GPUs.
TEST(ExplainStartFailure, NamesTheShortagesAsTheLikelyCause) {
  PlatformRoots roots = rootsOf("short_of_memory");
  roots.addressSpaceLimitOverride = std::int64_t{2} << 30;
  const Topology none;
  const auto findings = checkPlatform(none, readPlatformSnapshot(none, roots));
  const std::string failure = "no CUDA GPU found: cudaGetDeviceCount returned cudaErrorMemoryAllocation (2)";
  const std::string explained = explainStartFailure(failure, findings);
  EXPECT_EQ(explained.rfind(failure, 0), 0u);
  EXPECT_TRUE(has(explained, "the likely cause: this process's address space is limited to 2.0 GiB")) << explained;
  EXPECT_TRUE(has(explained, "[address_space_limit]")) << explained;
  EXPECT_TRUE(has(explained, "ulimit -v unlimited")) << explained;

  const auto hidden = checkPlatform(none, readPlatformSnapshot(none, rootsOf("hidden_device_files")));
  EXPECT_TRUE(has(explainStartFailure("no CUDA GPU found: cudaGetDeviceCount returned cudaErrorUnknown", hidden),
                  "/dev/nvidia-uvm"));
  const auto healthy = checkPlatform(none, readPlatformSnapshot(none, rootsOf("container")));
  EXPECT_EQ(explainStartFailure(failure, healthy), failure);
}

TEST(ShortageOf, ReadsWhatRanShortFromTheFailure) {
  EXPECT_EQ(shortageOf("cannot read /sys/x: Too many open files"), "files");
  EXPECT_EQ(shortageOf("socket(AF_UNIX) failed: Too many open files in system"), "files");
  EXPECT_EQ(shortageOf("nvmlInit_v2 failed: Insufficient Memory (20)"), "memory");
  EXPECT_EQ(shortageOf("cannot read /proc/meminfo: Cannot allocate memory"), "memory");
  EXPECT_EQ(shortageOf("open /dev/nvidia0: Permission denied"), "permission");
  EXPECT_EQ(shortageOf("nvmlDeviceGetHandleByIndex_v2(device 1) failed: Unknown Error (999)"), "");
}

TEST(OrderByCause, PutsEachConsequenceUnderItsCause) {
  std::vector<Finding> findings = {
      {"a", Verdict::Broken, "", "", {}, ""},        {"effect1", Verdict::Ok, "", "", {}, "root"},
      {"b", Verdict::Degraded, "", "", {}, ""},      {"root", Verdict::Degraded, "", "", {}, ""},
      {"orphan", Verdict::Ok, "", "", {}, "absent"}, {"effect2", Verdict::Ok, "", "", {}, "root"}};
  orderByCause(findings);
  std::vector<std::string> order;
  for (const Finding& f : findings) order.push_back(f.code);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "root", "effect1", "effect2", "orphan"}));
}

}  // namespace
}  // namespace peerlink
