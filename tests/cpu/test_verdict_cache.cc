// The doctor's verdict cache: an entry is used only under the exact conditions it was stored under, and
// anything unexpected on disk is a miss, never an error.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "doctor/verdict_cache.hpp"

namespace peerlink {
namespace {

namespace fs = std::filesystem;

Topology load(const std::string& name) {
  return loadTopologyFile((fs::path(PEERLINK_FIXTURES_DIR) / "topologies" / (name + ".json")).string());
}

class VerdictCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / fmt::format("peerlink-verdict-cache-{}-{}", ::getpid(),
                                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    topology_ = load("dual_socket_pcie");
    key_ = makeVerdictCacheKey(topology_, 1, 2, "0f3c9d6e-boot", "BOOT_IMAGE=/vmlinuz iommu=pt", "full");
    decision_.verdict = PairVerdict{1, 2, Verdict::Broken, {"ce_write_dropped", "acs_redirect"}};
    decision_.findings = {
        Finding{"ce_write_dropped", Verdict::Broken, "GPU 1 -> GPU 2 ce_write: dropped", "fix ACS", {1, 2}, ""}};
    decision_.platform = {Finding{"acs_redirect", Verdict::Broken, "ACS on 0000:05:08.0", "setpci ...", {1, 2, 3}, ""}};
  }
  void TearDown() override { fs::remove_all(directory_); }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory_)) names.push_back(entry.path().filename().string());
    return names;
  }

  fs::path directory_;
  Topology topology_;
  VerdictCacheKey key_;
  PairDecision decision_;
};

TEST_F(VerdictCacheTest, StoresAndLoads) {
  const VerdictCache cache(directory_.string());
  EXPECT_FALSE(cache.load(key_, topology_).has_value());  // nothing yet, and no folder: a miss
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  const std::optional<CachedVerdict> cached = cache.load(key_, topology_);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->decision.verdict.src, 1);
  EXPECT_EQ(cached->decision.verdict.dst, 2);
  EXPECT_EQ(cached->decision.verdict.verdict, Verdict::Broken);
  EXPECT_EQ(cached->decision.verdict.reasons, decision_.verdict.reasons);
  ASSERT_EQ(cached->decision.findings.size(), 1u);
  EXPECT_EQ(cached->decision.findings[0].code, "ce_write_dropped");
  EXPECT_EQ(cached->decision.findings[0].severity, Verdict::Broken);
  EXPECT_EQ(cached->decision.findings[0].summary, decision_.findings[0].summary);
  EXPECT_EQ(cached->decision.findings[0].fix, "fix ACS");
  EXPECT_EQ(cached->decision.findings[0].gpus, (std::vector<int>{1, 2}));
  ASSERT_EQ(cached->decision.platform.size(), 1u);
  EXPECT_EQ(cached->decision.platform[0].gpus, (std::vector<int>{1, 2, 3}));
  EXPECT_GT(cached->storedAt, 0);
  struct stat info {};
  ASSERT_EQ(::stat(directory_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);

  // A second store replaces the entry; the pair in the other direction is another entry.
  decision_.verdict.verdict = Verdict::Ok;
  decision_.verdict.reasons.clear();
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  EXPECT_EQ(cache.load(key_, topology_)->decision.verdict.verdict, Verdict::Ok);
  const VerdictCacheKey back = makeVerdictCacheKey(topology_, 2, 1, key_.bootId, key_.kernelCommandLine, "full");
  EXPECT_NE(cache.pathFor(back), cache.pathFor(key_));
  EXPECT_FALSE(cache.load(back, topology_).has_value());
}

TEST_F(VerdictCacheTest, GpusAreStoredByBusIdAndMappedToThisProcess) {
  const VerdictCache cache(directory_.string());
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  // Another process sees the GPUs in another order (CUDA_VISIBLE_DEVICES=3,2,1,0).
  Topology reordered = topology_;
  std::reverse(reordered.gpus.begin(), reordered.gpus.end());
  const std::optional<CachedVerdict> cached = cache.load(key_, reordered);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->decision.verdict.src, 2);
  EXPECT_EQ(cached->decision.verdict.dst, 1);
  EXPECT_EQ(cached->decision.findings[0].gpus, (std::vector<int>{2, 1}));
  EXPECT_EQ(cached->decision.platform[0].gpus, (std::vector<int>{2, 1, 0}));
}

