// The streaming RPCs on gRPC's callback API: one small reactor class per call that deletes itself when
// the call is done, holds no thread while it waits on its client (a read to come, a write to be taken) and
// hands every computation to the compute executor (executor.hpp). The watchdog (watchdog.hpp) ends a
// Stream whose client sends nothing for --idle-stream-timeout-ms, and cancels a call whose client takes
// none of its answer for --write-stall-timeout-ms.
//
// States. A call is in exactly one state at a time, changed under its (recursive) mutex: reading (a read
// pending, waiting on the client), computing (on the executor; nothing of gRPC pending), writing (a write
// pending, waiting on the client), stalled (cancelled by the watchdog; its write about to fail), finished
// (Finish called once). The mutex is recursive because gRPC may run a reaction inline within a call made
// under it (a write that completes at once, the read that fails when Finish ends the call).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "admission.hpp"
#include "call_log.hpp"
#include "denoc/stop.hpp"
#include "executor.hpp"
#include "handlers.hpp"
#include "identity.hpp"
#include "limits.hpp"
#include "metrics.hpp"
#include "watchdog.hpp"

namespace denoc::server {

/// What the RPC glue needs of the server, shared by every call.
struct ServiceContext {
  Handlers& handlers;
  ComputeExecutor& executor;
  Admission& admission;
  Watchdog& watchdog;
  Identity identity;
  StreamTimeouts timeouts;
  Metrics* metrics = nullptr;
};

/// A stop condition's deadline for a call: the call's deadline on the steady clock (none: never).
std::chrono::steady_clock::time_point steadyDeadline(std::chrono::system_clock::time_point deadline);

/// gRPC cancels a call when its deadline passes, and its clock and the steady clock are converted with an
/// error of microseconds: a cancellation seen less than this before the deadline is taken for the
/// deadline's.
inline constexpr std::chrono::milliseconds kDeadlineSlack{5};

/// The stop condition of a call, polled by the core through its long work: the call's deadline (on the
/// steady clock) and `cancelled` (the client cancelled or went away), which is not believed within
/// kDeadlineSlack of the deadline. So a call past its deadline stops with StopReason::Deadline
/// (DEADLINE_EXCEEDED) and one its client cancelled with StopReason::Cancelled (CANCELLED).
StopCondition callStop(std::function<bool()> cancelled, std::chrono::steady_clock::time_point deadline);

/// Why a call that gRPC ended before it was done (cancelled, or a write or read that failed) ended: its
/// deadline when that passed (or is within kDeadlineSlack), else its client.
StopReason endReason(std::chrono::steady_clock::time_point deadline);

/// The status of a call that ends unfinished for `reason` (toStatus of a Stopped): "the call's deadline
/// passed <when>" (DEADLINE_EXCEEDED) or "<client> <when>" (CANCELLED).
grpc::Status unfinished(StopReason reason, const std::string& client, const std::string& when);

/// What the streaming reactors share: the call's identity, admission, state and accounting.
class StreamCall : public Watched {
 protected:
  enum class State { Reading, Computing, Writing, Stalled, Finished };

  /// admission: where the call's stream is counted (null: the server's, s.admission). token_optional: a
  /// caller without a valid token is named by its peer address instead of being refused (reflection).
  StreamCall(ServiceContext& s, grpc::CallbackServerContext* ctx, Rpc rpc, Admission* admission = nullptr,
             bool token_optional = false);

  /// Identifies the caller, admits the stream and hands it to the watchdog (from the constructor, under
  /// the call's lock); false when refused, the call then finished with the refusal.
  bool admitted();
  /// Before Finish(status): gives the stream's admission back and records the call (so that a client that
  /// sees the status finds its slot free and the call counted). A call gRPC cancelled is recorded as
  /// DEADLINE_EXCEEDED or CANCELLED (endReason) whatever it is finished with.
  void ending(const grpc::Status& status, std::uint64_t states);
  /// Leaves the watchdog (from OnDone).
  void close();
  grpc::Status stallStatus() const;
  /// The end of a step on the executor: with the call's lock, ends the call with `status` when the step
  /// failed, else starts writing its answer. Nothing when the call ended meanwhile (the watchdog).
  void stepped(const grpc::Status& status);
  /// OnWriteDone's first part, under the call's lock: ends the call when it ended already, when the write
  /// stalled (the watchdog cancelled it) or failed (its deadline passed, or its client went away: endReason);
  /// true when the write went through and the call goes on.
  bool written(bool ok);
  /// The watchdog's write-stall check, under the call's lock: a write the client took nothing of for
  /// --write-stall-timeout-ms cancels the call (its pending write then fails, and OnWriteDone finishes it).
  void checkStall(Clock::time_point now);

