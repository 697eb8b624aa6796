// Work queued on the GPUs and resources held until it has finished (gpu_work.hpp).
#include "core/gpu_work.hpp"

#include <algorithm>
#include <new>
#include <thread>
#include <utility>

#include "core/cuda_check.hpp"
#include "core/fork_safe_mutex.hpp"
#include "core/log.hpp"

namespace peerlink {
namespace {

// Entries of streams whose work has finished are dropped once a tracker knows this many streams: an owner usually
// queues on one or two streams, but an application may hand it a new one for every call.
constexpr std::size_t kPruneAt = 16;

struct Registry {
  ForkSafeMutex mutex;  // a child taking it after a fork (its creations and ends do) must find it free
  std::vector<const GpuWork*> work;
  std::vector<HeldResources> waiting;
  std::vector<HeldResources> untilExit;
  std::size_t releasedLater = 0;
};

// Never destroyed: resources may be released from static destructors (the NCCL API's communicators at exit).
Registry& registry() {
  static auto* const instance = new Registry;
  return *instance;
}

bool allFinished(const Registry& r) noexcept {
  return std::all_of(r.work.begin(), r.work.end(), [](const GpuWork* work) { return work->finished(); });
}

// The legacy and per-thread default streams stand for the current device's.
bool standsForCurrentDevice(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

// Whether `event`'s recorded work has completed; a failed query counts as complete (its context runs nothing more).
bool completed(const Event& event) noexcept {
  const cudaError_t status = cudaEventQuery(event.get());
  if (status == cudaErrorNotReady) return false;
  if (status != cudaSuccess) cudaGetLastError();
  return true;
}

// Polls `done` until it holds or `deadline` passes: every 20 us for the first 10 ms (a kernel told to stop leaves
// within microseconds, and a healthy communicator's last call within its own time, which pauses that double from the
// start overshoot by up to that time again), then less often, at most every 1 ms.
template <typename Done>
bool pollUntil(Done&& done, WorkClock::time_point deadline) noexcept {
  const WorkClock::time_point start = WorkClock::now();
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    if (done()) return true;
    const WorkClock::time_point now = WorkClock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(pause);
    if (now - start > std::chrono::milliseconds(10)) pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

std::string mib(std::size_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// Keeps `held` from ever being destroyed (a release that could not be recorded must not run at the wrong time).
void abandon(std::shared_ptr<void>&& held) noexcept {
  (void)new (std::nothrow) std::shared_ptr<void>(std::move(held));
}

}  // namespace

WorkTracker::WorkTracker() {
  registerGpuWork(this);
}

WorkTracker::~WorkTracker() {
  unregisterGpuWork(this);
}

void WorkTracker::recordAfter(int device, cudaStream_t stream) {
  const std::thread::id thread = stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id();
  const std::lock_guard<std::mutex> lock(mutex_);
  auto found = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return entry.device == device && entry.stream == stream && entry.thread == thread;
  });
  if (found == entries_.end()) {
    if (entries_.size() >= kPruneAt) {
      entries_.erase(
          std::remove_if(entries_.begin(), entries_.end(), [](const Entry& entry) { return completed(entry.event); }),
          entries_.end());
    }
    entries_.push_back(Entry{device, stream, thread, Event(device, cudaEventDisableTiming)});
    found = entries_.end() - 1;
  }
  if (standsForCurrentDevice(stream)) {
    const DeviceGuard guard(device);
    PEERLINK_CUDA_CHECK(cudaEventRecord(found->event.get(), stream));
    return;
  }
  // An event is recorded on a stream of its own device, whichever is current.
  PEERLINK_CUDA_CHECK(cudaEventRecord(found->event.get(), stream));
}

void WorkTracker::lostTrack() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  lost_ = true;
}

bool WorkTracker::tracksAll() const noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  return !lost_;
}

bool WorkTracker::finished() const noexcept {
  return unfinishedStreams() == 0;
}

bool WorkTracker::waitFinished(WorkClock::time_point deadline) const noexcept {
  return pollUntil([this] { return finished(); }, deadline);
}

