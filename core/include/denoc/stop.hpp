// A stop condition for long computations (batches of states, rollouts, model parsing): a deadline and an
// optional "cancelled" callable, polled between units of work. A computation that finds it set throws
// denoc::Stopped, saying why and how many units it had completed.
//
// Polling. stopRequested() reads the steady clock, cheap next to a unit of work (one state, one XML
// element); the callable, which may be expensive (asking gRPC whether a call was cancelled), is asked at most
// once per `poll_interval`. Several threads of one batch may poll one StopCondition at once: the
// callable is then asked by one of them at a time. Once set, it stays set.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace denoc {

/// Why a computation stopped early.
enum class StopReason : std::uint8_t {
  None,       // not stopped
  Cancelled,  // the callable said so (the client went away, the caller cancelled)
  Deadline,   // the deadline passed
};

/// Thrown by a computation whose stop condition was set: the reason and the units of work completed.
class Stopped : public std::runtime_error {
 public:
  Stopped(StopReason reason, std::uint64_t done, const std::string& what)
      : std::runtime_error(what), reason_(reason), done_(done) {}
  StopReason reason() const { return reason_; }
  std::uint64_t done() const { return done_; }

 private:
  StopReason reason_;
  std::uint64_t done_;
};

class StopCondition {
 public:
  using Clock = std::chrono::steady_clock;

  /// Never stops.
  StopCondition() = default;

  /// Stops when `cancelled()` returns true (asked at most once per poll_interval) or at `deadline`.
  explicit StopCondition(std::function<bool()> cancelled,
                         Clock::time_point deadline = Clock::time_point::max(),
                         std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(1))
      : cancelled_(std::move(cancelled)), deadline_(deadline), interval_(poll_interval.count()) {}

  StopCondition(const StopCondition&) = delete;
  StopCondition& operator=(const StopCondition&) = delete;

  /// True once the computation must stop (thread-safe).
  bool stopRequested() const {
    if (reason_.load(std::memory_order_relaxed) != StopReason::None) return true;
    if (!cancelled_ && deadline_ == Clock::time_point::max()) return false;
    const Clock::time_point now = Clock::now();
    if (now >= deadline_) return set(StopReason::Deadline);
    if (!cancelled_) return false;
    const std::int64_t t = now.time_since_epoch().count();
    std::int64_t last = last_poll_.load(std::memory_order_relaxed);
    if (t - last < interval_) return false;
    if (!last_poll_.compare_exchange_strong(last, t, std::memory_order_relaxed))
      return false;  // another thread asks
    return cancelled_() ? set(StopReason::Cancelled) : false;
  }

  /// Why it stopped (None while it has not).
  StopReason reason() const { return reason_.load(std::memory_order_relaxed); }

  /// Throws Stopped for `what` (e.g. "inverseDynamicsBatch") having completed `done` of `total` units of work
  /// (`unit`: "states", "XML elements", ...). Call only after stopRequested() returned true.
  [[noreturn]] void raise(const std::string& what, std::uint64_t done, std::uint64_t total,
                          const char* unit) const {
    const StopReason r = reason();
    throw Stopped(r, done,
                  what + ": stopped after " + std::to_string(done) + " of " + std::to_string(total) + " " +
                      unit + (r == StopReason::Deadline ? ": the deadline passed" : ": cancelled"));
  }

 private:
  bool set(StopReason r) const {
    StopReason none = StopReason::None;
    reason_.compare_exchange_strong(none, r, std::memory_order_relaxed);
    return true;
  }

  std::function<bool()> cancelled_;
  Clock::time_point deadline_ = Clock::time_point::max();
  std::int64_t interval_ = 0;
  mutable std::atomic<std::int64_t> last_poll_{std::numeric_limits<std::int64_t>::min() / 2};
  mutable std::atomic<StopReason> reason_{StopReason::None};
};

}  // namespace denoc
