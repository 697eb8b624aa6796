// Launch threads: a communicator's per-rank work for one matched set done side by side, one thread per rank.
//
// An eager collective puts one or more launches on every rank's stream, and the CUDA driver takes a
// launch's host time on the thread that makes it: on the 4x H100 machine (peerlink_host_cost) a kept one-node graph's
// launch on four GPUs took 6.0-9.3 us of one thread's time, and 3.1-3.8 us when four threads, each with its GPU
// current, launched one each at once (the driver lets them proceed side by side; handing the work over and hearing back
// cost 0.25-0.46 us).
//
// Thread i (1 <= i < count) serves index i; the caller serves index 0 itself. A thread that has just worked
// stays awake, spinning, for `hotFor`, and takes the next set's job at once (a job it has not started within
// `takeBackAfter` of the caller's own jobs, as when the operating system has descheduled it, the caller
// takes back and runs itself). Past `hotFor` it parks on a condition variable, and its jobs run on the
// caller's thread instead (never slower than without threads, as waking it would cost the caller a system
// call and the thread tens of microseconds). A set that comes within `hotFor` of the previous one wakes the
// parked threads after its jobs; a woken thread takes jobs once it runs again, so a run of calls moves onto
// the threads after its first sets, while calls spaced further apart never wake them.
//
// Not copyable or movable; run() is for one caller at a time (the communicator calls it under its lock).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/cpu_set.hpp"

namespace peerlink::coll {

class LaunchThreads {
 public:
  using Clock = std::chrono::steady_clock;
  /// An awake thread takes a posted job within a microsecond; one the operating system has descheduled may
  /// not for a whole time slice (milliseconds), which a set would otherwise wait out.
  static constexpr std::chrono::microseconds kTakeBackAfter{20};

  /// Starts count - 1 threads, awake; thread i calls enter(i) once before its first job (e.g. making its
  /// GPU current). A thread whose enter() throws never takes a job: its index runs on the caller's thread.
  /// A job its thread has not taken within `takeBackAfter` the caller takes back. Thread i first restricts
  /// itself to the CPUs `cpus[i]` when that is given and not empty (cpu_affinity.hpp; a mask the kernel
  /// refuses is logged and the thread stays where it started).
  LaunchThreads(int count, std::function<void(int)> enter, Clock::duration hotFor,
                Clock::duration takeBackAfter = kTakeBackAfter, std::vector<CpuSet> cpus = {});
  ~LaunchThreads();
  LaunchThreads(const LaunchThreads&) = delete;
  LaunchThreads& operator=(const LaunchThreads&) = delete;

  int count() const { return count_; }

  /// What run() has done so far, for the COLL log.
  struct Stats {
    std::uint64_t sets = 0;         ///< run() calls
    std::uint64_t handedOver = 0;   ///< jobs a thread ran
    std::uint64_t takenBack = 0;    ///< jobs posted to a thread that had not taken them within takeBackAfter
    Clock::duration longestWait{};  ///< the longest the caller waited for a posted job
  };
  const Stats& stats() const { return stats_; }

  /// Calls job(index, here) once for every index in [0, count): index 0, any index whose thread is not
  /// awake, and any whose thread did not take its job within takeBackAfter, on this thread (here = true);
  /// the others on their threads at the same time (here = false). Returns once every call has returned;
  /// then rethrows the exception of the lowest index that threw.
  template <typename Job>
  void run(Job&& job) {
    using Callable = std::remove_reference_t<Job>;
    runErased(const_cast<void*>(static_cast<const void*>(&job)),
              [](void* context, int index, bool here) { (*static_cast<Callable*>(context))(index, here); });
  }

 private:
  using Call = void (*)(void* context, int index, bool here);
  struct Worker;

  void runErased(void* context, Call call);
  void serve(Worker& worker);
  void breakDown(Worker& worker, const std::exception_ptr& failure);
  void wakeParked();
  void stop() noexcept;

  int count_ = 0;
  std::function<void(int)> enter_;
  std::vector<CpuSet> cpus_;  // per index; empty: not restricted
  Clock::duration hotFor_;
  Clock::duration takeBackAfter_;
  Clock::time_point lastRun_;
  std::mutex mutex_;  // guards parking and waking (the workers' states change under it to and from kParked)
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Worker>> workers_;  // index i - 1 serves index i
  std::vector<char> posted_;                      // run()'s, per index: handed to its thread
  std::vector<std::exception_ptr> errors_;        // run()'s, per index
  Stats stats_;
};

}  // namespace peerlink::coll
