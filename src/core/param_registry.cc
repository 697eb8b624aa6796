// The declaration of every PEERLINK_* parameter: its type, default, allowed values, description and audience
// (users', tuning's or tests'). Adding a knob: add it here, use it through Params, and regenerate
// docs/parameters.md (`peerlink env` lists it automatically). Every rule a value must follow is declared here,
// so a malformed value fails when the environment is read, wherever it is used later.
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
      {"PEERLINK_ALGO",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "ONESHOT", "TWOSHOT", "RING"},
       0,
       0,
       "Collective algorithm: AUTO chooses by size and topology; ONESHOT (every GPU reads all peers and reduces), "
       "TWOSHOT (reduce-scatter then all-gather over peer access) or RING force one where the collective has it.",
       ParamAudience::User},
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
       "SIMPLE.",
       ParamAudience::User},
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
       "allocate nranks x 16 MiB per GPU for the stages.",
       ParamAudience::User},
      {"PEERLINK_COLL_CE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "0", "1"},
       0,
       0,
       "Where large all-gathers, all-to-alls, all-reduces and send/recv groups copy: 1 on the copy engines "
       "(cudaMemcpyAsync between barrier kernels; all-reduce gathers each rank's reduced shard that way, send/recv "
       "pushes each send into its receiver), 0 in SM kernels, AUTO on the copy engines from the size where they were "
       "measured faster on an NVLink mesh.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_MAX_BLOCKS",
       ParamType::Int,
       "0",
       {},
       0,
       256,
       "Most thread blocks one collective kernel launches on each GPU (as NCCL_MAX_CTAS); 0: one per SM. For "
       "tuning: fewer blocks leave SMs to other work and may load NVLink differently.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_RING_CHUNK",
       ParamType::Int,
       "0",
       {},
       1024,
       1048576,
       "Largest chunk in bytes a ring kernel's block moves per round (broadcast, reduce, and the ring all-reduce "
       "and reduce-scatter; the reduce's stage slots may cap it lower); 0: each kernel's own (broadcast 32 KiB; "
       "reductions 32 KiB on grids of 64+ blocks, else 64 KiB, the reduce's 128 KiB from 256 MiB). For tuning: smaller "
       "chunks fill the ring sooner, "
       "larger ones spend less per round. A multiple of 16, at least 1024.",
       ParamAudience::Tuning,
       16,
       true,
       true},
      {"PEERLINK_COLL_RING_REDUCE_BLOCKS",
       ParamType::Int,
       "0",
       {},
       0,
       128,
       "Thread blocks of the ring reduce's chain (reduce from 16 MiB), within PEERLINK_COLL_MAX_BLOCKS; 0: 32. For "
       "tuning, with PEERLINK_COLL_RING_CHUNK: a round of the chain moves blocks x chunk, and the chain fills in "
       "n - 1 rounds.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_PDL",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Let a collective kernel start while the previous kernel in its stream finishes (programmatic dependent "
       "launch; compute capability 9.0+, not with PEERLINK_COLL_SHARE_GPUS): saves launch latency between "
       "collectives in a stream or CUDA graph. Eager calls through peerlink's launch graphs are not affected.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_EAGER_GRAPHS",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Launch eager calls' kernels through a one-node CUDA graph per GPU, re-aimed at each launch (1.2-1.75 us of "
       "host time a launch against 3.2 for a direct launch on the H200 VMs); 0: launch them directly, as captured "
       "calls are (then PEERLINK_COLL_PDL applies to them too). For measuring what the graphs cost beside the "
       "application's own kernels.",
       ParamAudience::Tuning},
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
       "launch threads.",
       ParamAudience::User},
      {"PEERLINK_COLL_SHARE_GPUS",
       ParamType::Bool,
       "0",
       {},
       0,
       0,
       "Testing only: a communicator may list a GPU more than once, its ranks sharing the GPU (each kernel's grid "
       "shrinks so every rank's blocks stay resident), so 3-8 rank algorithms run on fewer GPUs; not for speed. "
       "`peerlink coll` under a launcher then puts a process on the GPU of its local rank modulo the GPUs it sees.",
       ParamAudience::Testing},
      {"PEERLINK_COLL_HOST_STAGED",
       ParamType::String,
       "",
       {},
       0,
       0,
       "Testing only: pairs of ranks a communicator carries through host memory whatever their link, as it does "
       "where P2P does not work: 'all', or pairs such as '0-2,1-3' (both directions of each). The staged plans then "
       "run on machines where P2P works too; across processes every rank must give the same value.",
       ParamAudience::Testing},
      {"PEERLINK_COLL_STAGED_KERNEL",
       ParamType::Bool,
       "1",
       {},
       0,
       0,
       "Whether the staged plans (GPUs without working P2P) run a call's part on each rank as one kernel, which "
       "moves the data with its own threads and meets the peers between steps, for calls of up to 4 MiB whose plans "
       "are short enough (a few dozen steps); 0 always runs them step by step: copies on the copy engines, a small "
       "barrier kernel between steps (a 512 KiB all-reduce of 2 ranks on an H200: 19.6 us a step against 13.8). "
       "For comparison; ranks may differ.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_STAGE_UNREGISTERED",
       ParamType::Enum,
       "OFF",
       {"OFF", "ON", "SERIAL"},
       0,
       0,
       "Testing only: ON runs a communicator's calls in one process through the staging windows, as ranks in "
       "different processes run calls on unregistered buffers (copies into each rank's window, the kernel between "
       "the windows, copies out, chunk by chunk, the copies of one half of the windows overlapping the kernel in the "
       "other), so one process tests and times that path (several ranks on one GPU with PEERLINK_COLL_SHARE_GPUS). "
       "SERIAL does the same with each chunk's copies and kernel one after another on the caller's stream, here and "
       "across processes, to measure what the overlap gives. OFF: ranks of one process reach each other's buffers "
       "directly.",
       ParamAudience::Testing},
      {"PEERLINK_COLL_STAGE_COPIES",
       ParamType::Enum,
       "PEERS",
       {"PEERS", "ALL"},
       0,
       0,
       "What a call on unregistered buffers across processes copies through the staging windows. PEERS: only the "
       "parts of each rank's buffers its peers' kernels read or store into; the rank's own kernel reads and stores "
       "the rest in the caller's buffers (a two-shot all-reduce of 2 ranks copies half its data each way, a "
       "reduce-scatter nothing out, an all-gather nothing in, an all-to-all nothing in), where the kernel allows it. "
       "ALL: every byte into the window and out again, the kernel between the windows only. For comparison; ranks "
       "may differ.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_STAGE_GRAPHS",
       ParamType::Enum,
       "ON",
       {"ON", "OFF"},
       0,
       0,
       "Whether a call on unregistered buffers across processes whose shape and buffers came among the latest calls "
       "is captured once into a CUDA graph per rank and replayed from then on (one launch instead of its chunks' "
       "copies, kernels and events one by one), 64 graphs kept a communicator. OFF issues every call's "
       "operations one by one. For comparison; ranks may differ.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_SHARE_BUFFERS",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "OFF", "ON"},
       0,
       0,
       "Whether a call on unregistered buffers across processes shares them with the other processes at the call "
       "(each rank's allocations as IPC handles, exchanged and opened once, kept open for the calls that come back "
       "on the same buffers, 16 calls' worth a communicator) and runs on them directly, instead of copying through "
       "the staging windows. The exchange is a meeting of the processes' hosts (through shared memory, a few us "
       "when the ranks come together). AUTO: calls of 32 MiB a rank and more (broadcasts and reduces, outside a "
       "training step, from 4 MiB), each waiting for the other ranks only as long as sharing would save (20 us and "
       "0.5 us a MiB) and else staged on every rank (a training step's ranks reach each gradient bucket further "
       "apart: most of PyTorch DDP's stage); ON: every call that would be staged, waiting for every rank "
       "(for ranks that call in step, as benchmarks do); never while a stream is being captured; OFF: never. "
       "Buffers that cannot be shared (cuMem virtual "
       "memory such as PyTorch's expandable segments, host or managed memory) go through the staging windows. Every "
       "rank must give the same value.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_STAGING_WINDOW",
       ParamType::Int,
       "134217728",
       {},
       1048576,
       4294967296,
       "Bytes of the staging window each rank of a communicator spanning processes holds in GPU memory, through which "
       "calls on unregistered buffers run (PEERLINK_COLL_STAGE_COPIES) in chunks of half a window: larger windows cut "
       "a large call into fewer chunks (fewer launches, copies and waits between the copy stream and the kernels') at "
       "the cost of the GPU memory. A multiple of 1 MiB; every rank must give the same value.",
       ParamAudience::Tuning,
       1048576,
       false,
       true},
      {"PEERLINK_COLL_STAGED_CHUNK",
       ParamType::Int,
       "0",
       {},
       65536,
       16777216,
       "Bytes of each chunk the staged plans (GPUs without working P2P: host-staged and relayed hops) pipeline, of "
       "every block; 0: 4 MiB. For tuning: every step of a plan costs a meeting of the ranks, so smaller chunks pay "
       "more steps and larger ones fill and drain the pipeline longer (a plan deeper than the stages halves it). A "
       "multiple of 16; across processes every rank must give the same value.",
       ParamAudience::Tuning,
       16,
       true,
       true},
      {"PEERLINK_COLL_HOST_RING",
       ParamType::Int,
       "8388608",
       {},
       262144,
       1073741824,
       "Largest all-reduce, reduce-scatter or all-gather (bytes of the whole buffer: an all-gather's output, a "
       "reduce-scatter's input) that a communicator with staged plans (GPUs without working P2P) runs as a ring "
       "pipelined through host memory, slot by slot with no step barrier, both directions of each GPU's link to the "
       "host busy at once; a broadcast or reduce, a chain along that ring from or to the root, up to 8 times this. "
       "Larger calls run the staged plans on the copy engines (faster from 16 MiB for an all-reduce on 2x H200: the "
       "ring's threads move about 27 GB/s each way there, the engines 36-38), and calls of up to 256 KiB a rank go in "
       "LL lines either way. 0: never. Every rank must give the same value.",
       ParamAudience::Tuning,
       1,
       true,
       true},
      {"PEERLINK_COLL_HOST_RING_SHAPE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "16x32K", "16x64K", "32x16K", "32x32K", "32x64K", "64x16K", "64x32K", "64x64K"},
       0,
       0,
       "The host ring's grid and slot (blocks x bytes of each of a block's 4 slots) for every call it takes; AUTO: "
       "64x64K for a broadcast or reduce (a chain, one way along each GPU's link to the host), 32x64K for the ring's "
       "rounds (both ways at once). For tuning on another machine; every rank must give the same value.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_ARENA_RING",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "OFF", "ON"},
       0,
       0,
       "Whether a call on unregistered buffers across processes that is not shared at the call runs as a ring through "
       "areas in the ranks' communicator memory (one kernel a rank on 32 or 64 SMs, slot by slot, touching only its "
       "own buffers) instead of through the staging windows (copies in and out around the collective's kernels): "
       "all-reduce, reduce-scatter, all-gather, broadcast, reduce, and the all-to-all of two ranks. AUTO: where it "
       "was faster on 2x H200: all-reduces and reduces from 8 MiB, broadcasts from 128 MiB, reduce-scatters from 512 "
       "MiB (the whole buffer, as PEERLINK_COLL_HOST_RING counts it); ON: every such call; OFF: never (and "
       "no area: 64 MiB less of each GPU's memory). Every rank must give the same value.",
       ParamAudience::Tuning},
      {"PEERLINK_COLL_ARENA_RING_SHAPE",
       ParamType::Enum,
       "AUTO",
       {"AUTO", "16x256K", "32x128K", "32x256K", "48x256K", "64x128K", "64x256K"},
       0,
       0,
       "The arena ring's grid and slot (blocks x bytes of each of a block's 4 slots) for every call it takes; AUTO: "
       "32x256K up to 32 MiB (a training step's gradient buckets: the fewer SMs the all-reduce holds, the sooner the "
       "backward pass's kernels beside it start), 64x256K above. For tuning; every rank must give the same value.",
       ParamAudience::Tuning},
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
       "always on the host, on the transport's thread.",
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
  return registry;
}

}  // namespace peerlink
