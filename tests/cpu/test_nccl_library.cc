// libpeerlink_nccl.so.2 itself: its exported symbols against NCCL 2.28.9's (the list in tests/fixtures/nccl_api,
// and the toolkit's libnccl.so.2 where it is installed), its SONAME, and its C entry points as an application
// reaches them -- loaded by path in a forked child with the settings of each case, so that what the library reads
// once at load time is tested too. Needs no GPU: every call here fails or succeeds before one is needed.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <nccl.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/unique_id.hpp"
#include "bootstrap/verdict.hpp"
#include "bootstrap_test_support.hpp"
#include "child_process.hpp"
#include "command_output.hpp"
#include "peerlink/launch.hpp"

namespace peerlink::testing {
namespace {

std::set<std::string> exportedFunctions(const std::string& library) {
  std::set<std::string> names;
  const std::string listing = commandOutput("nm -D --defined-only '" + library + "' 2>/dev/null");
  std::size_t start = 0;
  while (start < listing.size()) {
    const std::size_t end = listing.find('\n', start);
    const std::string line = listing.substr(start, end - start);
    start = end == std::string::npos ? listing.size() : end + 1;
    const std::size_t space = line.rfind(' ');
    if (space != std::string::npos) names.insert(line.substr(space + 1));
  }
  return names;
}

std::set<std::string> fixtureFunctions() {
  std::set<std::string> names;
  std::ifstream file(std::string(PEERLINK_FIXTURES_DIR) + "/nccl_api/libnccl-2.28.9.symbols");
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  return names;
}

bool exists(const char* path) {
  struct stat info {};
  return ::stat(path, &info) == 0;
}

TEST(NcclLibrary, ExportsExactlyTheFunctionsNcclExports) {
  const std::set<std::string> expected = fixtureFunctions();
  ASSERT_EQ(expected.size(), 104u) << "52 functions, each as ncclX and pncclX";
  const std::set<std::string> ours = exportedFunctions(PEERLINK_NCCL_LIBRARY_PATH);
  ASSERT_FALSE(ours.empty()) << "nm printed nothing for " << PEERLINK_NCCL_LIBRARY_PATH << " (is binutils installed?)";
  for (const std::string& name : expected) EXPECT_TRUE(ours.count(name)) << name << " is not exported";
  // Nothing of peerlink, the CUDA runtime or the C++ libraries leaks out.
  for (const std::string& name : ours) EXPECT_TRUE(expected.count(name)) << name << " is exported but not NCCL's";
}

TEST(NcclLibrary, TheToolkitsNcclExportsWhatTheFixtureSays) {
  if (!exists(PEERLINK_REAL_NCCL_PATH)) GTEST_SKIP() << "no " << PEERLINK_REAL_NCCL_PATH << " on this machine";
  std::set<std::string> real = exportedFunctions(PEERLINK_REAL_NCCL_PATH);
  ASSERT_EQ(real.erase("ncclResetDebugInitInternal"), 1u);
  EXPECT_EQ(real, fixtureFunctions());
}

TEST(NcclLibrary, ItsSonameIsLibncclSo2) {
  const std::string dynamic = commandOutput(std::string("readelf -d '") + PEERLINK_NCCL_LIBRARY_PATH + "'");
  EXPECT_NE(dynamic.find("Library soname: [libnccl.so.2]"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("libcudart"), std::string::npos) << "the CUDA runtime is linked in statically";
}

// ---- the C entry points, in a child that loads the library with `environment` set -------------------------

using Environment = std::map<std::string, std::string>;

// Runs `body(library handle)` in a child with `environment` set before the library loads; the child's exit code
// is kChildOk when every check held, and its stderr says which did not.
template <typename Body>
int inChild(const Environment& environment, Body body) {
  Child child([&] {
    // The library reads the launcher's variables at load too: none but the case's own.
    for (const std::string& name : launchVariableNames()) ::unsetenv(name.c_str());
    for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
    void* library = ::dlopen(PEERLINK_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
      return kChildWrongResult;
    }
    return body(library);
  });
  return child.wait(std::chrono::seconds(60));
}

template <typename Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(::dlsym(library, name));
}

// A check inside a child: prints what failed and returns false.
bool check(bool ok, const std::string& what) {
  if (!ok) std::fprintf(stderr, "check failed: %s\n", what.c_str());
  return ok;
}

bool lastErrorHas(void* library, const std::string& needle) {
  const auto lastError = symbol<decltype(&ncclGetLastError)>(library, "ncclGetLastError");
  const std::string text = lastError(nullptr);
  return check(text.find(needle) != std::string::npos, "the last error '" + text + "' lacks '" + needle + "'");
}

TEST(NcclLibrary, ReportsNccl2289OrTheVersionSet) {
  const auto version = [](int expected) {
    return [expected](void* library) {
      int code = 0;
      const auto getVersion = symbol<decltype(&ncclGetVersion)>(library, "ncclGetVersion");
      const bool ok = check(getVersion(&code) == ncclSuccess, "ncclGetVersion") &&
                      check(code == expected, "version " + std::to_string(code));
      return ok ? kChildOk : kChildWrongResult;
    };
  };
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "NONE"}}, version(22809)), kChildOk);
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "NONE"}, {"PEERLINK_NCCL_VERSION", "22703"}}, version(22703)),
            kChildOk);
}

