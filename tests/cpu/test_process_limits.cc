// processShortageNote: what an error message adds when the process is short of descriptors or address space,
// measured in forked children whose limits are lowered (the test process keeps its own).
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "core/process_limits.hpp"

namespace peerlink {
namespace {

using namespace ::peerlink::testing;

long openDescriptors() {
  long count = -1;  // the listing's own
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
    ::closedir(dir);
  }
  return count;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ProcessShortageNote, NothingWhenNothingIsShort) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur != RLIM_INFINITY && static_cast<long>(files.rlim_cur) - openDescriptors() < kFewDescriptorsLeft) {
    GTEST_SKIP() << "this test process itself is short of descriptors";
  }
  rlimit space{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &space), 0);
  if (space.rlim_cur != RLIM_INFINITY) GTEST_SKIP() << "this test process has an address-space limit";
  EXPECT_EQ(processShortageNote(), "");
}

TEST(ProcessShortageNote, NamesDescriptorsNearlyAllOpen) {
  Child child([] {
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = static_cast<rlim_t>(openDescriptors() + 4);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return kChildWrongResult;
    const std::string note = processShortageNote();
    std::fprintf(stderr, "%s\n", note.c_str());
    return has(note, "file descriptors its limit allows (RLIMIT_NOFILE)") && has(note, "ulimit -n") ? kChildOk
                                                                                                    : kChildWrongResult;
  });
  EXPECT_EQ(child.wait(), kChildOk);
}

// The limit bounds descriptor numbers: set to the lowest free one, no descriptor can be opened at all.
TEST(ProcessShortageNote, NamesTheDescriptorsWhenNoneIsLeft) {
  Child child([] {
    const int lowestFree = ::dup(0);
    ::close(lowestFree);
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = static_cast<rlim_t>(lowestFree);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return kChildWrongResult;
    const std::string note = processShortageNote();
    std::fprintf(stderr, "%s\n", note.c_str());
    return has(note, "no file descriptor left") ? kChildOk : kChildWrongResult;
  });
  EXPECT_EQ(child.wait(), kChildOk);
}

// A limit on the address space below what CUDA reserves. Under AddressSanitizer the process already maps far
// more (its shadow memory), so no limit that lets it run can be set.
TEST(ProcessShortageNote, NamesAnAddressSpaceLimit) {
  long vmKiB = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) vmKiB = std::stol(line.substr(7));
  }
  if (vmKiB > (std::int64_t{256} << 20)) GTEST_SKIP() << "this process maps " << (vmKiB >> 20) << " GiB (sanitizers)";
  Child child([vmKiB] {
    rlimit limit{};
    ::getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = static_cast<rlim_t>(vmKiB + (std::int64_t{2} << 20)) * 1024;  // 2 GiB to spare
    if (::setrlimit(RLIMIT_AS, &limit) != 0) return kChildWrongResult;
    const std::string note = processShortageNote();
    std::fprintf(stderr, "%s\n", note.c_str());
    return has(note, "address space is limited to") && has(note, "ulimit -v unlimited") ? kChildOk : kChildWrongResult;
  });
  EXPECT_EQ(child.wait(), kChildOk);
}

}  // namespace
}  // namespace peerlink
