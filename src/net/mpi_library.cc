// Loading libpeerlink_mpi.so and MpiPointToPoint (mpi_library.hpp).
#include "net/mpi_library.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>

#include "net/mpi_abi.h"
#include "peerlink/error.hpp"

namespace peerlink::net {
namespace {

constexpr const char* kLibraryName = "libpeerlink_mpi.so";
constexpr std::size_t kErrorBytes = 512;

struct Loaded {
  const peerlink_mpi_v2* table = nullptr;
  std::string path;
};

std::string programDirectory() {
  char path[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return "";
  std::string text(path, static_cast<std::size_t>(length));
  const std::size_t slash = text.rfind('/');
  return slash == std::string::npos ? "" : text.substr(0, slash);
}

// The table of the first candidate that loads and speaks this ABI. A loaded library stays loaded (MPI may
// still run its code), so the result is kept for the process, per setting.
const Loaded& load(const std::string& setting) {
  static std::mutex mutex;
  static std::vector<std::pair<std::string, Loaded>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [key, value] : loaded) {
    if (key == setting) return value;
  }
  std::string tried;
  for (const std::string& candidate : mpiLibraryCandidates(setting, programDirectory())) {
    // Global, as Open MPI's components expect to find libmpi's symbols.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      const std::string text = why != nullptr ? why : "not loadable";
      tried += (tried.empty() ? " " : "; ") + (text.rfind(candidate, 0) == 0 ? text : candidate + ": " + text);
      continue;
    }
    auto entry = reinterpret_cast<peerlink_mpi_entry_fn>(dlsym(handle, PEERLINK_MPI_ENTRY));
    const peerlink_mpi_v2* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr || table->abi_version != PEERLINK_MPI_ABI_VERSION ||
        table->table_bytes < sizeof(peerlink_mpi_v2)) {
      const unsigned version = table != nullptr                                  ? table->abi_version
                               : dlsym(handle, PEERLINK_MPI_ENTRY_V1) != nullptr ? 1u
                                                                                 : 0u;
      tried += (tried.empty() ? " " : "; ") + candidate + ": not a libpeerlink_mpi of this peerlink (ABI version " +
               (version != 0 ? std::to_string(version) : std::string("unknown")) + ", want " +
               std::to_string(PEERLINK_MPI_ABI_VERSION) + "; rebuild it with this peerlink)";
      dlclose(handle);
      continue;
    }
    loaded.emplace_back(setting, Loaded{table, candidate});
    return loaded.back().second;
  }
  throw Error(ErrorCode::Unsupported,
              std::string("the transport between nodes needs ") + kLibraryName +
                  ", peerlink's part built against your MPI (cmake -DPEERLINK_WITH_MPI=ON where find_package(MPI) "
                  "finds it; installed beside libpeerlink), or PEERLINK_MPI_LIBRARY naming it; tried:" +
                  tried);
}

std::string text(const char* buffer) {
  return std::string(buffer);
}

