#include "call_log.hpp"

#include <spdlog/spdlog.h>

#include "errors.hpp"
#include "log.hpp"

namespace denoc::server {

CallLog::CallLog(Metrics* metrics, Rpc rpc)
    : metrics_(metrics), rpc_(rpc), start_(std::chrono::steady_clock::now()) {
  if (metrics_) metrics_->callStarted(rpc_);
}

CallLog::~CallLog() {
  if (!ended_ && metrics_) metrics_->callEnded(rpc_);
}

void CallLog::end(const grpc::ServerContextBase& ctx, const grpc::Status& status, std::uint64_t states,
                  const std::string& principal) {
  if (ended_) return;
  ended_ = true;
  const std::int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  if (metrics_) {
    metrics_->callEnded(rpc_);
    metrics_->record(rpc_, status.error_code(), static_cast<double>(ns) * 1e-9, states);
  }
  if (!status.ok()) {
    logFailedCall(rpcName(rpc_), ctx.peer(), status);
  } else if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} from {} ({}) OK in {} us", rpcName(rpc_), escaped(ctx.peer()), escaped(principal),
                  ns / 1000);
  }
}

}  // namespace denoc::server
