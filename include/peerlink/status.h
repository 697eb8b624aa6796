/* peerlink status codes: the error model of device code and of any C boundary.
 *
 * The C++ API throws peerlink::Error, whose code() maps one-to-one onto these values
 * (peerlink::toStatus / peerlink::toErrorCode). Device code cannot throw, so kernels write one of
 * these into a status word that the host turns into an Error. Plain C so that a C ABI can use it. */
#ifndef PEERLINK_STATUS_H_
#define PEERLINK_STATUS_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum peerlink_status {
  PEERLINK_STATUS_OK = 0,
  PEERLINK_STATUS_INVALID_USAGE = 1,  /* bad argument, flag or parameter value */
  PEERLINK_STATUS_INVALID_INPUT = 2,  /* malformed file or data given to peerlink */
  PEERLINK_STATUS_NO_DEVICE = 3,      /* no usable CUDA GPU */
  PEERLINK_STATUS_CUDA_ERROR = 4,     /* a CUDA runtime or driver call failed */
  PEERLINK_STATUS_NVML_ERROR = 5,     /* an NVML call failed */
  PEERLINK_STATUS_SYSTEM_ERROR = 6,   /* an operating-system call failed (errno) */
  PEERLINK_STATUS_TIMEOUT = 7,        /* a wait passed its deadline */
  PEERLINK_STATUS_REMOTE_ERROR = 8,   /* the peer process or GPU reported a failure */
  PEERLINK_STATUS_UNSUPPORTED = 9,    /* the platform cannot do what was asked */
  PEERLINK_STATUS_DATA_MISMATCH = 10, /* verification found wrong bytes */
  PEERLINK_STATUS_INTERNAL = 11       /* a bug in peerlink */
} peerlink_status_t;

/* A short constant name for a status, e.g. "TIMEOUT". Never NULL. */
const char* peerlink_status_name(peerlink_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* PEERLINK_STATUS_H_ */