  // what each stream gives the shared parts
  virtual void finishLocked(const grpc::Status& status) = 0;
  virtual void startWrite() = 0;             // writes the answer computed by the last step
  virtual std::string progress() const = 0;  // how far the call got, for a status: "after 12 messages"

  ServiceContext& s_;
  grpc::CallbackServerContext* ctx_;
  Admission& admission_;
  bool token_optional_;
  std::chrono::steady_clock::time_point deadline_;  // the call's
  CallLog log_;
  Caller caller_;
  Admission::Ticket ticket_;
  std::recursive_mutex mutex_;
  State state_ = State::Computing;
  Clock::time_point since_;  // when the state began
  bool watched_ = false;
  bool done_ = false;
  grpc::Status status_;  // what Finish was called with
  std::atomic<bool> cancelled_{false};
  StopCondition stop_;  // the call's cancellation (cancelled_) and deadline, for the core's work
};

/// A streaming call on a gRPC reactor type: what every stream does when gRPC cancels it and when it is done.
template <typename Reactor>
class StreamReactorOf : public Reactor, public StreamCall {
 public:
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override {
    close();
    unref();
  }

 protected:
  using StreamCall::StreamCall;
};

/// Simulate: one message of samples computed, written, and only then the next one computed.
class SimulateReactor final : public StreamReactorOf<grpc::ServerWriteReactor<grpc::ByteBuffer>> {
 public:
  SimulateReactor(ServiceContext& s, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request);
  void OnWriteDone(bool ok) override;
  void check(Clock::time_point now) override;

 private:
  void step();  // on the executor
  void finishLocked(const grpc::Status& status) override;
  void startWrite() override { StartWrite(&out_); }
  std::string progress() const override;

  const grpc::ByteBuffer* request_;
  std::unique_ptr<SimulationRun> run_;
  v1::SimulateResponse message_;
  grpc::ByteBuffer out_;
  bool last_ = false;
};

/// What a bidirectional stream does with each message it reads.
class BidiSession {
 public:
  virtual ~BidiSession() = default;
  /// The answer to one message in `out`; throws as the handlers do (the stream then ends with the error,
  /// prefixed "message <i>: " with i = messages() before the call).
  virtual void answer(const grpc::ByteBuffer& in, grpc::ByteBuffer& out, const StopCondition& stop) = 0;
  /// Messages answered so far, and the states computed (for the metrics).
  virtual std::uint64_t messages() const = 0;
  virtual std::uint64_t computed() const = 0;
};

/// The Dynamics Stream's session: a StreamRequest parsed, answered (StreamSession) and serialized.
class DynamicsStreamSession final : public BidiSession {
 public:
  explicit DynamicsStreamSession(Registry& registry) : session_(registry) {}
  void answer(const grpc::ByteBuffer& in, grpc::ByteBuffer& out, const StopCondition& stop) override;
  std::uint64_t messages() const override { return session_.messages(); }
  std::uint64_t computed() const override { return session_.computed(); }

 private:
  StreamSession session_;
  v1::StreamRequest request_;
  v1::StreamResponse answer_;
};

/// A bidirectional stream (Dynamics' Stream, server reflection): one message read, answered on the executor
/// by its session, the answer written, and only then the next read; ended by the watchdog after
/// --idle-stream-timeout-ms without a message.
class StreamReactor final
    : public StreamReactorOf<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>> {
 public:
  StreamReactor(ServiceContext& s, grpc::CallbackServerContext* ctx, Rpc rpc,
                std::unique_ptr<BidiSession> session, Admission* admission = nullptr,
                bool token_optional = false);
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void check(Clock::time_point now) override;

 private:
  void step();  // on the executor
  void finishLocked(const grpc::Status& status) override;
  void startWrite() override { StartWrite(&out_); }
  std::string progress() const override;

  std::unique_ptr<BidiSession> session_;
  grpc::ByteBuffer in_, out_;
};

}  // namespace denoc::server
