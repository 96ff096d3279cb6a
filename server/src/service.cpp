#include "service.hpp"

#include <google/protobuf/arena.h>

#include <functional>
#include <memory>

#include "decode.hpp"
#include "errors.hpp"

namespace denoc::server {

namespace {

/// One unary call on its way through the executor: the call's gRPC objects, its identity and accounting.
/// Its messages exist only while it is computed (compute()), so that a call waiting in the queue, or
/// refused, holds no more than this object and the bytes gRPC received.
class UnaryCall {
 public:
  UnaryCall(ServiceContext& s, Rpc rpc, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
            grpc::ByteBuffer* out)
      : s_(s), ctx_(ctx), in_(in), out_(out), reactor_(ctx->DefaultReactor()), log_(s.metrics, rpc) {}
  virtual ~UnaryCall() = default;

  /// Identifies the caller and queues the call's work, or finishes the call at once (cancelled or past its
  /// deadline already, without a message, or refused).
  grpc::ServerUnaryReactor* start() {
    grpc::ServerUnaryReactor* reactor = reactor_;
    if (ctx_->IsCancelled()) {
      finish(notComputed(endReason(steadyDeadline(ctx_->deadline()))), 0);
    } else if (!in_->Valid()) {
      finish(toStatus(ErrorCode::InvalidArgument, "the call carried no request message"), 0);
    } else {
      try {
        caller_.principal = identify(*ctx_, s_.identity);
        caller_.authenticated = s_.identity.auth != nullptr;
        s_.executor.submit(caller_.principal, [this] { run(); });
      } catch (...) {
        finish(toStatus(std::current_exception()), 0);
      }
    }
    return reactor;
  }

 protected:
  /// Parses the request, computes, serializes the answer into out_; returns the states computed.
  virtual std::uint64_t compute(const StopCondition& stop) = 0;

  const grpc::ByteBuffer& in() const { return *in_; }
  ServiceContext& s_;
  Caller caller_;

 private:
  static grpc::Status notComputed(StopReason reason) {
    return unfinished(reason, "the call was cancelled by its client", "before it was computed");
  }

  /// On the executor.
  void run() {
    grpc::Status status;
    std::uint64_t states = 0;
    const StopCondition stop =
        callStop([ctx = ctx_] { return ctx->IsCancelled(); }, steadyDeadline(ctx_->deadline()));
    if (stop.stopRequested()) {
      status = notComputed(stop.reason());
    } else {
      try {
        states = compute(stop);
      } catch (...) {
        status = toStatus(std::current_exception());
      }
    }
    finish(status, status.ok() ? states : 0);
  }

  void finish(const grpc::Status& status, std::uint64_t states) {
    log_.end(*ctx_, status, states, caller_.principal);
    grpc::ServerUnaryReactor* reactor = reactor_;
    delete this;  // the messages go before the answer leaves
    reactor->Finish(status);
  }

  grpc::CallbackServerContext* ctx_;
  const grpc::ByteBuffer* in_;

 protected:
  grpc::ByteBuffer* out_;

 private:
  grpc::ServerUnaryReactor* reactor_;
  CallLog log_;
};

/// A handler of Handlers (handlers.hpp: every one has this form).
template <typename Request, typename Response>
using Handler = std::uint64_t (Handlers::*)(const Caller&, const Request&, Response&, const StopCondition&);

/// A unary call of one RPC: its messages and its handler.
template <typename Request, typename Response>
class Unary final : public UnaryCall {
 public:
  Unary(ServiceContext& s, Rpc rpc, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
        grpc::ByteBuffer* out, Handler<Request, Response> handler)
      : UnaryCall(s, rpc, ctx, in, out), handler_(handler) {}

 private:
  std::uint64_t compute(const StopCondition& stop) override {
    // request and answer on one arena whose first block is on this thread's stack: a call of a few states
    // allocates nothing for its messages
    alignas(16) char block[4096];
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = sizeof block;
    google::protobuf::Arena arena(options);
    auto* req = google::protobuf::Arena::CreateMessage<Request>(&arena);
    auto* resp = google::protobuf::Arena::CreateMessage<Response>(&arena);
    parseRequest(in(), *req);
    const_cast<grpc::ByteBuffer&>(in()).Clear();  // the bytes go once parsed, as in gRPC's own decoding
    const std::uint64_t states = std::invoke(handler_, s_.handlers, caller_, *req, *resp, stop);
    serializeAnswer(*resp, *out_);
    return states;
  }
  Handler<Request, Response> handler_;
};

template <typename Request, typename Response>
grpc::ServerUnaryReactor* serve(ServiceContext& s, Rpc rpc, grpc::CallbackServerContext* ctx,
                                const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
                                Handler<Request, Response> handler) {
  return (new Unary<Request, Response>(s, rpc, ctx, in, out, handler))->start();
}

}  // namespace

grpc::ServerUnaryReactor* DynamicsService::RegisterModel(grpc::CallbackServerContext* ctx,
                                                         const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::RegisterModel, ctx, in, out, &Handlers::registerModel);
}

grpc::ServerUnaryReactor* DynamicsService::GetModel(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::GetModel, ctx, in, out, &Handlers::getModel);
}

grpc::ServerUnaryReactor* DynamicsService::ListModels(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::ListModels, ctx, in, out, &Handlers::listModels);
}

grpc::ServerUnaryReactor* DynamicsService::DeleteModel(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::DeleteModel, ctx, in, out, &Handlers::deleteModel);
}

grpc::ServerUnaryReactor* DynamicsService::InverseDynamics(grpc::CallbackServerContext* ctx,
                                                           const grpc::ByteBuffer* in,
                                                           grpc::ByteBuffer* out) {
  return serve(s_, Rpc::InverseDynamics, ctx, in, out, &Handlers::inverseDynamics);
}

grpc::ServerUnaryReactor* DynamicsService::ForwardDynamics(grpc::CallbackServerContext* ctx,
                                                           const grpc::ByteBuffer* in,
                                                           grpc::ByteBuffer* out) {
  return serve(s_, Rpc::ForwardDynamics, ctx, in, out, &Handlers::forwardDynamics);
}

grpc::ServerUnaryReactor* DynamicsService::FullFactor(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::FullFactor, ctx, in, out, &Handlers::fullFactor);
}

grpc::ServerUnaryReactor* DynamicsService::GetServerInfo(grpc::CallbackServerContext* ctx,
                                                         const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::GetServerInfo, ctx, in, out, &Handlers::serverInfo);
}

grpc::ServerUnaryReactor* DynamicsService::Kinematics(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::Kinematics, ctx, in, out, &Handlers::kinematics);
}

grpc::ServerUnaryReactor* DynamicsService::Derivatives(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::Derivatives, ctx, in, out, &Handlers::derivatives);
}

grpc::ServerUnaryReactor* DynamicsService::Rollout(grpc::CallbackServerContext* ctx,
                                                   const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  return serve(s_, Rpc::Rollout, ctx, in, out, &Handlers::rollout);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* DynamicsService::Simulate(grpc::CallbackServerContext* ctx,
                                                                      const grpc::ByteBuffer* in) {
  return new SimulateReactor(s_, ctx, in);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* DynamicsService::Stream(
    grpc::CallbackServerContext* ctx) {
  return new StreamReactor(s_, ctx, Rpc::Stream,
                           std::make_unique<DynamicsStreamSession>(s_.handlers.registry()));
}

}  // namespace denoc::server