TEST(NcclLibrary, AMalformedSettingFailsTheCallsNamingIt) {
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "sometimes"}},
                    [](void* library) {
                      int code = 0;
                      const auto getVersion = symbol<decltype(&ncclGetVersion)>(library, "ncclGetVersion");
                      const bool ok = check(getVersion(&code) == ncclInvalidUsage, "ncclGetVersion's result") &&
                                      lastErrorHas(library, "PEERLINK_NCCL_FALLBACK");
                      return ok ? kChildOk : kChildWrongResult;
                    }),
            kChildOk);
}

TEST(NcclLibrary, WrongCallsGetNcclsCodesAndALastErrorWithoutAGpu) {
  EXPECT_EQ(
      inChild({{"PEERLINK_NCCL_FALLBACK", "NONE"}, {"PEERLINK_BOOTSTRAP_ADDR", "127.0.0.1"}},
              [](void* library) {
                bool ok = true;
                int count = 0;
                const auto commCount = symbol<decltype(&ncclCommCount)>(library, "ncclCommCount");
                ok &= check(commCount(nullptr, &count) == ncclInvalidArgument, "ncclCommCount(NULL)");
                ok &= lastErrorHas(library, "ncclCommCount: the communicator is NULL");
                const auto groupEnd = symbol<decltype(&ncclGroupEnd)>(library, "ncclGroupEnd");
                ok &= check(groupEnd() == ncclInvalidUsage, "ncclGroupEnd without a start");
                const auto errorString = symbol<decltype(&ncclGetErrorString)>(library, "ncclGetErrorString");
                ok &= check(std::string(errorString(ncclRemoteError)).find("remote") != std::string::npos,
                            "ncclGetErrorString(ncclRemoteError)");
                ncclUniqueId id{};
                const auto getUniqueId = symbol<decltype(&ncclGetUniqueId)>(library, "ncclGetUniqueId");
                ok &= check(getUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
                ok &= check(std::memcmp(id.internal, "PLID", 4) == 0, "a peerlink id starts with PLID");
                ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
                config.magic = 0;
                ncclComm_t comm = nullptr;
                const auto initConfig = symbol<decltype(&ncclCommInitRankConfig)>(library, "ncclCommInitRankConfig");
                ok &= check(initConfig(&comm, 1, id, 0, &config) == ncclInvalidArgument, "a config without magic");
                ok &= lastErrorHas(library, "NCCL_CONFIG_INITIALIZER");
                // One rank: on a machine with a GPU it is created; without one the CUDA error is named.
                const auto initRank = symbol<decltype(&ncclCommInitRank)>(library, "ncclCommInitRank");
                const ncclResult_t result = initRank(&comm, 1, id, 0);
                if (result == ncclSuccess) {
                  ok &= check(symbol<decltype(&ncclCommDestroy)>(library, "ncclCommDestroy")(comm) == ncclSuccess,
                              "ncclCommDestroy");
                } else {
                  ok &= check(result == ncclUnhandledCudaError, "ncclCommInitRank without a GPU");
                  ok &= lastErrorHas(library, "cuda");
                }
                return ok ? kChildOk : kChildWrongResult;
              }),
      kChildOk);
}

TEST(NcclLibrary, NeverForwardsToItselfAndSaysWhyAllCannotBeServed) {
  // PEERLINK_NCCL_LIBRARY naming this very library (as LD_LIBRARY_PATH's libnccl.so.2 would) is skipped.
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "ALL"}, {"PEERLINK_NCCL_LIBRARY", PEERLINK_NCCL_LIBRARY_PATH}},
                    [](void* library) {
                      ncclUniqueId id{};
                      const auto getUniqueId = symbol<decltype(&ncclGetUniqueId)>(library, "ncclGetUniqueId");
                      const bool ok = check(getUniqueId(&id) == ncclSystemError, "ncclGetUniqueId under ALL") &&
                                      lastErrorHas(library, "this library itself");
                      return ok ? kChildOk : kChildWrongResult;
                    }),
            kChildOk);
}

