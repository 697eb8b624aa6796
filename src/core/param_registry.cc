// The declaration of every PEERLINK_* parameter. Adding a knob: add it here, use it through Params, and
// document it in docs/parameters.md (`peerlink env` lists it automatically).
#include <limits>

#include "peerlink/params.hpp"

namespace peerlink {

const std::vector<ParamSpec>& paramRegistry() {
  static const std::vector<ParamSpec> registry = {
      {"PEERLINK_DEBUG",
       ParamType::Enum,
       "WARN",
       {"WARN", "INFO", "TRACE"},
       0,
       0,
       "How much peerlink logs to stderr: WARN (problems only), INFO (decisions), TRACE (everything)."},
      {"PEERLINK_DEBUG_SUBSYS",
       ParamType::List,
       "ALL",
       {"INIT", "TOPO", "P2P", "COLL", "DOCTOR", "BENCH"},
       0,
       0,
       "Subsystems whose INFO/TRACE lines are printed (comma-separated, or ALL); warnings always print."},
      {"PEERLINK_TOPO_FILE",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Load the topology from this JSON file (written by `peerlink topo --json`) instead of discovering it."},
      {"PEERLINK_NVML",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Load NVML (libnvidia-ml.so.1) at run time for NVLink, NUMA and driver details; 0 to skip it."},
      {"PEERLINK_TIMEOUT_MS",
       ParamType::Int,
       "10000",
       {},
       1,
       3600000,
       "Deadline of every wait, host or device (flags, handshakes, copies), in milliseconds; a wait that passes it "
       "becomes an error naming the pair and step."},
      {"PEERLINK_P2P_DISABLE",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Never use peer-to-peer access between GPUs: copies go through host memory (STAGED)."},
      {"PEERLINK_P2P_LEVEL",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "LOC", "NVL", "PIX", "PXB", "PHB", "NODE", "SYS"},
       0,
       0,
       "Farthest path class over which P2P is used (NCCL_P2P_LEVEL's meaning); LOC never uses P2P. AUTO: up to PHB "
       "(P2P across host bridges or sockets is often slower than host staging, or broken)."},
      {"PEERLINK_P2P_ENGINE",
       ParamType::Enum,
       "auto",
       {"auto", "ce", "sm"},
       0,
       0,
       "What moves P2P bytes: ce (copy engine), sm (peerlink's copy kernel), auto (kernels for small messages, "
       "the copy engine for large ones)."},
      {"PEERLINK_P2P_READ",
       ParamType::Enum,
       "auto",
       {"auto", "0", "1"},
       0,
       0,
       "1: the destination pulls (read); 0: the source pushes (write); auto: over NVLink (compute capability 8.0 "
       "and newer) the copy engine writes and copy kernels read, as measured fastest on H200; over PCIe write (posted "
       "writes travel better than reads)."},
      {"PEERLINK_CUMEM",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Across processes, share memory as cuMem allocations exported as file descriptors (CUMEM) where the GPUs "
       "support it; 0 uses legacy CUDA IPC handles."},
      {"PEERLINK_RELAY",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "When two GPUs have no usable P2P but both reach a third GPU, relay through it (two pipelined hops); 0 "
       "stages through host memory instead."},
      {"PEERLINK_P2P_MODE",
       ParamType::Enum,
       "auto",
       {"auto", "direct", "ipc", "cumem", "relay", "staged"},
       0,
       0,
       "Force a route mode (tests and benchmarks); auto chooses. A forced mode the pair cannot use is an error."},
      {"PEERLINK_RELAY_GPU",
       ParamType::Int,
       "-1",
       {},
       -1,
       4095,
       "The GPU (CUDA ordinal) RELAY goes through; -1 picks the best-connected one."},
      {"PEERLINK_CHUNK_BYTES",
       ParamType::Int,
       "0",
       {},
       0,
       1073741824,
       "Chunk size of pipelined routes (STAGED, RELAY) in bytes; 0 sizes chunks from the transfer."},
      {"PEERLINK_PUT_SIGNAL_MAX_BYTES",
       ParamType::Int,
       "65536",
       {},
       0,
       16777216,
       "Largest transfer sent by put-with-signal (a kernel stores the data and a flag) rather than the copy "
       "engine, whose launch costs microseconds."},
      {"PEERLINK_FAULT_DROP_FLAG",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Testing only: the put-with-signal kernel skips its flag store, so the receiver's deadline path runs."},
      {"PEERLINK_DOCTOR_CACHE",
       ParamType::Enum,
       "on",
       {"on", "refresh", "off"},
       0,
       0,
       "The doctor's verdict cache (keyed by boot, driver, kernel command line and the pair's GPUs): on uses and "
       "stores entries, refresh probes again and stores, off neither reads nor writes."},
      {"PEERLINK_DOCTOR_CACHE_DIR",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Folder of the doctor's verdict cache; empty: $XDG_CACHE_HOME/peerlink, else $HOME/.cache/peerlink."},
      {"PEERLINK_ALGO",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "ONESHOT", "TWOSHOT", "RING"},
       0,
       0,
       "Collective algorithm: AUTO chooses by size and topology; ONESHOT (every GPU reads all peers and reduces), "
       "TWOSHOT (reduce-scatter then all-gather over peer access) or RING force one where the collective has it."},
      {"PEERLINK_PROTO",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "LL", "LL128", "SIMPLE"},
       0,
       0,
       "Wire protocol of one-shot collectives: AUTO chooses by collective and size; LL (data and flag in every "
       "16-byte line: one flag wait, no barrier, twice the bytes) wherever the message fits the LL scratch (1 MiB); "
       "LL128 (the same with 120 data bytes per 128-byte line; only where every pair talks over NVLink and every "
       "GPU is compute capability 9.0+, else LL); SIMPLE (plain copies between barriers) never LL. Send/recv "
       "groups take LL lines (of their own 256 KiB slots; AUTO: 64 KiB off an NVLink mesh) under every setting but "
       "SIMPLE."},
      {"PEERLINK_COLL_PUSH",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "0", "1"},
       0,
       0,
       "How two-shot all-reduce and reduce-scatter move data past LL: 1 pushes every one of them (each rank "
       "stores its pieces into the owners' stage buffers, they reduce locally and store the results); AUTO "
       "pushes all-reduces from 16 MiB while each rank's shard fits 16 MiB, on 3+ GPUs of an NVLink mesh, and "
       "reads peers' inputs directly otherwise; 0 always reads. 1, and AUTO on 3+ GPUs of an NVLink mesh, "
       "allocate nranks x 16 MiB per GPU for the stages."},
      {"PEERLINK_COLL_CE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "0", "1"},
       0,
       0,
       "Where large all-gathers, all-to-alls, all-reduces and send/recv groups copy: 1 on the copy engines "
       "(cudaMemcpyAsync between barrier kernels; all-reduce gathers each rank's reduced shard that way, send/recv "
       "pushes each send into its receiver), 0 in SM kernels, AUTO on the copy engines from the size where they were "
       "measured faster on an NVLink mesh."},
      {"PEERLINK_COLL_MAX_BLOCKS",
       ParamType::Int,
       "0",
       {},
       0,
       256,
       "Most thread blocks one collective kernel launches on each GPU (as NCCL_MAX_CTAS); 0: one per SM. For "
       "tuning: fewer blocks leave SMs to other work and may load NVLink differently."},
      {"PEERLINK_COLL_RING_CHUNK",
       ParamType::Int,
       "0",
       {},
       0,
       1048576,
       "Largest chunk in bytes a ring kernel's block moves per round (broadcast, reduce, and the ring all-reduce "
       "and reduce-scatter; the reduce's stage slots may cap it lower); 0: each kernel's own (broadcast 32 KiB; "
       "reductions 32 KiB on grids of 64+ blocks, else 64 KiB, the reduce's 128 KiB from 256 MiB). For tuning: smaller "
       "chunks fill the ring sooner, "
       "larger ones spend less per round. A multiple of 16, at least 1024."},
      {"PEERLINK_COLL_RING_REDUCE_BLOCKS",
       ParamType::Int,
       "0",
       {},
       0,
       128,
       "Thread blocks of the ring reduce's chain (reduce from 16 MiB), within PEERLINK_COLL_MAX_BLOCKS; 0: 32. For "
       "tuning, with PEERLINK_COLL_RING_CHUNK: a round of the chain moves blocks x chunk, and the chain fills in "
       "n - 1 rounds."},
      {"PEERLINK_COLL_RING_NEIGHBOR_START",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Ring kernels wait only for the next rank of their chain, the only rank they store into: the broadcast's "
       "and the ring all-reduce's and reduce-scatter's for it to start the call, the reduce's for it to have read "
       "the previous call's last round on each stage slot; so a chain's first ranks begin a call while the last ones "
       "finish the previous one (as NCCL's rings do); 0: every rank waits for every rank, as the other kernels "
       "do. For measuring what that overlap is worth."},
      {"PEERLINK_COLL_RING_PACE",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "The ring reduce-scatter's and all-reduce's chains, side by side, keep pace: a chain's first rank claims "
       "at most four rounds of chunks beyond the chain least far along, so no chain finishes early and leaves "
       "the links it shared half used for the others' rest. 0: each chain runs at the pace it gets. For "
       "measuring what keeping pace is worth."},
      {"PEERLINK_COLL_PDL",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Let a collective kernel start while the previous kernel in its stream finishes (programmatic dependent "
       "launch; compute capability 9.0+, not with PEERLINK_COLL_SHARE_GPUS): saves launch latency between "
       "collectives in a stream or CUDA graph. Eager calls through peerlink's launch graphs are not affected."},
      {"PEERLINK_COLL_EAGER_GRAPH",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Eager calls launch each kernel through a kept one-node CUDA graph per GPU, re-aimed at the call (cheaper on "
       "the host than a direct launch); 0: direct launches, which may overlap the previous kernel as "
       "PEERLINK_COLL_PDL allows. For measuring the two against each other."},
      {"PEERLINK_COLL_LAUNCH_THREADS",
       ParamType::Int,
       "1000",
       {},
       0,
       10000000,
       "Microseconds a launch thread stays awake (spinning) after an eager call. Eager collectives put each rank's "
       "launches on its stream from a thread of the communicator's own, one per rank but the first, so the "
       "launches to the GPUs proceed side by side instead of one after another on the calling thread; past this "
       "a thread sleeps, and calls spaced further apart launch from the calling thread alone. Only where the "
       "machine has more CPU cores than ranks; captured calls always launch from the calling thread. 0: no "
       "launch threads."},
      {"PEERLINK_COLL_SHARE_GPUS",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Testing only: a communicator may list a GPU more than once, its ranks sharing the GPU (each kernel's grid "
       "shrinks so every rank's blocks stay resident), so 3-8 rank algorithms run on fewer GPUs; not for speed."},
      {"PEERLINK_NCCL_LIBRARY",
       ParamType::String,
       "",
       {},
       0,
       0,
       "libnccl that `peerlink coll` loads for its same-run reference; empty searches libnccl.so.2 on the loader "
       "path, beside the CUDA toolkit and in Python's nvidia.nccl package."},
      {"PEERLINK_BOOTSTRAP_ADDR",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Where the bootstrap root of makeUniqueId listens: host, host:port or [IPv6]:port (no port: any free one); "
       "empty: the first non-loopback interface that is up (docker and virbr bridges skipped), else loopback. Under "
       "a launcher without an id, the root's well-known address."},
      {"PEERLINK_BOOTSTRAP_TIMEOUT_MS",
       ParamType::Int,
       "30000",
       {},
       1,
       3600000,
       "Deadline of the bootstrap between processes, in milliseconds: the rendezvous (all ranks reaching the root), "
       "connecting the ranks to each other, and each all-gather, barrier, send or recv; a wait that passes it names "
       "the ranks that did not answer."},
      {"PEERLINK_HOSTID",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Which machine this process says it runs on, for ranks deciding who shares a machine; empty: a hash of the "
       "hostname and the boot id. Processes of one machine given different values act as different nodes (tests)."},
      {"PEERLINK_SYSFS_ROOT",
       ParamType::String,
       "/sys",
       {},
       0,
       0,
       "Root of the sysfs tree discovery reads PCI paths, NUMA nodes and PCIe links from (tests point it at fake "
       "trees)."},
  };
  return registry;
}

}  // namespace peerlink
