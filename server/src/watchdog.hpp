// A thread that looks at every open streaming call a few times per timeout, so that a call waiting on its
// client (no message coming, a write the client does not take) is ended after its time limit although no
// thread waits on it. No gRPC: the watched objects (the stream reactors) act on their own calls.
//
// Lifetime. A watched object is reference counted: whoever creates it holds one reference and the watchdog
// holds one while it checks the object, so an object removed (and released) by its owner during a check is
// deleted when the check ends, never during it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace denoc::server {

class Watched {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Watched() = default;
  /// Called on the watchdog's thread every tick while the object is added; must not block.
  virtual void check(Clock::time_point now) = 0;
  void ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  /// Drops a reference; the last one deletes the object.
  void unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::atomic<int> refs_{1};
};

class Watchdog {
 public:
  /// Checks every object every `tick`.
  explicit Watchdog(std::chrono::milliseconds tick);
  /// Stops the thread; every object must have been removed.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Checks w every tick from now on (the caller keeps its own reference).
  void add(Watched* w);
  /// No more checks of w once the check in progress, if any, ends.
  void remove(Watched* w);
  /// Objects being checked.
  std::size_t size() const;
  std::chrono::milliseconds tick() const { return tick_; }

  /// A tick for these time limits: an eighth of the shortest, within [5 ms, 500 ms].
  static std::chrono::milliseconds tickFor(std::chrono::milliseconds a, std::chrono::milliseconds b);

 private:
  void loop();

  std::chrono::milliseconds tick_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::unordered_set<Watched*> items_;
  std::thread thread_;
};

}  // namespace denoc::server