std::size_t WorkTracker::unfinishedStreams() const noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& entry) { return !completed(entry.event); }));
}

void registerGpuWork(const GpuWork* work) {
  Registry& r = registry();
  const std::lock_guard<ForkSafeMutex> lock(r.mutex);
  r.work.push_back(work);
}

void unregisterGpuWork(const GpuWork* work) noexcept {
  Registry& r = registry();
  const std::lock_guard<ForkSafeMutex> lock(r.mutex);
  r.work.erase(std::remove(r.work.begin(), r.work.end(), work), r.work.end());
}

bool gpuWorkFinished() noexcept {
  Registry& r = registry();
  const std::lock_guard<ForkSafeMutex> lock(r.mutex);
  return allFinished(r);
}

bool releaseWhenIdle(HeldResources resources, WorkClock::time_point deadline, const std::string& why) noexcept {
  if (pollUntil([] { return gpuWorkFinished(); }, deadline)) {
    resources.held.reset();
    releaseHeldIfIdle();
    return true;
  }
  Registry& r = registry();
  std::size_t unfinished = 0;
  std::string what;
  const std::size_t bytes = resources.bytes;
  try {
    what = resources.what;
    const std::lock_guard<ForkSafeMutex> lock(r.mutex);
    unfinished = static_cast<std::size_t>(
        std::count_if(r.work.begin(), r.work.end(), [](const GpuWork* work) { return !work->finished(); }));
    r.waiting.push_back(std::move(resources));
  } catch (...) {  // no memory to record it: never released
    abandon(std::move(resources.held));
    return false;
  }
  try {
    logWarn(LogSubsys::Coll,
            "{}: {} held, not freed{}: GPU work of this process is still running ({} owner{} unfinished) and freeing "
            "may wait for it; released by a later communicator's creation or destruction once none runs, else by "
            "the driver at exit",
            what, mib(bytes), why.empty() ? std::string() : " (" + why + ")", unfinished, unfinished == 1 ? "" : "s");
  } catch (...) {  // no memory for the line: held all the same
  }
  return false;
}

void holdUntilExit(HeldResources resources, const std::string& why) noexcept {
  Registry& r = registry();
  std::string what;
  const std::size_t bytes = resources.bytes;
  try {
    what = resources.what;
    const std::lock_guard<ForkSafeMutex> lock(r.mutex);
    r.untilExit.push_back(std::move(resources));
  } catch (...) {  // no memory to record it: never released either way
    abandon(std::move(resources.held));
    return;
  }
  try {
    logWarn(LogSubsys::Coll, "{}: {} held until the process exits: {}", what, mib(bytes), why);
  } catch (...) {  // no memory for the line: held all the same
  }
}

std::size_t releaseHeldIfIdle() noexcept {
  Registry& r = registry();
  std::vector<HeldResources> released;
  {
    const std::lock_guard<ForkSafeMutex> lock(r.mutex);
    if (r.waiting.empty() || !allFinished(r)) return 0;
    released.swap(r.waiting);
    r.releasedLater += released.size();
  }
  // Outside the lock: a release unregisters the work it held.
  for (HeldResources& resources : released) {
    resources.held.reset();
    try {
      logInfo(LogSubsys::Coll, "{}: {} held earlier, now freed (no GPU work of this process runs)", resources.what,
              mib(resources.bytes));
    } catch (...) {  // no memory for the line: it was freed all the same
    }
  }
  return released.size();
}

HeldCounts heldCounts() {
  Registry& r = registry();
  const std::lock_guard<ForkSafeMutex> lock(r.mutex);
  HeldCounts counts;
  counts.waiting = r.waiting.size();
  for (const HeldResources& resources : r.waiting) counts.waitingBytes += resources.bytes;
  counts.untilExit = r.untilExit.size();
  for (const HeldResources& resources : r.untilExit) counts.untilExitBytes += resources.bytes;
  counts.releasedLater = r.releasedLater;
  return counts;
}

}  // namespace peerlink
