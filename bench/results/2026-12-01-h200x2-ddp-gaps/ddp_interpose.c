/* A preload in front of the NCCL library that serves a DDP run (peerlink's, or NCCL's), to take apart what of a
 * served call costs the compute stream's launches: INTERPOSE_SKIP_ALLREDUCE=1 answers an in-place all-reduce of a
 * world of one at once, queuing nothing (what NCCL does for it); INTERPOSE_SKIP_ASYNC_ERROR=1 answers
 * ncclCommGetAsyncError with ncclSuccess without asking the library (PyTorch's watchdog polls it). Everything else,
 * and every call these do not cover, goes to the next library. At exit it prints what it answered itself.
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o ddp_interpose.so ddp_interpose.c -ldl
 *   LD_PRELOAD=ddp_interpose.so:libpeerlink_nccl.so.2 INTERPOSE_SKIP_ALLREDUCE=1 torchrun ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long skippedAllReduces = 0;
static long answeredAsyncErrors = 0;

static int enabled(const char* name) {
  const char* value = getenv(name);
  return value != NULL && strcmp(value, "1") == 0;
}

static void report(void) {
  if (skippedAllReduces > 0 || answeredAsyncErrors > 0) {
    fprintf(stderr, "ddp_interpose: %ld all-reduces answered without the library, %ld async-error polls\n",
            skippedAllReduces, answeredAsyncErrors);
  }
}

__attribute__((constructor)) static void start(void) { atexit(report); }

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  typedef ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                    cudaStream_t);
  static AllReduce next = NULL;
  if (next == NULL) next = (AllReduce)dlsym(RTLD_NEXT, "ncclAllReduce");
  int ranks = 0;
  if (enabled("INTERPOSE_SKIP_ALLREDUCE") && sendbuff == recvbuff && ncclCommCount(comm, &ranks) == ncclSuccess &&
      ranks == 1) {
    ++skippedAllReduces;
    return ncclSuccess;
  }
  return next(sendbuff, recvbuff, count, datatype, op, comm, stream);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  typedef ncclResult_t (*GetAsyncError)(ncclComm_t, ncclResult_t*);
  static GetAsyncError next = NULL;
  if (next == NULL) next = (GetAsyncError)dlsym(RTLD_NEXT, "ncclCommGetAsyncError");
  if (enabled("INTERPOSE_SKIP_ASYNC_ERROR")) {
    ++answeredAsyncErrors;
    *asyncError = ncclSuccess;
    return ncclSuccess;
  }
  return next(comm, asyncError);
}
