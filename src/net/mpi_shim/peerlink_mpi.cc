// libpeerlink_mpi.so: the table of mpi_abi.h over the MPI this file is compiled against (Open MPI, MPICH and its
// derivatives). Nothing but MPI calls: the transport's logic is libpeerlink's. Messages larger than INT_MAX bytes
// never come here (the transport cuts calls into pieces of at most PEERLINK_NET_CHUNK_BYTES).
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include <climits>
#include <cstdio>
#include <cstring>
#include <new>

#include "net/mpi_abi.h"

namespace {

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};

struct Request {
  MPI_Request request = MPI_REQUEST_NULL;
  bool receive = false;
};

void fail(char* error, std::size_t bytes, const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error %d", code);
  std::snprintf(error, bytes, "%s failed: %s", call, text);
}

void libraryVersion(char* text, std::size_t bytes) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  version[sizeof(version) - 1] = '\0';
  char* end = std::strpbrk(version, "\r\n,");
  if (end != nullptr) *end = '\0';
  // One line with single spaces ("MPICH Version:\t4.0.2" has a tab).
  std::size_t out = 0;
  for (const char* in = version; *in != '\0' && out + 1 < bytes; ++in) {
    const bool blank = *in == ' ' || *in == '\t';
    if (blank && (out == 0 || text[out - 1] == ' ')) continue;
    text[out++] = blank ? ' ' : *in;
  }
  if (bytes > 0) text[out] = '\0';
}

int threadLevelOf(int provided) {
  return provided == MPI_THREAD_MULTIPLE     ? PEERLINK_MPI_THREAD_MULTIPLE
         : provided == MPI_THREAD_SERIALIZED ? PEERLINK_MPI_THREAD_SERIALIZED
         : provided == MPI_THREAD_FUNNELED   ? PEERLINK_MPI_THREAD_FUNNELED
                                             : PEERLINK_MPI_THREAD_SINGLE;
}

int initialized(int* threadLevel) {
  int init = 0;
  int finalized = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&finalized);
  if (!init || finalized) return 0;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  *threadLevel = threadLevelOf(provided);
  return 1;
}

// Whether init_thread_multiple initialized MPI: finalize ends only that. One caller at a time (the program's start
// and end), as MPI_Init_thread and MPI_Finalize themselves.
bool initializedHere = false;

int initThreadMultiple(int* here, int* threadLevel, char* error, std::size_t errorBytes) {
  *here = 0;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    std::snprintf(error, errorBytes, "MPI is finalized already: it cannot be initialized again in this process");
    return 1;
  }
  int init = 0;
  MPI_Initialized(&init);
  int provided = MPI_THREAD_SINGLE;
  if (init) {
    MPI_Query_thread(&provided);
  } else {
    const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (code != MPI_SUCCESS) {
      fail(error, errorBytes, "MPI_Init_thread(MPI_THREAD_MULTIPLE)", code);
      return 1;
    }
    initializedHere = true;
    *here = 1;
  }
  *threadLevel = threadLevelOf(provided);
  return 0;
}

int finalize(char* error, std::size_t errorBytes) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!initializedHere || finalized) return 0;
  initializedHere = false;
  const int code = MPI_Finalize();
  if (code != MPI_SUCCESS) {
    fail(error, errorBytes, "MPI_Finalize", code);
    return 1;
  }
  return 0;
}

int cudaSupport() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support();  // Open MPI built with CUDA: says whether this run's transport is
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return 0;  // Open MPI built without CUDA
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS) return -1;
  return supported ? 1 : 0;
#else
  return -1;
#endif
}

int open(int64_t fortranComm, void** comm, char* error, std::size_t errorBytes) {
  const MPI_Comm base = fortranComm < 0 ? MPI_COMM_WORLD : MPI_Comm_f2c(static_cast<MPI_Fint>(fortranComm));
  Comm* mine = new (std::nothrow) Comm;
  if (mine == nullptr) {
    std::snprintf(error, errorBytes, "out of memory");
    return 1;
  }
  int code = MPI_Comm_dup(base, &mine->comm);
  if (code != MPI_SUCCESS) {
    fail(error, errorBytes, "MPI_Comm_dup", code);
    delete mine;
    return 1;
  }
  code = MPI_Comm_set_errhandler(mine->comm, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    fail(error, errorBytes, "MPI_Comm_set_errhandler", code);
    MPI_Comm_free(&mine->comm);
    delete mine;
    return 1;
  }
  *comm = mine;
  return 0;
}

