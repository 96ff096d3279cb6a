#include "reactors.hpp"

#include "decode.hpp"
#include "errors.hpp"

namespace denoc::server {

namespace {

std::string millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::chrono::steady_clock::time_point steadyDeadline(std::chrono::system_clock::time_point deadline) {
  const auto now = std::chrono::system_clock::now();
  // no deadline (gRPC's infinite future), or one too far to matter
  if (deadline >= now + std::chrono::hours(24 * 365)) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - now);
}

namespace {

bool nearDeadline(std::chrono::steady_clock::time_point deadline) {
  return deadline != std::chrono::steady_clock::time_point::max() &&
         std::chrono::steady_clock::now() + kDeadlineSlack >= deadline;
}

}  // namespace

StopCondition callStop(std::function<bool()> cancelled, std::chrono::steady_clock::time_point deadline) {
  return StopCondition(
      [cancelled = std::move(cancelled), deadline] { return cancelled() && !nearDeadline(deadline); },
      deadline);
}

StopReason endReason(std::chrono::steady_clock::time_point deadline) {
  return nearDeadline(deadline) ? StopReason::Deadline : StopReason::Cancelled;
}

grpc::Status unfinished(StopReason reason, const std::string& client, const std::string& when) {
  std::string what = reason == StopReason::Deadline ? "the call's deadline passed" : client;
  if (!when.empty()) what += " " + when;
  return toStatus(std::make_exception_ptr(Stopped(reason, 0, what)));
}

StreamCall::StreamCall(ServiceContext& s, grpc::CallbackServerContext* ctx, Rpc rpc, Admission* admission,
                       bool token_optional)
    : s_(s),
      ctx_(ctx),
      admission_(admission ? *admission : s.admission),
      token_optional_(token_optional),
      deadline_(steadyDeadline(ctx->deadline())),
      log_(s.metrics, rpc),
      since_(Clock::now()),
      stop_(callStop([this] { return cancelled_.load(std::memory_order_relaxed); }, deadline_)) {}

bool StreamCall::admitted() {
  try {
    try {
      caller_.principal = identify(*ctx_, s_.identity);
      caller_.authenticated = s_.identity.auth != nullptr;
    } catch (const RequestError&) {
      if (!token_optional_) throw;
      caller_.principal = peerPrincipal(ctx_->peer());  // no valid token: the peer's address
    }
    ticket_ = admission_.admitStream(caller_.principal);
  } catch (...) {
    finishLocked(toStatus(std::current_exception()));
    return false;
  }
  s_.watchdog.add(this);
  watched_ = true;
  return true;
}

void StreamCall::ending(const grpc::Status& status, std::uint64_t states) {
  status_ = status;
  state_ = State::Finished;
  ticket_.reset();
  const bool cancelled = cancelled_.load() || ctx_->IsCancelled();
  log_.end(*ctx_,
           cancelled && status.ok() ? unfinished(endReason(deadline_), "the call was cancelled", "") : status,
           states, caller_.principal);
}

void StreamCall::close() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  if (watched_) s_.watchdog.remove(this);
}

void StreamCall::stepped(const grpc::Status& status) {
  std::lock_guard lock(mutex_);
  if (state_ == State::Finished) return;
  if (!status.ok()) {
    finishLocked(status);  // for a Stream: a bad message ends it; the answers before it were sent
    return;
  }
  state_ = State::Writing;
  since_ = Clock::now();
  startWrite();
}

bool StreamCall::written(bool ok) {
  if (state_ == State::Finished) return false;
  if (state_ == State::Stalled) {
    finishLocked(stallStatus());
  } else if (!ok) {
    finishLocked(unfinished(endReason(deadline_), "the client went away", progress()));
  }
  return state_ != State::Finished;
}

void StreamCall::checkStall(Clock::time_point now) {
  if (state_ != State::Writing || now - since_ < s_.timeouts.write_stall) return;
  state_ = State::Stalled;
  ctx_->TryCancel();
}

grpc::Status StreamCall::stallStatus() const {
  return toStatus(ErrorCode::Cancelled, "the client read nothing for " + millis(s_.timeouts.write_stall) +
                                            ": the call was cancelled (--write-stall-timeout-ms, "
                                            "DENOC_WRITE_STALL_TIMEOUT_MS)");
}

// ------------------------------------------------------------------------------------------------ Simulate

