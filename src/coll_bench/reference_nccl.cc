#include "coll_bench/reference_nccl.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"

namespace peerlink::coll {
namespace {

bool isFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::vector<std::string> globFiles(const std::string& pattern) {
  std::vector<std::string> found;
  glob_t matches{};
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) found.emplace_back(matches.gl_pathv[i]);
  }
  ::globfree(&matches);
  return found;
}

std::string envOr(const char* name) {
  const char* value = std::getenv(name);  // not a PEERLINK_* setting: HOME, VIRTUAL_ENV, CONDA_PREFIX
  return value == nullptr ? std::string() : std::string(value);
}

// The folder of Python's nvidia.nccl package, asked of python3 itself (bounded by coreutils' timeout).
std::string askPython() {
  const char* command =
      "timeout 10 python3 -c \"import os, nvidia.nccl as m; "
      "print(os.path.join(list(m.__path__)[0], 'lib', 'libnccl.so.2'))\" 2>/dev/null";
  FILE* pipe = ::popen(command, "r");
  if (pipe == nullptr) return {};
  std::string text;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  ::pclose(pipe);
  return trimSpace(text);
}

template <typename Function>
bool resolve(void* handle, const char* name, Function& target) {
  void* symbol = ::dlsym(handle, name);
  target = reinterpret_cast<Function>(symbol);
  return symbol != nullptr;
}

}  // namespace

ncclDataType_t ncclDataTypeOf(DataType type) noexcept {
  switch (type) {
    case DataType::I8: return 0;
    case DataType::U8: return 1;
    case DataType::I32: return 2;
    case DataType::U32: return 3;
    case DataType::I64: return 4;
    case DataType::U64: return 5;
    case DataType::F16: return 6;
    case DataType::F32: return 7;
    case DataType::F64: return 8;
    case DataType::BF16: return 9;
  }
  return 7;
}

ncclRedOp_t ncclRedOpOf(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max: return 2;
    case ReduceOp::Min: return 3;
    case ReduceOp::Avg: return 4;
  }
  return 0;
}

std::string ncclVersionString(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

std::vector<std::string> ncclCandidates(const std::string& configured) {
  if (!configured.empty()) return {configured};
  std::vector<std::string> candidates{"libnccl.so.2"};
  std::set<std::string> seen;
  auto add = [&](const std::string& pattern) {
    for (const std::string& path : globFiles(pattern)) {
      if (isFile(path) && seen.insert(path).second) candidates.push_back(path);
    }
  };
  for (const char* folder : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/*/lib",
                             "/usr/local/cuda-*/lib64", "/usr/local/cuda-*/lib", "/usr/local/cuda-*/targets/*/lib"}) {
    add(std::string(folder) + "/libnccl.so.2");
  }
  std::vector<std::string> sitePackages = {
      "/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages",
      "/usr/local/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages"};
  for (const char* variable : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const std::string prefix = envOr(variable);
    if (!prefix.empty()) sitePackages.push_back(prefix + "/lib/python3*/site-packages");
  }
  const std::string home = envOr("HOME");
  if (!home.empty()) sitePackages.push_back(home + "/.local/lib/python3*/site-packages");
  for (const std::string& folder : sitePackages) add(folder + "/nvidia/nccl/lib/libnccl.so.2");
  return candidates;
}

ReferenceNccl loadReferenceNcclFile(const std::string& path) {
  ReferenceNccl library;
  library.path = path;
  ::dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    library.reason = fmt::format("cannot load {}: {}", path, why != nullptr ? why : "dlopen failed");
    return library;
  }
  NcclApi& api = library.api;
  if (!resolve(handle, "ncclGetVersion", api.getVersion)) {
    library.reason = fmt::format("{} is not NCCL (no symbol ncclGetVersion)", path);
    ::dlclose(handle);
    return library;
  }
  const std::pair<const char*, bool> required[] = {
      {"ncclGetErrorString", resolve(handle, "ncclGetErrorString", api.getErrorString)},
      {"ncclCommInitAll", resolve(handle, "ncclCommInitAll", api.commInitAll)},
      {"ncclGetUniqueId", resolve(handle, "ncclGetUniqueId", api.getUniqueId)},
      {"ncclCommInitRank", resolve(handle, "ncclCommInitRank", api.commInitRank)},
      {"ncclCommDestroy", resolve(handle, "ncclCommDestroy", api.commDestroy)},
      {"ncclGroupStart", resolve(handle, "ncclGroupStart", api.groupStart)},
      {"ncclGroupEnd", resolve(handle, "ncclGroupEnd", api.groupEnd)},
      {"ncclAllReduce", resolve(handle, "ncclAllReduce", api.allReduce)},
      {"ncclBroadcast", resolve(handle, "ncclBroadcast", api.broadcast)},
      {"ncclReduce", resolve(handle, "ncclReduce", api.reduce)},
      {"ncclAllGather", resolve(handle, "ncclAllGather", api.allGather)},
      {"ncclReduceScatter", resolve(handle, "ncclReduceScatter", api.reduceScatter)},
      {"ncclSend", resolve(handle, "ncclSend", api.send)},
      {"ncclRecv", resolve(handle, "ncclRecv", api.recv)},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      library.reason = fmt::format("{} lacks {} (NCCL older than 2.7 is not supported)", path, name);
      return library;  // not unloaded: a partly-NCCL library may have started threads
    }
  }
  resolve(handle, "ncclGetLastError", api.getLastError);
  resolve(handle, "ncclAlltoAll", api.allToAll);
  const bool memory = resolve(handle, "ncclMemAlloc", api.memAlloc) && resolve(handle, "ncclMemFree", api.memFree);
  const bool windows = resolve(handle, "ncclCommWindowRegister", api.commWindowRegister) &&
                       resolve(handle, "ncclCommWindowDeregister", api.commWindowDeregister);
  int code = 0;
  if (api.getVersion(&code) != kNcclSuccess || code <= 0) {
    library.reason = fmt::format("{}: ncclGetVersion failed", path);
    return library;
  }
  library.versionCode = code;
  library.loaded = true;
  Dl_info info{};  // the file the loader found for a bare name such as libnccl.so.2
  if (::dladdr(::dlsym(handle, "ncclGetVersion"), &info) != 0 && info.dli_fname != nullptr) {
    library.path = info.dli_fname;
  }
  if (code < kNcclSymmetricMinVersion || !windows) {
    library.symmetricReason = fmt::format("NCCL {} < 2.27 (no ncclCommWindowRegister)", ncclVersionString(code));
  } else if (!memory) {
    library.symmetricReason = fmt::format("NCCL {} has no ncclMemAlloc", ncclVersionString(code));
  } else {
    library.symmetric = true;
  }
  return library;
}

