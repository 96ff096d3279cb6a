// The compute executor of denocd: a fixed pool of threads that runs every call's work (parsing and
// checking requests, registrations, batches, simulation chunks, stream messages), so that gRPC's own
// threads only move bytes and answer cheap calls (health) while heavy work runs.
//
// Queue. Work waits in one first-in first-out queue per principal (a token's name, or the peer's
// address), and the threads serve the principals in turn (round robin), so one principal's burst delays
// another's calls by at most one piece of work per thread. A unary call's work counts against two bounds:
// calls waiting in all (--compute-queue) and calls waiting for one principal (--principal-queue); a call
// over either is refused at once with RESOURCE_EXHAUSTED naming the flag. The next step of an open stream
// is never refused: each stream has at most one step queued at a time, and open streams are bounded by
// --max-streams.
//
// Thread-safe; no gRPC. Work must not throw (an exception is logged and dropped).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace denoc::server {

/// ServerOptions' --compute-threads, --compute-queue, --principal-queue.
struct ExecutorBounds {
  unsigned threads = 2;
  std::size_t queue = 64;
  std::size_t principal_queue = 32;
};

class ComputeExecutor {
 public:
  using Work = std::function<void()>;

  explicit ComputeExecutor(const ExecutorBounds& bounds);
  /// Runs what is queued, then stops the threads.
  ~ComputeExecutor();
  ComputeExecutor(const ComputeExecutor&) = delete;
  ComputeExecutor& operator=(const ComputeExecutor&) = delete;

  /// Queues a unary call's work for `principal`, or throws RequestError(ResourceExhausted) naming the bound.
  void submit(const std::string& principal, Work work);

  /// Queues the next step of an open stream of `principal`: never refused (see the file comment).
  void submitStep(const std::string& principal, Work work);

  unsigned threads() const { return static_cast<unsigned>(threads_.size()); }
  /// Unary calls waiting now, in all and for one principal.
  std::size_t waiting() const;
  /// Pieces of work waiting now (unary calls and stream steps), and threads running one.
  std::size_t queued() const;
  std::size_t busy() const { return busy_.load(std::memory_order_relaxed); }
  std::size_t waitingFor(const std::string& principal) const;

 private:
  struct Item {
    Work work;
    bool counted;  // a unary call's (counted against the bounds)
  };
  struct Lane {
    std::deque<Item> items;
    std::size_t counted = 0;
    bool in_turn = false;  // in turns_
  };

  void enqueue(const std::string& principal, Work work, bool counted);
  void loop();

  ExecutorBounds bounds_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::unordered_map<std::string, Lane> lanes_;
  std::deque<std::string> turns_;  // principals with work, in the order they are served
  std::size_t counted_ = 0;
  std::size_t queued_ = 0;  // items in every lane
  std::atomic<std::size_t> busy_{0};
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace denoc::server
