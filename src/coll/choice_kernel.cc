// The kernel for a collective call's algorithm (choice_rules.hpp): LL or LL128 lines for small messages, the
// direct-read, pushing, ring and copy-engine kernels past them, as rules over the size, the ranks, the fabric
// and the settings. The sizes are choice_thresholds.hpp's; docs/collectives.md explains each rule.
#include <algorithm>
#include <utility>

#include "coll/choice_rules.hpp"
#include "coll/choice_thresholds.hpp"

namespace peerlink::coll {

using namespace threshold;

void KernelChoice::add(std::string text) {
  reasons.push_back(std::move(text));
}

void KernelChoice::replace(Algorithm newAlgorithm, Kernel newKernel, std::string text) {
  if (kernelClause >= 0) reasons.erase(reasons.begin() + kernelClause);
  algorithm = newAlgorithm;
  kernel = newKernel;
  wanted = newKernel;
  kernelClause = static_cast<int>(reasons.size());
  reasons.push_back(std::move(text));
}

std::string KernelChoice::reason() const {
  std::string text;
  for (const std::string& part : reasons) text += (text.empty() ? "" : "; ") + part;
  return text;
}

bool reduceTwoShotSharesRoot(std::size_t bytes, int nranks) {
  return nranks <= 1 || bytes < kReduceRootShardBelow;
}

int rootedTwoShotBlocks(Collective collective, std::size_t bytes, int nranks) {
  if (nranks < 3 || bytes < kRootedFewBlocksFrom) return 0;  // one non-root rank does not crowd the root
  if (collective == Collective::Broadcast) return kRootedTwoShotBlocks;
  if (collective == Collective::Reduce && !reduceTwoShotSharesRoot(bytes, nranks)) return kRootedTwoShotBlocks;
  return 0;
}

namespace {

// A choice of one rule: the algorithm's reason, then the kernel's own clause where it has one.
KernelChoice choiceOf(Algorithm algorithm, Kernel kernel, const std::string& why, std::string clause = {}) {
  KernelChoice choice;
  choice.algorithm = algorithm;
  choice.kernel = kernel;
  choice.wanted = kernel;
  choice.add(why);
  if (!clause.empty()) {
    choice.kernelClause = 1;
    choice.add(std::move(clause));
  }
  return choice;
}

// " (on 32 blocks)" where rootedTwoShotBlocks caps the grid, else nothing.
std::string gridCapNote(Collective collective, std::size_t bytes, int nranks) {
  const int cap = rootedTwoShotBlocks(collective, bytes, nranks);
  return cap > 0 ? " (on " + std::to_string(cap) + " blocks)" : "";
}

// Whether LL carries a one-shot message of `bytes`, and why.
struct LlRule {
  bool use = false;
  std::string why;
};

// The lines a rank puts on its links sending a message of `bytes` to each of its n - 1 peers: 16 bytes per
// 8 of payload in LL lines, 128 per 120 in LL128's.
std::size_t lineWireBytes(std::size_t bytes, int nranks, bool ll128Lines) {
  const auto peers = static_cast<std::size_t>(std::max(1, nranks - 1));
  return ll128Lines ? peers * ((bytes + kernels::kCollLl128LinePayload - 1) / kernels::kCollLl128LinePayload *
                               kernels::kCollLl128LineBytes)
                    : 2 * peers * bytes;
}

// The lines a rank may put on its links for LL to carry a message of `collective`.
std::size_t lineBudget(Collective collective, bool ll128Lines) {
  if (ll128Lines) return collective == Collective::Reduce ? kLl128ReduceWireBytes : kLl128WireBytes;
  return collective == Collective::Broadcast ? kLlRootWireBytes : kLlWireBytes;
}

// The largest message whose lines (lineWireBytes) keep each rank's links within `wireBytes`.
std::size_t llWireLimit(int nranks, std::size_t llMaxBytes, std::size_t wireBytes, bool ll128Lines) {
  const auto peers = static_cast<std::size_t>(std::max(1, nranks - 1));
  const std::size_t limit = ll128Lines
                                ? wireBytes / peers / kernels::kCollLl128LineBytes * kernels::kCollLl128LinePayload
                                : wireBytes / (2 * peers);
  return std::min(llMaxBytes, limit);
}

// All-reduce and reduce: every rank's whole message is an operand (reduce-scatter reduces blocks).
bool reducesWholeMessages(Collective collective) {
  return collective == Collective::AllReduce || collective == Collective::Reduce;
}

bool forcedLines(Protocol protocol) {
  return protocol == Protocol::Ll || protocol == Protocol::Ll128;
}

LlRule llRule(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh, Protocol protocol,
              std::size_t llMaxBytes, bool ll128Lines) {
  if (bytes > llMaxBytes || protocol == Protocol::Simple) return {};
  if (forcedLines(protocol)) {
    return {true, std::string("LL protocol (forced by PEERLINK_PROTO=") + protocolName(protocol) + ")"};
  }
  std::size_t limit = llMaxBytes;
  if (nvlinkMesh) {
    limit = llWireLimit(nranks, llMaxBytes, lineBudget(collective, ll128Lines), ll128Lines);
  } else if (!reducesWholeMessages(collective)) {
    limit = kLlCopyMaxPcie;  // off a mesh all-reduce and reduce take LL wherever one-shot's own limit allows
  }
  if (bytes > limit) return {};
  return {true, "LL protocol (<= " + formatByteSize(limit) + " per message: one flag wait, no barrier)"};
}

// A reduction past the one-shot size limit on an NVLink mesh still runs LL one-shot while its lines fit the
// budget (2 ranks: up to 512 KiB of LL lines' messages).
bool llInsteadOfTwoShot(Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh,
                        const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes, bool ll128Lines) {
  return reducesWholeMessages(collective) && algorithm.algorithm == Algorithm::TwoShot && !algorithm.forced &&
         nvlinkMesh && protocol != Protocol::Simple &&
         bytes <= llWireLimit(nranks, llMaxBytes, lineBudget(collective, ll128Lines), ll128Lines);
}

// Whether a send/recv group whose ranks send at most `bytes` each runs in LL lines, and why. Off an NVLink
// mesh only as far as the copy collectives take LL there (the doubled bytes share PCIe links; unmeasured).
LlRule p2pLlRule(std::size_t bytes, Protocol protocol, bool nvlinkMesh) {
  if (protocol == Protocol::Simple || bytes > kP2pLlMaxBytes) return {};
  if (forcedLines(protocol)) {
    return {true, std::string("LL lines (forced by PEERLINK_PROTO=") + protocolName(protocol) + ")"};
  }
  const std::size_t limit = nvlinkMesh ? kP2pLlMaxBytes : kLlCopyMaxPcie;
  if (bytes > limit) return {};
  return {true, "LL lines (a rank sends <= " + formatByteSize(limit) + ": one flag wait, no barrier)"};
}

// The kernel that reads or copies, before the push and copy-engine rules.
KernelChoice readingKernel(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                           const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes,
                           bool ll128Lines) {
  const std::string& why = algorithm.reason;
  const Algorithm chosen = algorithm.algorithm;
  const LlRule ll = llRule(collective, bytes, nranks, nvlinkMesh, protocol, llMaxBytes, ll128Lines);
  const Kernel lines = Kernel::LlOneShot;
  if (llInsteadOfTwoShot(collective, bytes, nranks, nvlinkMesh, algorithm, protocol, llMaxBytes, ll128Lines)) {
    return choiceOf(Algorithm::OneShot, lines, why,
                    "but LL one-shot puts " + formatByteSize(lineWireBytes(bytes, nranks, ll128Lines)) +
                        " <= " + formatByteSize(lineBudget(collective, ll128Lines)) +
                        (ll128Lines ? " of LL128 lines" : " of lines") + " on a rank's links: one step, no barrier");
  }
  switch (collective) {
    case Collective::AllReduce:
      if (chosen == Algorithm::OneShot) {
        if (ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why);
        if (!inPlace) return choiceOf(Algorithm::OneShot, Kernel::OneShotReduce, why, "direct reads");
        KernelChoice twoShot = choiceOf(Algorithm::TwoShot, Kernel::TwoShot, why);
        twoShot.add("but one-shot in place without LL would overwrite inputs peers still read: two-shot");
        return twoShot;
      }
      if (chosen == Algorithm::Ring) {
        // Chosen (off a mesh, past one-shot's limit) it carries the message; forced, small messages stay LL.
        if (algorithm.forced && ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why);
        return choiceOf(Algorithm::Ring, Kernel::RingAllReduce, why,
                        "n chains side by side: each rank's segment reduced along the ranks into it, then passed on "
                        "from it (stores only)");
      }
      if (bytes >= kSplitTwoShotFrom && nvlinkMesh) {
        return choiceOf(Algorithm::TwoShot, Kernel::SplitTwoShot, why,
                        ">= " + formatByteSize(kSplitTwoShotFrom) +
                            ": as two kernels, a direct-read reduce-scatter into each rank's shard, then an all-gather "
                            "that stores it into the peers");
      }
      return choiceOf(Algorithm::TwoShot, Kernel::TwoShot, why);
    case Collective::Reduce:
      if (chosen == Algorithm::TwoShot) {
        if (reduceTwoShotSharesRoot(bytes, nranks)) {
          return choiceOf(Algorithm::TwoShot, Kernel::TwoShot, why,
                          "each rank reduces its shard into the root's output");
        }
        return choiceOf(Algorithm::TwoShot, Kernel::TwoShot, why,
                        ">= " + formatByteSize(kReduceRootShardBelow) +
                            ": each non-root rank reduces its shard of every input into the root's output" +
                            gridCapNote(Collective::Reduce, bytes, nranks) + ", the root only lends its input");
      }
      if (ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why + ", output on the root only");
      if (chosen == Algorithm::OneShot) {
        return choiceOf(Algorithm::OneShot, Kernel::OneShotReduce, why, "the root reads every rank");
      }
      return choiceOf(
          Algorithm::Ring, Kernel::RingReduce, why,
          "each rank combines every chunk with its input and stores it into the next rank's stage, the root "
          "into its output (stores only, each link carries the data once)");
    case Collective::ReduceScatter:
      if (ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why);
      if (chosen == Algorithm::Ring) {
        return choiceOf(Algorithm::Ring, Kernel::RingReduceScatter, why,
                        "n chains side by side: block j reduced along the ranks into rank j (stores only)");
      }
      return choiceOf(Algorithm::OneShot, Kernel::ShardReduce, why);
    case Collective::Broadcast:
      if (ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why + ", the root stores to every rank");
      if (chosen == Algorithm::Ring) {
        return choiceOf(Algorithm::Ring, Kernel::RingBroadcast, why,
                        "each rank stores every chunk into the next rank's output as it arrives (stores only, each "
                        "link carries the data once)");
      }
      if (chosen == Algorithm::TwoShot && nranks > 2) {
        return choiceOf(Algorithm::TwoShot, Kernel::Copy, why,
                        "each non-root rank pulls 1/(n-1) of the root's buffer once and stores it to every non-root "
                        "rank" +
                            gridCapNote(Collective::Broadcast, bytes, nranks));
      }
      return choiceOf(Algorithm::OneShot, Kernel::Copy, why, "every rank reads the root's buffer");
    case Collective::AllGather:
    case Collective::AllToAll: {
      if (ll.use) return choiceOf(Algorithm::OneShot, lines, why, ll.why);
      KernelChoice copy = choiceOf(Algorithm::OneShot, Kernel::Copy, why);
      if (chosen == Algorithm::Ring) copy.add("ring is not built on GPUs yet: direct");
      return copy;
    }
    case Collective::SendRecv:
      if (const LlRule pairs = p2pLlRule(bytes, protocol, nvlinkMesh); pairs.use) {
        return choiceOf(Algorithm::OneShot, Kernel::LlPairs, why, pairs.why);
      }
      break;
  }
  return choiceOf(Algorithm::OneShot, Kernel::Copy, why);
}

// The largest shard of a two-shot over `nranks` ranks of a `bytes` message, at most: partitionRange cuts at
// 16-byte boundaries.
std::size_t largestShardBytes(std::size_t bytes, int nranks) {
  const std::size_t parts = static_cast<std::size_t>(std::max(1, nranks));
  return ((bytes + parts - 1) / parts + 15) / 16 * 16;
}

// The push form of a direct-read two-shot reduction (TwoShot, SplitTwoShot, ShardReduce): PEERLINK_COLL_PUSH=1
// always; Pull never; Auto for an all-reduce two-shot AUTO chose (not forced) on 3+ ranks of an NVLink mesh from
// kAutoPushFrom while every shard fits a stage slot.
void pushRule(KernelChoice& choice, Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh, bool forced,
              PushMode push) {
  const bool twoShot = choice.kernel == Kernel::TwoShot || choice.kernel == Kernel::SplitTwoShot;
  if (collective != Collective::AllReduce && collective != Collective::ReduceScatter) return;
  if (!twoShot && choice.kernel != Kernel::ShardReduce) return;
  if (push == PushMode::Push) {
    choice.replace(choice.algorithm, Kernel::PushReduce,
                   "pushed (PEERLINK_COLL_PUSH=1): each rank stores its pieces into the owners' stages and they reduce "
                   "locally");
    return;
  }
  if (push != PushMode::Auto || collective != Collective::AllReduce || !twoShot || forced || !nvlinkMesh ||
      nranks < 3 || bytes < kAutoPushFrom || !kernels::collPushPhasedFits(largestShardBytes(bytes, nranks))) {
    return;
  }
  choice.replace(choice.algorithm, Kernel::PushReduce,
                 "pushed in two phases (>= " + formatByteSize(kAutoPushFrom) +
                     " on 3+ ranks of an NVLink mesh, every shard within a " +
                     formatByteSize(kernels::kCollPushSlotBytes) +
                     " stage slot): each rank stores its pieces into the owners' stages, they reduce locally and "
                     "store the result into every output (stores only)");
}

// The bytes one rank of `collective` with `bytes` per rank pushes to its n - 1 peers in the copy-engine form.
std::size_t pushedBytes(Collective collective, std::size_t bytes, int nranks) {
  const auto peers = static_cast<std::size_t>(nranks - 1);
  const auto ranks = static_cast<std::size_t>(nranks);
  if (collective == Collective::AllReduce) return (bytes + ranks - 1) / ranks * peers;  // a shard to each peer
  if (collective == Collective::SendRecv) return bytes;  // `bytes`: the most one rank sends in the group
  return bytes * peers;
}

// The copy-engine form of the copies of an all-gather, all-to-all, send/recv group or all-reduce's gather: On
// wherever it exists; Off never; Auto on an NVLink mesh where the bytes a rank pushes reach the size from
// which the copy engines were measured faster.
void copyEngineRule(KernelChoice& choice, Collective collective, std::size_t bytes, int nranks, bool nvlinkMesh,
                    CopyEngineMode mode) {
  if (mode == CopyEngineMode::Off || nranks < 2) return;
  Kernel engine = Kernel::CeCopy;
  const char* how = nullptr;
  switch (choice.kernel) {
    case Kernel::LlPairs:  // a small send/recv group: on the copy engines only when forced
      if (mode != CopyEngineMode::On) return;
      [[fallthrough]];
    case Kernel::Copy:
      if (collective == Collective::SendRecv) {
        how = "each rank's copy engine pushes its sends into the receivers' buffers between two barrier kernels";
        break;
      }
      if (collective != Collective::AllGather && collective != Collective::AllToAll) return;
      how = "the copy engines push each rank's data to its peers, the next rank first, between two barrier kernels";
      break;
    case Kernel::TwoShot:
    case Kernel::SplitTwoShot:
      if (collective != Collective::AllReduce) return;
      engine = Kernel::CeTwoShot;
      how = "a direct-read reduce-scatter kernel, then the copy engines push each rank's shard to its peers";
      break;
    case Kernel::RingAllReduce:
      engine = Kernel::CeRingAllReduce;
      how =
          "n chains side by side reduce each rank's segment along the ranks into it, then the copy engines push "
          "each rank's segment to its peers";
      break;
    default: return;
  }
  if (mode == CopyEngineMode::On) {
    choice.replace(choice.algorithm, engine, std::string("copies on the copy engines (PEERLINK_COLL_CE=1): ") + how);
    return;
  }
  const std::size_t pushed = pushedBytes(collective, bytes, nranks);
  const std::size_t from = collective == Collective::SendRecv ? kCeSendFromPushedBytes
                           : engine == Kernel::CeCopy         ? kCeCopyFromPushedBytes
                                                              : kCeGatherFromPushedBytes;
  if (!nvlinkMesh || pushed < from) return;
  choice.replace(choice.algorithm, engine,
                 "a rank pushes " + formatByteSize(pushed) + " >= " + formatByteSize(from) + ": " + how);
}

}  // namespace

KernelChoice kernelForAlgorithm(Collective collective, std::size_t bytes, bool inPlace, int nranks, bool nvlinkMesh,
                                const AlgorithmChoice& algorithm, Protocol protocol, std::size_t llMaxBytes,
                                PushMode push, bool ll128Lines, CopyEngineMode copyEngine) {
  KernelChoice choice =
      readingKernel(collective, bytes, inPlace, nranks, nvlinkMesh, algorithm, protocol, llMaxBytes, ll128Lines);
  // An explicit PEERLINK_COLL_CE=1 goes before AUTO's push (the copy-engine two-shot has copies to move).
  const PushMode pushing = push == PushMode::Auto && copyEngine == CopyEngineMode::On ? PushMode::Pull : push;
  pushRule(choice, collective, bytes, nranks, nvlinkMesh, algorithm.forced, pushing);
  copyEngineRule(choice, collective, bytes, nranks, nvlinkMesh, copyEngine);
  return choice;
}

KernelChoice withLineFormat(KernelChoice choice, Collective collective, std::size_t bytes, int nranks,
                            Protocol protocol, bool capable) {
  if (choice.kernel != Kernel::LlOneShot || protocol == Protocol::Ll || protocol == Protocol::Simple) return choice;
  if (!capable) {
    if (protocol == Protocol::Ll128)
      choice.add("LL lines: LL128 needs NVLink between every pair and compute capability 9.0+");
    return choice;
  }
  std::string why;
  if (protocol == Protocol::Ll128) {
    why = "in LL128 lines (forced by PEERLINK_PROTO=LL128)";
  } else if (reducesWholeMessages(collective)) {
    why = "in LL128 lines (a reduction of whole messages: LL128's as fast as LL's at one line)";
  } else if (const std::size_t llLines = lineWireBytes(bytes, nranks, false); llLines >= kLl128FromWireBytes) {
    why = "in LL128 lines (LL's would put " + formatByteSize(llLines) + " >= " + formatByteSize(kLl128FromWireBytes) +
          " on a rank's links; LL128 carries 120 payload bytes per 128)";
  } else {
    return choice;
  }
  choice.kernel = Kernel::Ll128OneShot;  // the LL rule's clause stands: the same exchange in wider lines
  choice.wanted = Kernel::Ll128OneShot;
  choice.add(std::move(why));
  return choice;
}

}  // namespace peerlink::coll