class MpiPointToPoint final : public PointToPoint {
 public:
  MpiPointToPoint(const peerlink_mpi_v2* mpi, void* comm) : mpi_(mpi), comm_(comm) {
    rank_ = mpi_->rank(comm_);
    size_ = mpi_->size(comm_);
    maxTag_ = mpi_->tag_ub(comm_);
  }
  ~MpiPointToPoint() override { mpi_->close(comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int maxTag() const override { return maxTag_; }

  Request isend(int peer, int tag, const void* data, std::size_t bytes) override {
    char error[kErrorBytes] = {};
    void* request = nullptr;
    if (mpi_->isend(comm_, data, bytes, peer, tag, &request, error, sizeof error) != 0) {
      throw Error(ErrorCode::RemoteError, "sending to rank " + std::to_string(peer) + ": " + text(error));
    }
    return reinterpret_cast<Request>(request);
  }

  Request irecv(int peer, int tag, void* data, std::size_t bytes) override {
    char error[kErrorBytes] = {};
    void* request = nullptr;
    if (mpi_->irecv(comm_, data, bytes, peer, tag, &request, error, sizeof error) != 0) {
      throw Error(ErrorCode::RemoteError, "receiving from rank " + std::to_string(peer) + ": " + text(error));
    }
    return reinterpret_cast<Request>(request);
  }

  bool test(Request request, std::size_t* received) override {
    char error[kErrorBytes] = {};
    int done = 0;
    std::size_t bytes = 0;
    if (mpi_->test(reinterpret_cast<void*>(request), &done, &bytes, error, sizeof error) != 0) {
      throw Error(ErrorCode::RemoteError, text(error));
    }
    if (done && received != nullptr) *received = bytes;
    return done != 0;
  }

  void abandon(Request request) noexcept override { mpi_->abandon(reinterpret_cast<void*>(request)); }

 private:
  const peerlink_mpi_v2* mpi_;
  void* comm_;
  int rank_ = 0;
  int size_ = 0;
  int maxTag_ = 32767;
};

const char* threadLevelName(int level) {
  switch (level) {
    case PEERLINK_MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case PEERLINK_MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case PEERLINK_MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

std::vector<std::string> mpiLibraryCandidates(const std::string& setting, const std::string& directory) {
  if (!setting.empty()) return {setting};
  std::vector<std::string> candidates;
  if (!directory.empty()) {
    candidates.push_back(directory + "/" + kLibraryName);
    candidates.push_back(directory + "/../lib/" + kLibraryName);
  }
  candidates.push_back(kLibraryName);  // the loader's path (LD_LIBRARY_PATH, the cache)
  return candidates;
}

MpiFacts mpiFacts(const Params& params) {
  const Loaded& loaded = load(params.getString("PEERLINK_MPI_LIBRARY"));
  MpiFacts facts;
  char version[256] = {};
  loaded.table->library_version(version, sizeof version);
  facts.library = version;
  facts.path = loaded.path;
  int level = 0;
  facts.initialized = loaded.table->initialized(&level) == 1;
  facts.threadLevel = level;
  facts.cudaSupport = facts.initialized ? loaded.table->cuda_support() : -1;
  if (facts.initialized) loaded.table->world_place(&facts.worldRank, &facts.worldSize);
  return facts;
}

PathFacts pathFactsOf(const MpiFacts& mpi, const Params& params, bool callerMemoryIsHost) {
  PathFacts facts;
  facts.callerMemoryIsHost = callerMemoryIsHost;
  facts.mpiCudaSupport = mpi.cudaSupport;
  facts.setting = params.getString("PEERLINK_NET_CUDA_AWARE");
  facts.mpiName = mpi.library;
  return facts;
}

std::string mpiUnusableReason(const MpiFacts& facts) {
  if (!facts.initialized) {
    return "MPI is not initialized (" + facts.library +
           "): call MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) before the transport between "
           "nodes is made, and finalize MPI after it is destroyed";
  }
  if (facts.threadLevel != PEERLINK_MPI_THREAD_MULTIPLE) {
    return std::string("MPI was initialized with ") + threadLevelName(facts.threadLevel) + " (" + facts.library +
           "); the transport between nodes calls MPI from its own progress thread, which needs "
           "MPI_THREAD_MULTIPLE: initialize with MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)";
  }
  return "";
}

bool initializeMpiThreadMultiple(const Params& params) {
  const peerlink_mpi_v2* table = load(params.getString("PEERLINK_MPI_LIBRARY")).table;
  char error[kErrorBytes] = {};
  int here = 0;
  int level = 0;
  if (table->init_thread_multiple(&here, &level, error, sizeof error) != 0) {
    char version[256] = {};
    table->library_version(version, sizeof version);
    throw Error(ErrorCode::SystemError, "initializing MPI (" + text(version) + "): " + text(error));
  }
  return here != 0;
}

void finalizeMpi(const Params& params) {
  const peerlink_mpi_v2* table = load(params.getString("PEERLINK_MPI_LIBRARY")).table;
  char error[kErrorBytes] = {};
  if (table->finalize(error, sizeof error) != 0) throw Error(ErrorCode::SystemError, text(error));
}

std::unique_ptr<PointToPoint> openMpiPointToPoint(const Params& params, std::int64_t fortranComm) {
  const MpiFacts facts = mpiFacts(params);
  const std::string unusable = mpiUnusableReason(facts);
  if (!unusable.empty()) throw Error(ErrorCode::InvalidUsage, unusable);
  const peerlink_mpi_v2* table = load(params.getString("PEERLINK_MPI_LIBRARY")).table;
  char error[kErrorBytes] = {};
  void* comm = nullptr;
  if (table->open(fortranComm, &comm, error, sizeof error) != 0) {
    throw Error(ErrorCode::RemoteError, "opening the MPI communicator for the transport between nodes: " + text(error));
  }
  return std::make_unique<MpiPointToPoint>(table, comm);
}

}  // namespace peerlink::net