TEST(NcclLibrary, AllHandsTheIdToTheRealNccl) {
  if (!exists(PEERLINK_REAL_NCCL_PATH)) GTEST_SKIP() << "no " << PEERLINK_REAL_NCCL_PATH << " on this machine";
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "ALL"},
                     {"PEERLINK_NCCL_LIBRARY", PEERLINK_REAL_NCCL_PATH},
                     {"NCCL_SOCKET_IFNAME", "lo"}},
                    [](void* library) {
                      ncclUniqueId id{};
                      const auto getUniqueId = symbol<decltype(&ncclGetUniqueId)>(library, "ncclGetUniqueId");
                      const ncclResult_t result = getUniqueId(&id);
                      const bool ok = check(result == ncclSuccess,
                                            "ncclGetUniqueId through the real NCCL: " + std::to_string(result)) &&
                                      check(std::memcmp(id.internal, "PLID", 4) != 0, "the real NCCL's id");
                      return ok ? kChildOk : kChildWrongResult;
                    }),
            kChildOk);
}

// No launcher says whether the job spans machines: ncclGetUniqueId makes peerlink's id, whose root may forward,
// without asking the real NCCL (whose id would start its own bootstrap root: a thread blocked in accept and a
// listening socket until the process exits) -- one thread more, peerlink's root, not two. When ranks of two hosts
// meet at that root (as threads of the child here, PEERLINK_HOSTID making the hosts), it asks the real NCCL then
// and every rank hears its id: NCCL 2.28's, its 40-byte bootstrap handle.
TEST(NcclLibrary, WithoutALauncherTheRealNcclIsAskedForAnIdOnlyWhenTheRootForwards) {
  if (!exists(PEERLINK_REAL_NCCL_PATH)) GTEST_SKIP() << "no " << PEERLINK_REAL_NCCL_PATH << " on this machine";
  EXPECT_EQ(inChild({{"PEERLINK_NCCL_FALLBACK", "AUTO"},
                     {"PEERLINK_NCCL_LIBRARY", PEERLINK_REAL_NCCL_PATH},
                     {"PEERLINK_BOOTSTRAP_ADDR", "127.0.0.1"},
                     {"NCCL_SOCKET_IFNAME", "lo"}},
                    [](void* library) {
                      ncclUniqueId id{};
                      const auto getUniqueId = symbol<decltype(&ncclGetUniqueId)>(library, "ncclGetUniqueId");
                      const Holdings before = holdings();
                      if (!check(getUniqueId(&id) == ncclSuccess, "ncclGetUniqueId")) return kChildWrongResult;
                      const Holdings after = holdings();
                      UniqueId carrier;
                      std::memcpy(carrier.bytes, id.internal, kUniqueIdBytes);
                      if (!check(bootstrap::decodeUniqueId(carrier).mayForward, "an id whose root may forward") ||
                          !check(after.threads == before.threads + 1,
                                 fmt::format("{} threads after ncclGetUniqueId, {} before: peerlink's root alone",
                                             after.threads, before.threads))) {
                        return kChildWrongResult;
                      }
                      std::vector<std::uint8_t> heard[2];
                      std::string errors[2];
                      std::vector<std::thread> ranks;
                      for (int rank = 0; rank < 2; ++rank) {
                        ranks.emplace_back([&, rank] {
                          // As the NCCL API's ranks with a real NCCL tell the root.
                          BootstrapOptions options = optionsWith(std::chrono::seconds(20), rank == 0 ? "a" : "b");
                          options.forwarding = ForwardAbility::Able;
                          try {
                            connectBootstrap(carrier, rank, 2, options);
                            errors[rank] = "no forward";
                          } catch (const bootstrap::ForwardedWorld& verdict) {
                            heard[rank] = verdict.ncclId();
                          } catch (const Error& error) {
                            errors[rank] = error.what();
                          }
                        });
                      }
                      for (std::thread& rank : ranks) rank.join();
                      const bool ok = check(errors[0].empty() && errors[1].empty(), errors[0] + " / " + errors[1]) &&
                                      check(heard[0] == heard[1], "one id for every rank") &&
                                      check(!heard[0].empty() && heard[0].size() <= 40, "NCCL 2.28's id in 40 bytes") &&
                                      check(std::memcmp(heard[0].data(), "PLID", 4) != 0, "the real NCCL's own id");
                      return ok ? kChildOk : kChildWrongResult;
                    }),
            kChildOk);
}

}  // namespace
}  // namespace peerlink::testing