ReferenceNccl loadReferenceNccl(const std::string& configured) {
  std::vector<std::string> candidates = ncclCandidates(configured);
  std::vector<std::string> searched;
  ReferenceNccl last;
  auto tryEach = [&](const std::vector<std::string>& paths) -> bool {
    for (const std::string& path : paths) {
      last = loadReferenceNcclFile(path);
      searched.push_back(last.loaded ? path + ": NCCL " + ncclVersionString(last.versionCode)
                                     : path + ": " + last.reason);
      if (last.loaded) return true;
    }
    return false;
  };
  bool found = tryEach(candidates);
  if (!found && configured.empty()) {
    const std::string fromPython = askPython();
    if (!fromPython.empty() && isFile(fromPython)) found = tryEach({fromPython});
  }
  last.searched = searched;
  if (found) return last;
  if (!configured.empty()) {
    last.reason = "PEERLINK_NCCL_LIBRARY=" + configured + ": " + last.reason;
  } else if (candidates.size() == 1) {
    last.reason =
        "libnccl.so.2 not found on the loader path, beside the CUDA toolkit or in Python's nvidia.nccl package; "
        "set PEERLINK_NCCL_LIBRARY to its path";
  } else {
    last.reason = fmt::format("no usable libnccl among {} candidates (last: {})", searched.size(), last.reason);
  }
  return last;
}

std::string ensureNvlsDisabled() {
  const std::string current = envOr("NCCL_NVLS_ENABLE");
  if (!current.empty()) return "NCCL_NVLS_ENABLE=" + current + " (set by the user; left as is)";
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  return "NCCL_NVLS_ENABLE=0 (set by peerlink: NVLink multicast off)";
}

std::string ncclErrorText(const ReferenceNccl& library, ncclResult_t result, ncclComm_t comm) {
  static const char* const kNames[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                       "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                       "ncclRemoteError",   "ncclInProgress"};
  const std::string name = result >= 0 && result < 8 ? kNames[result] : fmt::format("ncclResult {}", result);
  std::string text = name;
  if (library.api.getErrorString != nullptr) text += fmt::format(" ({})", library.api.getErrorString(result));
  if (library.api.getLastError != nullptr) {
    const char* last = library.api.getLastError(comm);
    if (last != nullptr && *last != '\0') text += fmt::format(": {}", last);
  }
  return text;
}

}  // namespace peerlink::coll
