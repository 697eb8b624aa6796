/* The C boundary between libpeerlink and libpeerlink_mpi.so, the small library compiled against the user's MPI
 * (src/net/mpi_shim/). libpeerlink links no MPI: it loads that library at run time (mpi_library.cc) and calls MPI
 * only through this table, whose types are plain C, so one libpeerlink serves every MPI ABI (MPI_Comm is a pointer
 * in Open MPI and an int in MPICH; the library compiled against each hides that). A change to the table is a new
 * version: both sides check it. */
#ifndef PEERLINK_NET_MPI_ABI_H
#define PEERLINK_NET_MPI_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PEERLINK_MPI_ABI_VERSION 2u
#define PEERLINK_MPI_ENTRY "peerlink_mpi_entry_v2"
/* The entry of the table's first version (no init_thread_multiple, finalize): an older library, named as such. */
#define PEERLINK_MPI_ENTRY_V1 "peerlink_mpi_entry_v1"

/* Thread levels, as MPI_Query_thread says (the constants' values differ between MPIs). */
enum {
  PEERLINK_MPI_THREAD_SINGLE = 0,
  PEERLINK_MPI_THREAD_FUNNELED,
  PEERLINK_MPI_THREAD_SERIALIZED,
  PEERLINK_MPI_THREAD_MULTIPLE
};

/* Every function that can fail returns 0 on success, else writes one line into error[0..error_bytes) and returns
 * non-zero. Handles are opaque. */
typedef struct peerlink_mpi_v2 {
  uint32_t abi_version; /* PEERLINK_MPI_ABI_VERSION */
  uint32_t table_bytes; /* sizeof(peerlink_mpi_v2) */
  /* The MPI's own line (MPI_Get_library_version, first line) and the headers it was compiled with. */
  void (*library_version)(char* text, size_t bytes);
  /* 1 when MPI is initialized and not finalized (*thread_level then set), else 0. */
  int (*initialized)(int* thread_level);
  /* 1 CUDA-aware, 0 not, -1 the MPI has no way to say (MPIX_Query_cuda_support, MPIX_GPU_query_support). */
  int (*cuda_support)(void);
  /* A duplicate of the communicator whose Fortran handle is `fortran_comm` (MPI_Comm_c2f; any MPI ABI passes
   * it as an int), or of MPI_COMM_WORLD for -1, with errors returned rather than fatal. */
  int (*open)(int64_t fortran_comm, void** comm, char* error, size_t error_bytes);
  void (*close)(void* comm);
  int (*rank)(void* comm);
  int (*size)(void* comm);
  int (*tag_ub)(void* comm);
  int (*isend)(void* comm, const void* data, size_t bytes, int peer, int tag, void** request, char* error,
               size_t error_bytes);
  int (*irecv)(void* comm, void* data, size_t bytes, int peer, int tag, void** request, char* error,
               size_t error_bytes);
  /* *done = 1 once complete; the request is then freed and *received is the bytes a receive got. */
  int (*test)(void* request, int* done, size_t* received, char* error, size_t error_bytes);
  /* Gives up a request: a receive is cancelled, a send left to MPI; freed either way. */
  void (*abandon)(void* request);
  /* This process's rank in MPI_COMM_WORLD and its size, asked without communicating (MPI initialized). */
  void (*world_place)(int* rank, int* size);
  /* For a program that links no MPI (`peerlink coll` under mpirun): MPI_Init_thread(NULL, NULL,
   * MPI_THREAD_MULTIPLE, ...) where MPI is not initialized yet (*initialized_here = 1), nothing where it is
   * (*initialized_here = 0); *thread_level is then the level MPI provides either way. Error: MPI finalized
   * already, or MPI_Init_thread failed (where the MPI returns rather than aborts). */
  int (*init_thread_multiple)(int* initialized_here, int* thread_level, char* error, size_t error_bytes);
  /* MPI_Finalize where init_thread_multiple initialized MPI and it is not finalized yet; nothing otherwise (MPI the
   * program initialized is the program's to finalize). Collective: every process, once nothing uses MPI. */
  int (*finalize)(char* error, size_t error_bytes);
} peerlink_mpi_v2;

typedef const peerlink_mpi_v2* (*peerlink_mpi_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PEERLINK_NET_MPI_ABI_H */
