// LaunchThreads (launch_threads.hpp).
#include "coll/launch_threads.hpp"

#include <algorithm>
#include <utility>

#include "core/cpu_affinity.hpp"
#include "core/log.hpp"

namespace peerlink::coll {
namespace {

// A worker's states. Awake: spinning, takes a job by the caller's compare-and-swap to Posted. Posted: a job
// waits; the worker takes it by a compare-and-swap to Running, or the caller takes it back to Awake and runs
// it itself. Running: the worker stores Awake (release) when the job has returned. Parked: asleep on the
// condition variable, takes no job. Waking: notified, not yet running again (the operating system takes tens
// of microseconds to wake a thread); it takes no job until it has made itself Awake, so no set waits for a
// thread still in the kernel. Stopping: the destructor's. Broken: its enter() threw.
enum WorkerState : int { kAwake, kPosted, kRunning, kParked, kWaking, kStopping, kBroken };

// How many spins between clock reads while awake (a read costs ~20 ns; a spin a few).
constexpr int kSpinsPerClockRead = 64;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

struct LaunchThreads::Worker {
  int index = 0;
  std::atomic<int> state{kAwake};
  // The posted job: written by the caller before its compare-and-swap to Posted (release), read by the
  // worker after it has seen Posted (acquire).
  void* context = nullptr;
  Call call = nullptr;
  std::exception_ptr error;  // the job's, read by the caller after the worker's release of Awake
  std::thread thread;
};

LaunchThreads::LaunchThreads(int count, std::function<void(int)> enter, Clock::duration hotFor,
                             Clock::duration takeBackAfter, std::vector<CpuSet> cpus)
    : count_(count < 1 ? 1 : count),
      enter_(std::move(enter)),
      cpus_(std::move(cpus)),
      hotFor_(hotFor),
      takeBackAfter_(takeBackAfter),
      lastRun_(Clock::now()),
      posted_(static_cast<std::size_t>(count_), 0),
      errors_(static_cast<std::size_t>(count_)) {
  workers_.reserve(static_cast<std::size_t>(count_ - 1));
  try {
    for (int i = 1; i < count_; ++i) {
      workers_.push_back(std::make_unique<Worker>());
      Worker& worker = *workers_.back();
      worker.index = i;
      worker.thread = std::thread([this, &worker] { serve(worker); });
    }
  } catch (...) {  // a thread could not start: stop those that did
    stop();
    throw;
  }
}

LaunchThreads::~LaunchThreads() {
  stop();
}

void LaunchThreads::stop() noexcept {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& worker : workers_) worker->state.store(kStopping, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  workers_.clear();
}

void LaunchThreads::serve(Worker& worker) {
  const auto index = static_cast<std::size_t>(worker.index);
  if (index < cpus_.size() && !cpus_[index].empty()) {
    try {
      setCurrentThreadCpus(cpus_[index]);
    } catch (const std::exception& error) {
      logWarn(LogSubsys::Coll, "launch thread {} stays where it started: {}", worker.index, error.what());
    }
  }
  if (enter_) {
    try {
      enter_(worker.index);
    } catch (...) {
      breakDown(worker, std::current_exception());
      return;
    }
  }
  Clock::time_point sleepAt = Clock::now() + hotFor_;
  for (int spins = 0;; ++spins) {
    const int state = worker.state.load(std::memory_order_acquire);
    if (state == kStopping) return;
    if (state == kPosted) {
      int expected = kPosted;
      if (worker.state.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel)) {
        try {
          worker.call(worker.context, worker.index, false);
        } catch (...) {
          worker.error = std::current_exception();
        }
        worker.state.store(kAwake, std::memory_order_release);
      }  // else the caller took it back
      sleepAt = Clock::now() + hotFor_;
      spins = 0;
      continue;
    }
    if (spins % kSpinsPerClockRead == 0 && Clock::now() >= sleepAt) {
      int expected = kAwake;
      if (worker.state.compare_exchange_strong(expected, kParked, std::memory_order_acq_rel)) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return worker.state.load(std::memory_order_acquire) != kParked; });
        lock.unlock();
        int waking = kWaking;
        worker.state.compare_exchange_strong(waking, kAwake, std::memory_order_acq_rel);  // else Stopping
        sleepAt = Clock::now() + hotFor_;
      }
      continue;
    }
    cpuRelax();
  }
}

void LaunchThreads::breakDown(Worker& worker, const std::exception_ptr& failure) {
  for (;;) {  // a job posted meanwhile fails with enter()'s exception; then no job is taken any more
    int state = worker.state.load(std::memory_order_acquire);
    if (state == kStopping) return;
    if (state == kPosted) {
      worker.error = failure;
      worker.state.store(kBroken, std::memory_order_release);
      break;
    }
    if (worker.state.compare_exchange_strong(state, kBroken, std::memory_order_acq_rel)) break;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [&] { return worker.state.load(std::memory_order_acquire) == kStopping; });
}

void LaunchThreads::wakeParked() {
  bool woke = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& worker : workers_) {
      int expected = kParked;
      woke = worker->state.compare_exchange_strong(expected, kWaking, std::memory_order_acq_rel) || woke;
    }
  }
  if (woke) wake_.notify_all();
}

void LaunchThreads::runErased(void* context, Call call) {
  const Clock::time_point start = Clock::now();
  bool anyHere = false;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& worker = *workers_[i];
    worker.context = context;
    worker.call = call;
    worker.error = nullptr;
    int expected = kAwake;
    posted_[i + 1] = worker.state.compare_exchange_strong(expected, kPosted, std::memory_order_acq_rel);
    anyHere = anyHere || !posted_[i + 1];
  }
  // Every index's exception, the caller's too, is kept until every posted job has returned: the jobs use
  // `context`, which lives on the caller's stack.
  for (int index = 0; index < count_; ++index) {
    std::exception_ptr& error = errors_[static_cast<std::size_t>(index)];
    error = nullptr;
    if (index > 0 && posted_[static_cast<std::size_t>(index)]) continue;
    try {
      call(context, index, true);
    } catch (...) {
      error = std::current_exception();
    }
  }
  // One deadline for every posted job: each thread has had the caller's own jobs' time already.
  const Clock::time_point waitFrom = Clock::now();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!posted_[i + 1]) continue;
    Worker& worker = *workers_[i];
    bool takenBack = false;
    for (int spins = 1;; ++spins) {
      const int state = worker.state.load(std::memory_order_acquire);
      if (state != kPosted && state != kRunning) break;
      if (state == kPosted && spins % kSpinsPerClockRead == 0 && Clock::now() - waitFrom > takeBackAfter_) {
        int expected = kPosted;
        if (worker.state.compare_exchange_strong(expected, kAwake, std::memory_order_acq_rel)) {
          takenBack = true;
          break;
        }
      }
      cpuRelax();
    }
    const Clock::duration waited = Clock::now() - waitFrom;
    stats_.longestWait = std::max(stats_.longestWait, waited);
    if (takenBack) {
      ++stats_.takenBack;
      try {
        call(context, static_cast<int>(i) + 1, true);
      } catch (...) {
        errors_[i + 1] = std::current_exception();
      }
    } else {
      ++stats_.handedOver;
      errors_[i + 1] = worker.error;
    }
  }
  ++stats_.sets;
  if (anyHere && start - lastRun_ < hotFor_) wakeParked();
  lastRun_ = start;
  for (std::exception_ptr& error : errors_) {
    if (error) std::rethrow_exception(std::exchange(error, nullptr));
  }
}

}  // namespace peerlink::coll