SimulateReactor::SimulateReactor(ServiceContext& s, grpc::CallbackServerContext* ctx,
                                 const grpc::ByteBuffer* request)
    : StreamReactorOf(s, ctx, Rpc::Simulate), request_(request) {
  std::lock_guard lock(mutex_);
  if (!admitted()) return;
  state_ = State::Computing;
  s_.executor.submitStep(caller_.principal, [this] { step(); });
}

void SimulateReactor::step() {
  grpc::Status status;
  try {
    if (!run_) {
      v1::SimulateRequest req;
      parseRequest(*request_, req);
      run_ = std::make_unique<SimulationRun>(s_.handlers.registry(), s_.handlers.limits(), req, stop_);
    }
    run_->next(message_);
    serializeAnswer(message_, out_);
    last_ = message_.last();
  } catch (...) {
    status = toStatus(std::current_exception());
  }
  stepped(status);
}

std::string SimulateReactor::progress() const {
  return "during the simulation (after " + std::to_string(run_ ? run_->samples() : 0) + " samples, " +
         std::to_string(run_ ? run_->steps() : 0) + " steps)";
}

void SimulateReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mutex_);
  if (!written(ok)) return;
  if (last_) {
    finishLocked(grpc::Status::OK);
  } else {
    state_ = State::Computing;
    s_.executor.submitStep(caller_.principal, [this] { step(); });
  }
}

void SimulateReactor::check(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!done_) checkStall(now);
}

void SimulateReactor::finishLocked(const grpc::Status& status) {
  ending(status, run_ ? run_->samples() : 0);
  Finish(status);
}

// -------------------------------------------------------------------------------------------------- Stream

void DynamicsStreamSession::answer(const grpc::ByteBuffer& in, grpc::ByteBuffer& out,
                                   const StopCondition& stop) {
  parseRequest(in, request_);
  session_.answer(request_, answer_, stop);
  serializeAnswer(answer_, out);
}

StreamReactor::StreamReactor(ServiceContext& s, grpc::CallbackServerContext* ctx, Rpc rpc,
                             std::unique_ptr<BidiSession> session, Admission* admission, bool token_optional)
    : StreamReactorOf(s, ctx, rpc, admission, token_optional), session_(std::move(session)) {
  std::lock_guard lock(mutex_);
  if (!admitted()) return;
  state_ = State::Reading;
  since_ = Clock::now();
  StartRead(&in_);
}

void StreamReactor::OnReadDone(bool ok) {
  std::lock_guard lock(mutex_);
  if (state_ == State::Finished) return;  // ended by the watchdog: the read pending then fails
  if (!ok) {
    // the client closed its side, every message answered; or it went away
    finishLocked(ctx_->IsCancelled() ? unfinished(endReason(deadline_), "the client went away", progress())
                                     : grpc::Status::OK);
    return;
  }
  state_ = State::Computing;
  s_.executor.submitStep(caller_.principal, [this] { step(); });
}

void StreamReactor::step() {
  grpc::Status status;
  const std::uint64_t index = session_->messages();
  try {
    session_->answer(in_, out_, stop_);
    in_.Clear();
  } catch (...) {
    const grpc::Status raw = toStatus(std::current_exception());
    status = grpc::Status(raw.error_code(), "message " + std::to_string(index) + ": " + raw.error_message());
  }
  stepped(status);
}

std::string StreamReactor::progress() const {
  return "after " + std::to_string(session_->messages()) + " messages";
}

void StreamReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mutex_);
  if (!written(ok)) return;
  state_ = State::Reading;
  since_ = Clock::now();
  StartRead(&in_);
}

void StreamReactor::check(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (done_) return;
  if (state_ == State::Reading && now - since_ >= s_.timeouts.idle) {
    // no message for the idle time: end the call with its reason (the pending read then fails)
    finishLocked(toStatus(ErrorCode::DeadlineExceeded,
                          "no message for " + millis(s_.timeouts.idle) + " after " +
                              std::to_string(session_->messages()) +
                              " messages: the stream was closed (--idle-stream-timeout-ms, "
                              "DENOC_IDLE_STREAM_TIMEOUT_MS)"));
  } else {
    checkStall(now);
  }
}

void StreamReactor::finishLocked(const grpc::Status& status) {
  ending(status, session_->computed());
  Finish(status);
}

}  // namespace denoc::server
