// The objects behind NCCL's opaque handles: ncclComm_t (one rank of a world: a native world shared by this
// process's ranks, or a communicator of the real NCCL it forwards to) and ncclWindow_t. Their addresses are
// what the application holds; the shim checks each against its registry of live handles before use.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "nccl_api/result.hpp"
#include "nccl_api/world.hpp"

namespace peerlink::nccl {

/// What an ncclWindow_t points to (ncclCommWindowRegister). Not NCCL's struct ncclWindow_vidmem, which
/// nccl_device.h defines as the device's view of the real NCCL's windows: the handle is cast at the API.
struct Window {
  void* buffer = nullptr;
  std::size_t bytes = 0;
  bool symmetric = false;            ///< NCCL_WIN_COLL_SYMMETRIC: a peerlink window
  std::shared_ptr<WindowSlot> slot;  ///< symmetric, served by peerlink
  ncclWindow_t real = nullptr;       ///< the real NCCL's window
};

}  // namespace peerlink::nccl

/// One rank of a communicator.
struct ncclComm {
  enum class Stage {
    Creating,  ///< created inside a group (completes at ncclGroupEnd) or a split waiting for local ranks
    Ready,
    Failed,  ///< creation failed: `failure` says why; only destroy, abort and queries are served
  };

  mutable std::mutex mutex;  ///< everything below but the counters
  Stage stage = Stage::Creating;
  peerlink::nccl::Failure failure;
  int rank = -1;
  int nranks = 0;
  int device = -1;
  std::string name;                                    ///< config.commName
  std::shared_ptr<peerlink::nccl::NativeWorld> world;  ///< served by peerlink
  ncclComm_t real = nullptr;                           ///< served by the real NCCL (its handle)
  std::shared_ptr<peerlink::nccl::SplitSlot> split;    ///< Creating by a split: completed by the parent world
  bool finalized = false;
  std::string lastError;

  struct PreMulOp {
    ncclDataType_t type;
    peerlink::nccl::PreMulScalar scalar;
  };
  std::map<int, PreMulOp> ops;  ///< ncclRedOpCreatePreMulSum's ops, from ncclNumOps up
  int nextOp = ncclNumOps;
  std::set<void*> registrations;              ///< ncclCommRegister's handles
  std::set<peerlink::nccl::Window*> windows;  ///< ncclCommWindowRegister's

  std::atomic<std::uint64_t> served{0};     ///< calls peerlink served
  std::atomic<std::uint64_t> forwarded{0};  ///< calls the real NCCL served
};

namespace peerlink::nccl {

/// A buffer ncclCommRegister recorded (peerlink needs no local registration; the handle proves the call).
struct LocalRegistration {
  void* buffer = nullptr;
  std::size_t bytes = 0;
};

}  // namespace peerlink::nccl
