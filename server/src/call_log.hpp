// One call's accounting in denocd: the calls-in-flight gauge while it runs, then its status code, duration
// and states in the metrics, and its log line (failures at warn, every call at debug).
#pragma once

#include <grpcpp/server_context.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "metrics.hpp"

namespace denoc::server {

class CallLog {
 public:
  /// Starts the call's accounting (metrics: null for none).
  CallLog(Metrics* metrics, Rpc rpc);
  CallLog(const CallLog&) = delete;
  CallLog& operator=(const CallLog&) = delete;
  /// A call that was never ended (a bug) still leaves the gauge.
  ~CallLog();

  /// Ends it: records status, duration and states, and logs; ctx must still be valid (before the unary
  /// call's Finish, or in a stream's OnDone). Only the first call counts.
  void end(const grpc::ServerContextBase& ctx, const grpc::Status& status, std::uint64_t states,
           const std::string& principal);

 private:
  Metrics* metrics_;
  Rpc rpc_;
  std::chrono::steady_clock::time_point start_;
  bool ended_ = false;
};

}  // namespace denoc::server