TEST_F(VerdictCacheTest, AnyKeyMismatchIsAMiss) {
  const VerdictCache cache(directory_.string());
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  ASSERT_TRUE(cache.load(key_, topology_).has_value());
  const std::vector<std::pair<const char*, void (*)(VerdictCacheKey&)>> changes = {
      {"boot id", [](VerdictCacheKey& k) { k.bootId = "another-boot"; }},
      {"driver", [](VerdictCacheKey& k) { k.driverVersion = "555.42.02"; }},
      {"kernel command line", [](VerdictCacheKey& k) { k.kernelCommandLine += " pcie_acs_override=downstream"; }},
      {"source bus id", [](VerdictCacheKey& k) { k.srcBusId = "0000:03:00.0"; }},
      {"destination bus id", [](VerdictCacheKey& k) { k.dstBusId = "0000:81:00.0"; }},
      {"GPU swapped in the slot", [](VerdictCacheKey& k) { k.dstUuid = "GPU-00000000-0000-0000-0000-000000000000"; }},
      {"peerlink version", [](VerdictCacheKey& k) { k.peerlinkVersion = "9.9.9 abcdef"; }},
      {"options", [](VerdictCacheKey& k) { k.options = "quick"; }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    VerdictCacheKey other = key_;
    change(other);
    EXPECT_FALSE(cache.load(other, topology_).has_value());
  }
  // A key the cache cannot trust is neither loaded nor stored.
  VerdictCacheKey noBoot = key_;
  noBoot.bootId.clear();
  EXPECT_FALSE(noBoot.usable());
  EXPECT_FALSE(cache.store(noBoot, topology_, decision_));
  EXPECT_FALSE(cache.load(noBoot, topology_).has_value());
}

TEST_F(VerdictCacheTest, CorruptOrForeignFilesAreMissesNotErrors) {
  const VerdictCache cache(directory_.string());
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  const std::string path = cache.pathFor(key_);
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto rewrite = [&](const std::string& content) { std::ofstream(path, std::ios::trunc) << content; };
  for (const std::string& content :
       {text.substr(0, text.size() / 2), std::string(), std::string("not json"), std::string("[1, 2]"),
        std::string(R"({"schema": "peerlink.doctor_cache", "version": 1})")}) {
    rewrite(content);
    EXPECT_NO_THROW(EXPECT_FALSE(cache.load(key_, topology_).has_value()));
  }
  std::string foreign = text;
  foreign.replace(foreign.find("\"version\": 1"), 12, "\"version\": 2");
  rewrite(foreign);
  EXPECT_FALSE(cache.load(key_, topology_).has_value());
  std::string badVerdict = text;
  badVerdict.replace(badVerdict.find("\"BROKEN\""), 8, "\"FINE\"");
  rewrite(badVerdict);
  EXPECT_FALSE(cache.load(key_, topology_).has_value());
  fs::remove(path);
  fs::create_directory(path);  // not a regular file
  EXPECT_FALSE(cache.load(key_, topology_).has_value());
  fs::remove(path);
  // A corrupt entry is simply replaced by the next store.
  rewrite("garbage");
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  EXPECT_TRUE(cache.load(key_, topology_).has_value());
}

TEST_F(VerdictCacheTest, AtomicWriteLeavesNoTemporaryFile) {
  const VerdictCache cache(directory_.string());
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  ASSERT_TRUE(cache.store(makeVerdictCacheKey(topology_, 2, 1, key_.bootId, "", ""), topology_, decision_));
  const std::vector<std::string> names = files();
  EXPECT_EQ(names.size(), 2u);
  for (const std::string& name : names) {
    EXPECT_EQ(name.rfind("doctor-", 0), 0u) << name;
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
  }
}

TEST_F(VerdictCacheTest, UnwritableFolderIsNotAnError) {
  fs::create_directories(directory_);
  std::ofstream(directory_ / "file") << "x";
  const VerdictCache cache((directory_ / "file" / "peerlink").string());  // below a regular file
  EXPECT_FALSE(cache.store(key_, topology_, decision_));
  EXPECT_FALSE(cache.load(key_, topology_).has_value());
  EXPECT_FALSE(VerdictCache("").store(key_, topology_, decision_));
}

TEST_F(VerdictCacheTest, LoadAnyOptionsIgnoresOnlyTheOptions) {
  const VerdictCache cache(directory_.string());
  ASSERT_TRUE(cache.store(key_, topology_, decision_));
  VerdictCacheKey quick = key_;
  quick.options = "quick";
  EXPECT_FALSE(cache.load(quick, topology_).has_value());
  const std::optional<CachedVerdict> any = cache.loadAnyOptions(quick, topology_);
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->decision.verdict.verdict, Verdict::Broken);
  VerdictCacheKey otherBoot = quick;
  otherBoot.bootId = "another-boot";
  EXPECT_FALSE(cache.loadAnyOptions(otherBoot, topology_).has_value());
  VerdictCacheKey otherDriver = quick;
  otherDriver.driverVersion = "999.1";
  EXPECT_FALSE(cache.loadAnyOptions(otherDriver, topology_).has_value());
}

