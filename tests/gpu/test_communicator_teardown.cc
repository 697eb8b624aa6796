// A communicator's end waits for its own work only: two communicators, A and B, over the same two processes (sharing
// the GPU where the machine has one). Rank 0's all-reduce on A waits for rank 1, which never calls it, under a
// deadline of a minute; aborting and destroying B meanwhile must end within seconds, leave A's kernel waiting, and
// hold B's buffers back (freeing them may wait for the device, which runs A's kernel); aborting A then stops its
// kernel, ends within seconds too, and frees what B held. Before the fix B's destroy synchronized the device and so
// waited for A's kernel until its deadline.
//
// Fork safety: this process never touches CUDA (forked_roles.hpp); a probe child counts the GPUs.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "communicator_processes_support.hpp"
#include "core/gpu_work.hpp"

namespace peerlink::testing {
namespace {

constexpr int kRanks = 2;
constexpr double kPromptSeconds = 5;  // an abort beside a stalled communicator: its own drain and the idle wait

Params teardownParams() {
  Params params = Params::fromEnvironment();
  params.set("PEERLINK_TIMEOUT_MS", "60000");  // A's kernel would wait a minute: only an abort can stop it sooner
  params.set("PEERLINK_BOOTSTRAP_TIMEOUT_MS", "30000");
  if (sharing(kRanks)) params.set("PEERLINK_COLL_SHARE_GPUS", "1");
  return params;
}

UniqueId shareId(int rank, Pipe& pipe) {
  if (rank != 0) return uniqueIdFromString(pipe.receive());
  const UniqueId id = makeUniqueId();
  pipe.send(uniqueIdToString(id));
  return id;
}

// Rank 0's part, with A's all-reduce waiting on `streamA`.
int abortBesideAStalledOne(std::unique_ptr<Communicator>& a, std::unique_ptr<Communicator>& b, cudaStream_t streamA) {
  const int rank = 0;
  std::this_thread::sleep_for(300ms);
  if (cudaStreamQuery(streamA) != cudaErrorNotReady) return fail(rank, "A's all-reduce did not wait for rank 1");
  const HeldCounts before = heldCounts();

  auto start = Clock::now();
  b->abort();
  b.reset();
  const double bSeconds = secondsSince(start);
  std::printf("[rank 0] B aborted and destroyed in %.2f s while A's kernel waits\n", bSeconds);
  if (bSeconds > kPromptSeconds) {
    return fail(rank, fmt::format("aborting B took {:.1f} s: it waited for A's kernel", bSeconds));
  }
  if (cudaStreamQuery(streamA) != cudaErrorNotReady) return fail(rank, "A's kernel stopped when B ended");
  if (const std::optional<Error> error = a->asyncError()) return fail(rank, std::string("A failed: ") + error->what());
  const HeldCounts held = heldCounts();
  if (held.waiting != before.waiting + 1 || held.waitingBytes <= before.waitingBytes) {
    return fail(rank, fmt::format("B's buffers were not held back while A's kernel runs ({} held, {} before)",
                                  held.waiting, before.waiting));
  }

  start = Clock::now();
  a->abort();
  if (!finishes(streamA, kPromptSeconds)) return fail(rank, "A's kernel did not stop within 5 s of its abort");
  a.reset();
  const double aSeconds = secondsSince(start);
  std::printf("[rank 0] A aborted and destroyed in %.2f s\n", aSeconds);
  if (aSeconds > kPromptSeconds) return fail(rank, fmt::format("aborting A took {:.1f} s", aSeconds));
  const HeldCounts after = heldCounts();
  if (after.waiting != before.waiting || after.releasedLater != before.releasedLater + 1) {
    return fail(rank, fmt::format("B's buffers were not freed once A ended ({} still held, {} released later)",
                                  after.waiting, after.releasedLater - before.releasedLater));
  }
  if (after.untilExit != before.untilExit) return fail(rank, "something was held until exit");
  return kOk;
}

TEST(CommunicatorTeardown, AbortingOneBesideAStalledOneEndsAtOnce) {
  PEERLINK_REQUIRE_PROCESS_WORLD();
  Pipe idsA;
  Pipe idsB;
  Pipe done;  // rank 0 -> rank 1: rank 1 keeps its ranks of A and B until rank 0 is through
  std::vector<std::unique_ptr<Child>> children;
  for (int rank = 0; rank < kRanks; ++rank) {
    children.push_back(std::make_unique<Child>("rank " + std::to_string(rank), [&, rank] {
      const int device = deviceOf(rank);
      const Params params = teardownParams();
      auto a = std::make_unique<Communicator>(shareId(rank, idsA), kRanks, rank, device, params);
      auto b = std::make_unique<Communicator>(shareId(rank, idsB), kRanks, rank, device, params);
      Stream streamA(device);
      Stream streamB(device);
      DeviceBuffer buffer(device, 4096);
      // B's own work, finished before it ends: its teardown has events of its own to find complete.
      b->allReduce(rank, buffer.data(), buffer.data(), 16, DataType::F32, ReduceOp::Sum, streamB.get());
      if (!finishes(streamB.get(), 30)) return fail(rank, "B's all-reduce did not finish");
      if (rank == 1) {
        done.expect("done");  // never calls on A: rank 0's all-reduce there waits for it
        return kOk;
      }
      a->allReduce(rank, buffer.data(), buffer.data(), 16, DataType::F32, ReduceOp::Sum, streamA.get());
      const int result = abortBesideAStalledOne(a, b, streamA.get());
      done.send("done");
      return result;
    }));
  }
  std::vector<Child*> raw;
  for (auto& child : children) raw.push_back(child.get());
  expectWorldOk(waitAll(raw));
}

}  // namespace
}  // namespace peerlink::testing
