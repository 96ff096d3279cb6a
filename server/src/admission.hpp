// Admission control of denocd: a bound on the states being computed at once over all unary calls, and on the
// streaming calls (Simulate, Stream) open at once. A call over a bound is refused at once with
// RESOURCE_EXHAUSTED naming the bound (its flag and variable), before any work; admitted work holds a ticket
// that gives its share back when the call ends, however it ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "errors.hpp"

namespace denoc::server {

class Admission {
 public:
  Admission(std::uint64_t max_states, std::uint32_t max_streams)
      : max_states_(max_states), max_streams_(max_streams) {}

  /// Holds admitted work until destroyed.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(std::atomic<std::uint64_t>* counter, std::uint64_t amount) : counter_(counter), amount_(amount) {}
    Ticket(Ticket&& o) noexcept : counter_(o.counter_), amount_(o.amount_) { o.counter_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket() {
      if (counter_) counter_->fetch_sub(amount_, std::memory_order_relaxed);
    }

   private:
    std::atomic<std::uint64_t>* counter_ = nullptr;
    std::uint64_t amount_ = 0;
  };

  /// Admits a unary call of `states` states, or throws RESOURCE_EXHAUSTED.
  Ticket admitStates(std::uint64_t states) {
    return admit(states_, states, max_states_, "states in flight",
                 "--max-inflight-states, DENOC_MAX_INFLIGHT_STATES");
  }

  /// Admits one streaming call, or throws RESOURCE_EXHAUSTED.
  Ticket admitStream() {
    return admit(streams_, 1, max_streams_, "streams open", "--max-streams, DENOC_MAX_STREAMS");
  }

  std::uint64_t statesInFlight() const { return states_.load(std::memory_order_relaxed); }
  std::uint64_t streamsOpen() const { return streams_.load(std::memory_order_relaxed); }

 private:
  static Ticket admit(std::atomic<std::uint64_t>& counter, std::uint64_t amount, std::uint64_t limit,
                      const char* what, const char* flag) {
    std::uint64_t now = counter.load(std::memory_order_relaxed);
    do {
      if (now + amount > limit) {
        fail(ErrorCode::ResourceExhausted, "server busy: " + std::to_string(now) + " " + what +
                                               ", this call needs " + std::to_string(amount) +
                                               " more, the limit is " + std::to_string(limit) + " (" + flag +
                                               "); retry later");
      }
    } while (!counter.compare_exchange_weak(now, now + amount, std::memory_order_relaxed));
    return Ticket(&counter, amount);
  }

  std::uint64_t max_states_;
  std::uint64_t max_streams_;
  std::atomic<std::uint64_t> states_{0};
  std::atomic<std::uint64_t> streams_{0};
};

}  // namespace denoc::server