// What `peerlink place` reads: every directed pair cached under this boot, whatever the probe options.
TEST_F(VerdictCacheTest, ReadCachedVerdictsFindsThisBootsEntries) {
  const std::string bootId = readBootId();
  if (bootId.empty()) GTEST_SKIP() << "this machine's boot id is unreadable";
  Params params;
  params.set("PEERLINK_DOCTOR_CACHE_DIR", directory_.string());
  const CachedVerdicts none = readCachedVerdicts(topology_, params);
  EXPECT_TRUE(none.pairs.empty());
  EXPECT_EQ(none.absence, fmt::format("none cached in {} for this boot, driver and these GPUs (run `peerlink doctor`)",
                                      directory_.string()));

  const VerdictCache cache(directory_.string());
  const std::string commandLine = readKernelCommandLine();
  ASSERT_TRUE(cache.store(makeVerdictCacheKey(topology_, 1, 2, bootId, commandLine, "full"), topology_, decision_));
  PairDecision ok;
  ok.verdict = PairVerdict{0, 1, Verdict::Ok, {}};
  ASSERT_TRUE(cache.store(makeVerdictCacheKey(topology_, 0, 1, bootId, commandLine, "quick"), topology_, ok));
  // Another boot's entry for a third pair is not this boot's verdict.
  ok.verdict = PairVerdict{2, 1, Verdict::Ok, {}};
  ASSERT_TRUE(cache.store(makeVerdictCacheKey(topology_, 2, 1, "old-boot", commandLine, "full"), topology_, ok));

  const CachedVerdicts found = readCachedVerdicts(topology_, params);
  ASSERT_EQ(found.pairs.size(), 2u);
  EXPECT_EQ(found.pairs[0].src, 0);
  EXPECT_EQ(found.pairs[0].verdict, Verdict::Ok);
  EXPECT_EQ(found.pairs[1].src, 1);
  EXPECT_EQ(found.pairs[1].dst, 2);
  EXPECT_EQ(found.pairs[1].verdict, Verdict::Broken);
  EXPECT_EQ(found.directory, directory_.string());
  EXPECT_TRUE(found.absence.empty());

  params.set("PEERLINK_DOCTOR_CACHE", "off");
  const CachedVerdicts off = readCachedVerdicts(topology_, params);
  EXPECT_TRUE(off.pairs.empty());
  EXPECT_EQ(off.absence, "the doctor's verdict cache is off (PEERLINK_DOCTOR_CACHE=off)");
}

TEST(VerdictCacheKeys, BootIdAndKeyFromTopology) {
  const fs::path proc = fs::temp_directory_path() / fmt::format("peerlink-fake-proc-{}", ::getpid());
  fs::create_directories(proc / "sys/kernel/random");
  std::ofstream(proc / "sys/kernel/random/boot_id") << "3b4a2c1e-aaaa-bbbb-cccc-0123456789ab\n";
  EXPECT_EQ(readBootId(proc.string()), "3b4a2c1e-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(readBootId((proc / "missing").string()), "");
  std::ofstream(proc / "cmdline") << "BOOT_IMAGE=/vmlinuz iommu=pt \n";
  EXPECT_EQ(readKernelCommandLine(proc.string()), "BOOT_IMAGE=/vmlinuz iommu=pt");
  fs::remove_all(proc);

  const Topology topology = load("h200x4_vm");
  const VerdictCacheKey key = makeVerdictCacheKey(topology, 0, 3, "boot", "cmdline", "quick");
  EXPECT_EQ(key.srcBusId, "0000:00:06.0");
  EXPECT_EQ(key.dstBusId, "0000:00:09.0");
  EXPECT_EQ(key.srcUuid, topology.gpus[0].uuid);
  EXPECT_EQ(key.driverVersion, "580.159.04");
  EXPECT_FALSE(key.peerlinkVersion.empty());
  EXPECT_TRUE(key.usable());

  const std::string directory = defaultVerdictCacheDirectory();
  if (!directory.empty()) {
    EXPECT_EQ(fs::path(directory).filename(), "peerlink");
  }
}

}  // namespace
}  // namespace peerlink
