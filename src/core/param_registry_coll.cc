// The declaration of the collectives' PEERLINK_* parameters (param_registry.cc says how parameters are declared).
#include "core/param_registry_parts.hpp"

namespace peerlink {

std::vector<ParamSpec> collectiveParamSpecs() {
  return {
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
  };
}

}  // namespace peerlink
