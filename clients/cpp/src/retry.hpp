// The waits between the attempts of one call on UNAVAILABLE (RetryPolicy): initial_backoff, then growing by
// multiplier up to max_backoff, each reported to ClientOptions::on_retry before it is slept.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>

#include "denoc/client/types.hpp"

namespace denoc::client {

class Backoff {
 public:
  /// jitter: scale each wait by a random factor 1 +- RetryPolicy::jitter (unary calls).
  Backoff(const ClientOptions& options, const char* call, bool jitter)
      : options_(options),
        call_(call),
        jitter_(jitter),
        next_ms_(static_cast<double>(options.retry.initial_backoff.count())) {}

  /// Whether a failed attempt (1-based) leaves another one.
  bool more(int attempt) const { return attempt < options_.retry.max_attempts; }

  /// Reports the failed attempt, sleeps, and grows the next wait.
  void wait(int attempt, grpc::StatusCode code, const std::string& message) {
    const RetryPolicy& policy = options_.retry;
    double scale = 1.0;
    if (jitter_) {
      thread_local std::mt19937 rng(std::random_device{}());
      scale = std::uniform_real_distribution<double>(1.0 - policy.jitter, 1.0 + policy.jitter)(rng);
    }
    const auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(next_ms_ * scale));
    if (options_.on_retry) options_.on_retry({call_, attempt, code, message, wait});
    std::this_thread::sleep_for(wait);
    next_ms_ = std::min(next_ms_ * policy.multiplier, static_cast<double>(policy.max_backoff.count()));
  }

 private:
  const ClientOptions& options_;
  const char* call_;
  bool jitter_;
  double next_ms_;
};

}  // namespace denoc::client
