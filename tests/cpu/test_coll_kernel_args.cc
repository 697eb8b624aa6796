// The direct collective kernels' per-rank arguments (coll/kernel_args.hpp), checked without a GPU: every rank's
// arguments are built over host buffers, a host model of each kernel runs them (what the kernel's comment in
// coll_kernels.cuh says it does, ranks one after another, every read of a call before its writes), and each
// rank's output is compared with the closed form (hostReduceReference) for 2-8 ranks, several roots and counts
// that do not divide evenly.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "coll/choice_thresholds.hpp"
#include "coll/host_reduce.hpp"
#include "coll/kernel_args.hpp"
#include "kernel_models.hpp"

namespace peerlink::coll {
namespace {

using kernels::CollCopyArgs;
using kernels::CollLlArgs;
using kernels::CollPushReduceArgs;
using kernels::CollReduceArgs;

constexpr DataType kType = DataType::I32;  // exact sums: any reduction order gives the closed form
constexpr std::size_t kSize = 4;

// One call over every rank, in host memory: each rank's send and recv buffers (null where the API ignores
// them, so a builder that touches one fails), the table of pointers the launcher would make, and the views.
struct HostCall {
  Collective collective;
  int nranks;
  std::size_t count;
  int root;
  std::vector<Bytes> send, recv;
  SymmetricTable symmetric;  // the kernels' scratch areas: the models never touch them
  PeerPointerTable table;

  HostCall(Collective c, int n, std::size_t elements, int rootRank)
      : collective(c), nranks(n), count(elements), root(rootRank), send(n), recv(n) {
    for (int r = 0; r < n; ++r) {
      send[r].resize(sendElementsOf(c, n, count, r, root) * kSize);
      recv[r].resize(recvElementsOf(c, n, count, r, root) * kSize);
      for (std::size_t i = 0; i < send[r].size() / kSize; ++i) {
        storeElement(kType, send[r].data(), i, static_cast<double>((r + 1) * 1000 + static_cast<int>(i % 997)));
      }
      if (!recv[r].empty()) std::memset(recv[r].data(), 0xEE, recv[r].size());  // poison: what is never written shows
      table.send[r] = send[r].empty() ? nullptr : send[r].data();
      table.recv[r] = recv[r].empty() ? nullptr : recv[r].data();
    }
  }
  CallArgs call(int rank) const {
    CallArgs args;
    args.collective = collective;
    args.rank = rank;
    args.send = table.send[rank];
    args.recv = table.recv[rank];
    args.count = count;
    args.type = kType;
    args.root = root;
    return args;
  }
  RankView view(int rank) const {
    RankView v;
    v.rank = rank;
    v.nranks = nranks;
    v.maxBlocks = 132;
    v.table = &symmetric;
    return v;
  }
  // The API's count in bytes as the launchers pass it (per rank for the blocked collectives).
  std::size_t bytes() const { return count * kSize; }

