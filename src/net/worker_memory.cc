// workerHostMemory (worker_memory.hpp).
#include "net/worker_memory.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "coll/host_reduce.hpp"

namespace peerlink::net {
namespace {

class WorkerMemory final : public LocalMemory {
 public:
  WorkerMemory() : thread_([this] { work(); }) {}

  ~WorkerMemory() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void copy(void* dst, const void* src, std::size_t bytes) override { host_.copy(dst, src, bytes); }

  void reduce(DataType type, ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
              int divisor, bool finish) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back({type, op, dst, srcs, count, divisor, finish});
      ++queued_;
    }
    changed_.notify_one();
  }

  void* temporary(std::size_t lane, std::size_t bytes) override { return host_.temporary(lane, bytes); }
  void release(std::size_t lane) override { host_.release(lane); }
  void* persistent(std::size_t bytes) override { return host_.persistent(bytes); }

  bool queues() const override { return true; }
  std::uint64_t mark() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_;
  }
  bool reached(std::uint64_t marker) override { return done_.load(std::memory_order_acquire) >= marker; }

 private:
  struct Job {
    DataType type;
    ReduceOp op;
    void* dst;
    std::vector<const void*> srcs;
    std::size_t count;
    int divisor;
    bool finish;
  };

  // Runs the jobs in the order queued; on stopping, those queued before it first.
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      const Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      coll::hostReduce(job.type, job.op, job.dst, job.srcs, job.count, job.divisor, job.finish);
      done_.fetch_add(1, std::memory_order_release);
      lock.lock();
    }
  }

  HostMemory host_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;
  std::uint64_t queued_ = 0;
  std::atomic<std::uint64_t> done_{0};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LocalMemory> workerHostMemory() {
  return std::make_unique<WorkerMemory>();
}

}  // namespace peerlink::net
