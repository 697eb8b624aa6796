// The declaration of every PEERLINK_* parameter: its type, default, allowed values, description and audience
// (users', tuning's or tests'); the collectives' are in param_registry_coll.cc. Adding a knob: add it here or there,
// use it through Params, and regenerate docs/parameters.md (`peerlink env` lists it automatically). Every rule a value
// must follow is declared here, so a malformed value fails when the environment is read, wherever it is used later.
#include <limits>

#include "core/param_registry_parts.hpp"
#include "peerlink/params.hpp"

namespace peerlink {
namespace {

// Logging, topology, routes, the doctor and CPU affinity.
std::vector<ParamSpec> generalParamSpecs() {
  return {
      {"PEERLINK_DEBUG",
       ParamType::Enum,
       "WARN",
       {"WARN", "INFO", "TRACE"},
       0,
       0,
       "How much peerlink logs to stderr: WARN (problems only), INFO (decisions), TRACE (everything).",
       ParamAudience::User},
      {"PEERLINK_DEBUG_SUBSYS",
       ParamType::List,
       "ALL",
       {"INIT", "TOPO", "P2P", "COLL", "DOCTOR", "BENCH"},
       0,
       0,
       "Subsystems whose INFO/TRACE lines are printed (comma-separated, or ALL); warnings always print.",
       ParamAudience::User},
      {"PEERLINK_TOPO_FILE",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Load the topology from this JSON file (written by `peerlink topo --json`) instead of discovering it.",
       ParamAudience::User},
      {"PEERLINK_NVML",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Load NVML (libnvidia-ml.so.1) at run time for NVLink, NUMA and driver details; 0 to skip it.",
       ParamAudience::User},
      {"PEERLINK_TIMEOUT_MS",
       ParamType::Int,
       "10000",
       {},
       1,
       3600000,
       "Deadline of every wait, host or device (flags, handshakes, copies), in milliseconds; a wait that passes it "
       "becomes an error naming the pair and step. Under the NCCL API (libpeerlink_nccl.so.2) an unset value is "
       "3600000: NCCL waits as long as the application does, and ncclCommAbort stops a wait at once.",
       ParamAudience::User},
      {"PEERLINK_P2P_DISABLE",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Never use peer-to-peer access between GPUs: copies go through host memory (STAGED).",
       ParamAudience::User},
      {"PEERLINK_P2P_LEVEL",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "LOC", "NVL", "PIX", "PXB", "PHB", "NODE", "SYS"},
       0,
       0,
       "Farthest path class over which P2P is used (NCCL_P2P_LEVEL's meaning); LOC never uses P2P. AUTO: up to PHB "
       "(P2P across host bridges or sockets is often slower than host staging, or broken).",
       ParamAudience::User},
      {"PEERLINK_P2P_ENGINE",
       ParamType::Enum,
       "auto",
       {"auto", "ce", "sm"},
       0,
       0,
       "What moves P2P bytes: ce (copy engine), sm (peerlink's copy kernel), auto (kernels for small messages, "
       "the copy engine for large ones).",
       ParamAudience::Tuning},
      {"PEERLINK_P2P_READ",
       ParamType::Enum,
       "auto",
       {"auto", "0", "1"},
       0,
       0,
       "1: the destination pulls (read); 0: the source pushes (write); auto: over NVLink (compute capability 8.0 "
       "and newer) the copy engine writes and copy kernels read, as measured fastest on H200; over PCIe write (posted "
       "writes travel better than reads).",
       ParamAudience::Tuning},
      {"PEERLINK_CUMEM",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Across processes, share memory as cuMem allocations exported as file descriptors (CUMEM) where the GPUs "
       "support it; 0 uses legacy CUDA IPC handles.",
       ParamAudience::User},
      {"PEERLINK_RELAY",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "When two GPUs have no usable P2P but both reach a third GPU, relay through it (two pipelined hops); 0 "
       "stages through host memory instead.",
       ParamAudience::User},
      {"PEERLINK_P2P_MODE",
       ParamType::Enum,
       "auto",
       {"auto", "direct", "ipc", "cumem", "relay", "staged"},
       0,
       0,
       "Force a route mode (tests and benchmarks); auto chooses. A forced mode the pair cannot use is an error.",
       ParamAudience::Testing},
      {"PEERLINK_RELAY_GPU",
       ParamType::Int,
       "-1",
       {},
       -1,
       4095,
       "The GPU (CUDA ordinal) RELAY goes through; -1 picks the best-connected one.",
       ParamAudience::Tuning},
      {"PEERLINK_CHUNK_BYTES",
       ParamType::Int,
       "0",
       {},
       0,
       1073741824,
       "Chunk size of pipelined routes (STAGED, RELAY) in bytes; 0 sizes chunks from the transfer.",
       ParamAudience::Tuning,
       1,
       false,
       true},
      {"PEERLINK_PUT_SIGNAL_MAX_BYTES",
       ParamType::Int,
       "65536",
       {},
       0,
       16777216,
       "Largest transfer sent by put-with-signal (a kernel stores the data and a flag) rather than the copy "
       "engine, whose launch costs microseconds.",
       ParamAudience::Tuning,
       1,
       false,
       true},
      {"PEERLINK_FAULT_DROP_FLAG",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Testing only: the put-with-signal kernel skips its flag store, so the receiver's deadline path runs.",
       ParamAudience::Testing},
      {"PEERLINK_DOCTOR_CACHE",
       ParamType::Enum,
       "on",
       {"on", "refresh", "off"},
       0,
       0,
       "The doctor's verdict cache (keyed by boot, driver, kernel command line and the pair's GPUs): on uses and "
       "stores entries, refresh probes again and stores, off neither reads nor writes.",
       ParamAudience::User},
      {"PEERLINK_DOCTOR_CACHE_DIR",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Folder of the doctor's verdict cache; empty: $XDG_CACHE_HOME/peerlink, else $HOME/.cache/peerlink.",
       ParamAudience::User},
      {"PEERLINK_VERIFY",
       ParamType::Enum,
       "cached",
       {"cached", "quick", "off"},
       0,
       0,
       "Which doctor verdicts a communicator trusts when it chooses each GPU pair's way (peer access, relay or host "
       "staging): cached uses the verdicts `peerlink doctor` cached for this boot when there are some, quick also "
       "probes the pairs without one (about a second), off ignores verdicts. A pair found BROKEN never carries peer "
       "traffic. Across processes every rank must give the same value, each pair takes the worst verdict any "
       "process's cache holds, and quick probes nothing (a process cannot probe GPUs it does not see).",
       ParamAudience::User},
      {"PEERLINK_CPU_AFFINITY",
       ParamType::Enum,
       "auto",
       {"auto", "off"},
       0,
       0,
       "Threads peerlink runs for a GPU (launch threads, the bootstrap's watchdog, helper processes) run on the CPUs "
       "of that GPU's NUMA node: auto binds them unless the calling thread was already restricted (taskset, numactl, "
       "a cgroup), off leaves them where they start.",
       ParamAudience::User},
  };
}

// NCCL's API, the bootstrap between processes, the transport between nodes, and where discovery reads.
std::vector<ParamSpec> processParamSpecs() {
  return {
      {"PEERLINK_NCCL_LIBRARY",
       ParamType::String,
       "",
       {},
       0,
       0,
       "The real NCCL library: the one `peerlink coll` loads for its same-run reference, and the one "
       "libpeerlink_nccl.so.2 forwards to (PEERLINK_NCCL_FALLBACK); empty searches libnccl.so.2 on the loader "
       "path, beside the CUDA toolkit and in Python's nvidia.nccl package.",
       ParamAudience::User},
      {"PEERLINK_NCCL_FALLBACK",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "NONE", "ALL"},
       0,
       0,
       "What libpeerlink_nccl.so.2 (NCCL's API over peerlink) may hand to the real NCCL (PEERLINK_NCCL_LIBRARY): "
       "AUTO the communicators peerlink cannot serve (a job whose launcher says it spans machines, or whose ranks "
       "turn out at the rendezvous to be on several hosts where the launcher does not say, an id made by the real "
       "NCCL, a world in one process that peerlink cannot create) and their calls; NONE nothing (those are refused "
       "with ncclInvalidUsage and a log line; the real library is never loaded); ALL every communicator.",
       ParamAudience::User},
      {"PEERLINK_NCCL_VERSION",
       ParamType::Int,
       "22809",
       {},
       20900,
       99999,
       "The NCCL version libpeerlink_nccl.so.2 reports (ncclGetVersion), as NCCL_VERSION_CODE: major * 10000 + "
       "minor * 100 + patch. Applications choose features by it (PyTorch's memory pools from 21900, nccl-tests' "
       "ncclAlltoAll from 22800).",
       ParamAudience::User},
      {"PEERLINK_BOOTSTRAP_ADDR",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Where the bootstrap root of makeUniqueId listens: host, host:port or [IPv6]:port (no port: any free one); "
       "empty: the first non-loopback interface that is up (docker and virbr bridges skipped), else loopback. Under "
       "a launcher without an id, the root's well-known address.",
       ParamAudience::User},
      {"PEERLINK_BOOTSTRAP_TIMEOUT_MS",
       ParamType::Int,
       "30000",
       {},
       1,
       3600000,
       "Deadline of the bootstrap between processes, in milliseconds: the rendezvous (all ranks reaching the root), "
       "connecting the ranks to each other, and each all-gather, barrier, send or recv; a wait that passes it names "
       "the ranks that did not answer. Under the NCCL API an unset value is 3600000 (ranks may reach a lazily "
       "created communicator minutes apart).",
       ParamAudience::User},
      {"PEERLINK_HOSTID",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Which machine this process says it runs on, for ranks deciding who shares a machine; empty: a hash of the "
       "hostname and the boot id. Processes of one machine given different values act as different nodes (tests).",
       ParamAudience::Testing},
      {"PEERLINK_NET_TIMEOUT_MS",
       ParamType::Int,
       "300000",
       {},
       1,
       86400000,
       "Deadline of every wait of the transport between nodes, in milliseconds: each step of a collective across "
       "nodes and each copy to or from pinned host memory; a wait that passes it names the ranks (host, pid) it "
       "waited for.",
       ParamAudience::User},
      {"PEERLINK_NET_CHUNK_BYTES",
       ParamType::Int,
       "4194304",
       {},
       4096,
       1073741824,
       "Bytes of each piece a collective across nodes is cut into (of every block): piece k+1 is copied to pinned "
       "host memory while piece k crosses the network; four pieces of pinned memory per process (two in flight, one "
       "being copied in, one being copied out).",
       ParamAudience::Tuning,
       16,
       false,
       true},
      {"PEERLINK_NET_REDUCE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "GPU", "HOST"},
       0,
       0,
       "Where a collective across nodes staged through pinned host memory reduces the pieces it received: AUTO on "
       "the GPU the data lives on (a kernel reading the pinned pieces) for calls of several pieces "
       "(PEERLINK_NET_CHUNK_BYTES each) and for one piece whose reductions reach 2 MiB, on the host for one piece "
       "with smaller ones (with nothing to overlap, a launch and its event cost more than the host reducing a small "
       "piece) and where the data is host memory; GPU on the GPU whatever the size (where the data is on one); HOST "
       "always on the host, on the transport's thread. All-reduces across 2 nodes and reduce-scatters across up to 8 "
       "that return once queued (async, queued, in CUDA graphs) reduce as their pieces are copied out instead (one "
       "shot, on the GPU), but with HOST.",
       ParamAudience::Tuning},
      {"PEERLINK_NET_ASYNC",
       ParamType::Enum,
       "ON",
       {"ON", "OFF"},
       0,
       0,
       "Whether a communicator's calls across nodes staged through pinned host memory return once queued. ON: a "
       "small call (one piece of at most 1 MiB a buffer) is one kernel on the caller's stream that copies the "
       "data to pinned memory, waits on the GPU until the transport's thread has run the messages (a flag in pinned "
       "memory; a rank whose messages only leave it does not wait), and copies the results back, its reductions on "
       "the host, or, for an all-reduce across 2 nodes and a reduce-scatter across up to 8, the kernel's as it copies "
       "out (a larger one's the copy stream's as it copies out); a larger one queues its copies at once on the "
       "transport's copy stream, each piece's copies out "
       "waiting on the GPU for the thread's flag, where the GPU reduces (PEERLINK_NET_REDUCE) a kernel for each "
       "reduction that waits for the thread's word, and the caller's stream after them. Calls whose GPU reductions "
       "outgrow the queue of 64 (a ring of 65 ranks or more) and send/recv groups over several streams wait on the "
       "host. OFF: every call waits on the host for its messages. Errors of a call that returned are reported by the "
       "next call or checkHealth.",
       ParamAudience::Tuning},
      {"PEERLINK_NET_CUDA_AWARE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "OFF", "ON"},
       0,
       0,
       "Whether MPI gets device pointers: AUTO when the MPI says it is CUDA-aware and a check at start-up passes, "
       "else through pinned host memory; OFF always through host memory; ON requires a CUDA-aware MPI (an error "
       "otherwise).",
       ParamAudience::User},
      {"PEERLINK_MPI_LIBRARY",
       ParamType::String,
       "",
       {},
       0,
       0,
       "libpeerlink_mpi.so, peerlink's part compiled against your MPI, that the transport between nodes loads (and "
       "through which `peerlink coll` across hosts initializes MPI); empty: beside the program, then ../lib from it, "
       "then the loader's path.",
       ParamAudience::User},
      {"PEERLINK_SYSFS_ROOT",
       ParamType::String,
       "/sys",
       {},
       0,
       0,
       "Root of the sysfs tree discovery reads PCI paths, NUMA nodes and PCIe links from (tests point it at fake "
       "trees).",
       ParamAudience::Testing},
  };
}

}  // namespace

const std::vector<ParamSpec>& paramRegistry() {
  static const std::vector<ParamSpec> registry = [] {
    std::vector<ParamSpec> specs = generalParamSpecs();
    for (std::vector<ParamSpec> part : {collectiveParamSpecs(), processParamSpecs()}) {
      specs.insert(specs.end(), part.begin(), part.end());
    }
    return specs;
  }();
  return registry;
}

}  // namespace peerlink