void close(void* comm) {
  Comm* mine = static_cast<Comm*>(comm);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&mine->comm);
  delete mine;
}

int rank(void* comm) {
  int r = 0;
  MPI_Comm_rank(static_cast<Comm*>(comm)->comm, &r);
  return r;
}

int size(void* comm) {
  int n = 0;
  MPI_Comm_size(static_cast<Comm*>(comm)->comm, &n);
  return n;
}

int tagUb(void* comm) {
  int* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(static_cast<Comm*>(comm)->comm, MPI_TAG_UB, &value, &found);
  return found && value != nullptr ? *value : 32767;
}

int start(bool receive, void* comm, void* data, std::size_t bytes, int peer, int tag, void** request, char* error,
          std::size_t errorBytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    std::snprintf(error, errorBytes, "a message of %zu bytes is beyond MPI's int count", bytes);
    return 1;
  }
  Request* mine = new (std::nothrow) Request;
  if (mine == nullptr) {
    std::snprintf(error, errorBytes, "out of memory");
    return 1;
  }
  mine->receive = receive;
  const MPI_Comm c = static_cast<Comm*>(comm)->comm;
  const int count = static_cast<int>(bytes);
  const int code = receive ? MPI_Irecv(data, count, MPI_BYTE, peer, tag, c, &mine->request)
                           : MPI_Isend(data, count, MPI_BYTE, peer, tag, c, &mine->request);
  if (code != MPI_SUCCESS) {
    fail(error, errorBytes, receive ? "MPI_Irecv" : "MPI_Isend", code);
    delete mine;
    return 1;
  }
  *request = mine;
  return 0;
}

int isend(void* comm, const void* data, std::size_t bytes, int peer, int tag, void** request, char* error,
          std::size_t errorBytes) {
  return start(false, comm, const_cast<void*>(data), bytes, peer, tag, request, error, errorBytes);
}

int irecv(void* comm, void* data, std::size_t bytes, int peer, int tag, void** request, char* error,
          std::size_t errorBytes) {
  return start(true, comm, data, bytes, peer, tag, request, error, errorBytes);
}

int test(void* request, int* done, std::size_t* received, char* error, std::size_t errorBytes) {
  Request* mine = static_cast<Request*>(request);
  MPI_Status status;
  std::memset(&status, 0, sizeof status);
  int flag = 0;
  const int code = MPI_Test(&mine->request, &flag, &status);
  if (code != MPI_SUCCESS) {
    fail(error, errorBytes, "MPI_Test", code == MPI_ERR_IN_STATUS ? status.MPI_ERROR : code);
    return 1;
  }
  *done = flag;
  if (!flag) return 0;
  int count = 0;
  if (mine->receive) MPI_Get_count(&status, MPI_BYTE, &count);
  *received = static_cast<std::size_t>(count);
  delete mine;
  return 0;
}

void abandon(void* request) {
  Request* mine = static_cast<Request*>(request);
  if (mine->request != MPI_REQUEST_NULL) {
    if (mine->receive) MPI_Cancel(&mine->request);
    MPI_Request_free(&mine->request);
  }
  delete mine;
}

void worldPlace(int* rank, int* size) {
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

const peerlink_mpi_v2 kTable = {PEERLINK_MPI_ABI_VERSION,
                                sizeof(peerlink_mpi_v2),
                                libraryVersion,
                                initialized,
                                cudaSupport,
                                open,
                                close,
                                rank,
                                size,
                                tagUb,
                                isend,
                                irecv,
                                test,
                                abandon,
                                worldPlace,
                                initThreadMultiple,
                                finalize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const peerlink_mpi_v2* peerlink_mpi_entry_v2(void) {
  return &kTable;
}