  void expectClosedForm(const std::string& label) const {
    std::vector<Bytes> inputs = send;
    const std::vector<Bytes> expected =
        hostReduceReference(collective, kType, ReduceOp::Sum, nranks, count, root, inputs);
    for (int r = 0; r < nranks; ++r) {
      if (expected[r].empty()) continue;
      const auto mismatch = findMismatch(kType, tolerance(kType, ReduceOp::Sum, nranks), expected[r], recv[r]);
      EXPECT_FALSE(mismatch.has_value()) << label << " rank " << r << ": " << mismatch.value_or("");
    }
  }
};

std::string labelOf(const char* kernel, const HostCall& c) {
  return std::string(kernel) + " " + collectiveName(c.collective) + " n=" + std::to_string(c.nranks) +
         " count=" + std::to_string(c.count) + " root=" + std::to_string(c.root);
}

// The LL one-shot kernel: rank s's message for p is toRank[p] (null: a token, which p must expect); p reduces
// the messages it hears into out, or copies rank s's into fromRank[s].
void runLl(const std::vector<CollLlArgs>& args, const std::string& label) {
  const int n = static_cast<int>(args.size());
  for (int p = 0; p < n; ++p) {
    const CollLlArgs& receiver = args[p];
    for (int s = 0; s < n; ++s) {
      if (s == p) continue;
      const bool token = args[s].toRank[p] == nullptr;
      EXPECT_EQ(token, (receiver.tokenMask >> s & 1u) != 0) << label << ": rank " << s << " to " << p;
    }
    if (receiver.reduce) {
      if (receiver.out == nullptr) continue;
      std::vector<const void*> heard;
      for (int s = 0; s < n; ++s) {
        if (args[s].toRank[p] != nullptr) heard.push_back(args[s].toRank[p]);
      }
      ASSERT_EQ(static_cast<int>(heard.size()), n) << label << ": rank " << p << " reduces a partial set";
      reduceInto(kType, {receiver.out}, heard, receiver.bytes / kSize);
      continue;
    }
    for (int s = 0; s < n; ++s) {
      if (receiver.fromRank[s] != nullptr && args[s].toRank[p] != nullptr) {
        std::memcpy(receiver.fromRank[s], args[s].toRank[p], receiver.bytes);
      }
    }
  }
}

// The push reduction: rank p reduces, in rank order, every rank's input for its shard into its destinations.
void runPush(const std::vector<CollPushReduceArgs>& args, const std::string& label) {
  const int n = static_cast<int>(args.size());
  for (int p = 0; p < n; ++p) {
    const std::size_t elements = args[p].shardCount[p];
    for (int r = 0; r < n; ++r) EXPECT_EQ(args[r].shardCount[p], elements) << label << ": shard " << p;
    if (elements == 0) continue;
    std::vector<const void*> srcs;
    for (int r = 0; r < n; ++r) srcs.push_back(args[r].shardInput[p]);
    reduceInto(kType, std::vector<void*>(args[p].dst, args[p].dst + args[p].ndst), srcs, elements);
  }
}

CollectiveChoice choiceOf(Kernel kernel, Algorithm algorithm = Algorithm::OneShot) {
  CollectiveChoice choice;
  choice.kernel = kernel;
  choice.wanted = kernel;
  choice.algorithm = algorithm;
  return choice;
}

const std::vector<std::size_t> kCounts = {1, 5, 37, 1000, 4099};

// Every rank and root of 2-8 ranks, every count, for `collectives`.
template <typename Fn>
void forEachCall(std::initializer_list<Collective> collectives, const std::vector<std::size_t>& counts, Fn&& check) {
  for (const Collective collective : collectives) {
    const bool rooted = collective == Collective::Broadcast || collective == Collective::Reduce;
    for (int n = 2; n <= 8; ++n) {
      for (const std::size_t count : counts) {
        for (int root = 0; root < (rooted ? n : 1); ++root) {
          HostCall c(collective, n, count, root);
          check(c);
        }
      }
    }
  }
}

TEST(CollKernelArgs, LlOneShotDeliversEveryCollective) {
  for (const bool ll128 : {false, true}) {
    forEachCall({Collective::AllReduce, Collective::Reduce, Collective::ReduceScatter, Collective::AllGather,
                 Collective::AllToAll, Collective::Broadcast},
                kCounts, [&](HostCall& c) {
                  const std::string label = labelOf(ll128 ? "ll128" : "ll", c);
                  std::vector<CollLlArgs> args;
                  for (int r = 0; r < c.nranks; ++r) args.push_back(llArgs(c.view(r), c.call(r), c.bytes(), ll128));
                  for (int r = 0; r < c.nranks; ++r) {
                    EXPECT_EQ(args[r].sync.rank, r);
                    EXPECT_EQ(args[r].sync.nranks, c.nranks);
                    EXPECT_EQ(args[r].sync.peerMask, everyRank(c.nranks)) << label;
                  }
                  runLl(args, label);
                  c.expectClosedForm(label);
                });
  }
}

// Every rank's direct-read reduction arguments for one call, run by the model and checked.
void checkReduction(Kernel kernel, HostCall& c) {
  const std::string label = labelOf(kernelName(kernel), c);
  std::vector<CollReduceArgs> args;
  for (int r = 0; r < c.nranks; ++r) {
    const ReductionLaunch launch = reductionArgs(c.view(r), c.table, c.call(r), choiceOf(kernel), c.bytes());
    EXPECT_GE(launch.blocks, 1) << label;
    EXPECT_LE(launch.blocks, 132) << label;
    args.push_back(launch.args);
  }
  runReductionModel(kType, args);
  c.expectClosedForm(label);
}

TEST(CollKernelArgs, DirectReductionsReachTheClosedForm) {
  forEachCall({Collective::AllReduce, Collective::Reduce}, kCounts,
              [](HostCall& c) { checkReduction(Kernel::OneShotReduce, c); });
  forEachCall({Collective::AllReduce, Collective::Reduce}, kCounts,
              [](HostCall& c) { checkReduction(Kernel::TwoShot, c); });
  forEachCall({Collective::ReduceScatter}, kCounts, [](HostCall& c) { checkReduction(Kernel::ShardReduce, c); });
}

TEST(CollKernelArgs, LargeTwoShotReduceCutsAmongTheNonRootRanks) {
  // From kReduceRootShardBelow bytes (choice_thresholds.hpp) the root takes no shard.
  const std::size_t count = threshold::kReduceRootShardBelow / kSize + 3;
  for (const int n : {2, 3, 8}) {
    for (const int root : {0, n - 1}) {
      HostCall c(Collective::Reduce, n, count, root);
      checkReduction(Kernel::TwoShot, c);
    }
  }
}

TEST(CollKernelArgs, PushReductionPartsCoverEveryShard) {
  // Stage slots of a few elements, so counts need several parts and the last part of a shard is short.
  for (const std::size_t slotCount : {std::size_t{4}, std::size_t{64}, std::size_t{1} << 20}) {
    forEachCall({Collective::AllReduce, Collective::ReduceScatter}, kCounts, [&](HostCall& c) {
      const std::string label = labelOf("push", c) + " slot=" + std::to_string(slotCount);
      const std::size_t longest = longestPushShard(c.call(0), c.nranks);
      const std::size_t parts = (longest + slotCount - 1) / slotCount;
      for (std::size_t part = 0; part < parts; ++part) {
        std::vector<CollPushReduceArgs> args;
        for (int r = 0; r < c.nranks; ++r) {
          args.push_back(pushReduceArgs(c.view(r), c.table, c.call(r), slotCount, part));
          for (int p = 0; p < c.nranks; ++p) EXPECT_LE(args[r].shardCount[p], slotCount) << label;
        }
        runPush(args, label);
      }
      c.expectClosedForm(label);
    });
  }
}

TEST(CollKernelArgs, CopiesBroadcastGatherAndExchange) {
  for (const Algorithm algorithm : {Algorithm::OneShot, Algorithm::TwoShot}) {
    forEachCall({Collective::Broadcast, Collective::AllGather, Collective::AllToAll}, kCounts, [&](HostCall& c) {
      const std::string label = labelOf(algorithm == Algorithm::TwoShot ? "copy two-shot" : "copy", c);
      const CollectiveChoice choice = choiceOf(Kernel::Copy, algorithm);
      std::vector<CollCopyArgs> args;
      for (int r = 0; r < c.nranks; ++r) {
        args.push_back(copyArgs(c.view(r), c.table, c.call(r), choice, c.bytes()));
        EXPECT_EQ(args[r].chunkBytes % 16, 0u) << label;
        for (int j = 0; j < args[r].njobs; ++j) EXPECT_NE(args[r].jobs[j].src, nullptr) << label;
      }
      const int blocks = copyBlocks(c.view(0), c.call(0), choice, c.bytes());
      EXPECT_GE(blocks, 1) << label;
      runCopyModel(args);
      c.expectClosedForm(label);
    });
  }
}

TEST(CollKernelArgs, InPlaceCopiesSkipTheLocalCopy) {
  // All-gather in place: each rank's input is its own block of its output, so it stores only into its peers.
  const int n = 4;
  const std::size_t count = 9;
  std::vector<Bytes> buffers(n, Bytes(n * count * kSize));
  PeerPointerTable table;
  for (int r = 0; r < n; ++r) {
    table.recv[r] = buffers[r].data();
    table.send[r] = buffers[r].data() + r * count * kSize;
  }
  SymmetricTable symmetric;
  for (int r = 0; r < n; ++r) {
    RankView view;
    view.rank = r;
    view.nranks = n;
    view.table = &symmetric;
    CallArgs call;
    call.collective = Collective::AllGather;
    call.rank = r;
    call.send = table.send[r];
    call.recv = table.recv[r];
    call.count = count;
    call.type = kType;
    const CollCopyArgs args = copyArgs(view, table, call, choiceOf(Kernel::Copy), count * kSize);
    ASSERT_EQ(args.njobs, 1);
    EXPECT_EQ(args.jobs[0].ndst, n - 1) << "rank " << r;
    for (int k = 0; k < args.jobs[0].ndst; ++k) EXPECT_NE(args.jobs[0].dst[k], args.jobs[0].src);
  }
}

}  // namespace
}  // namespace peerlink::coll
