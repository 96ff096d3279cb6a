// The denoc.v1.Dynamics service: its handlers, and the service on gRPC's synchronous API or (unary RPCs) on
// its callback API, chosen at start (--api; docs/service.md "Thread model").
#pragma once

#include <memory>

#include "admission.hpp"
#include "auth.hpp"
#include "denoc/batch.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"
#include "limits.hpp"
#include "metrics.hpp"
#include "registry.hpp"

namespace denoc::server {

/// What one call is allowed and has done, for the handler and the metrics.
struct Call {
  std::string principal;     // the caller's token's principal (empty: access control off)
  std::uint64_t states = 0;  // states computed (metrics)
};

/// The handlers of denoc.v1.Dynamics, shared by the synchronous and the callback service below: each
/// validates its request (validate.hpp), computes with the core in a per-thread workspace, and maps any
/// error to a status in one place (run()). The unary ones take the base of both APIs' contexts.
class Handlers {
 public:
  /// auth: null when access control is off; metrics: null for none.
  /// pool: where large batches are split over cores (null: every batch on the calling thread).
  Handlers(Registry& registry, Limits limits, std::size_t workspaces_per_thread, Admission& admission,
           const TokenAuth* auth, Metrics* metrics, BatchPool* pool = nullptr)
      : registry_(registry),
        limits_(limits),
        workspaces_per_thread_(workspaces_per_thread),
        admission_(admission),
        auth_(auth),
        metrics_(metrics),
        pool_(pool) {}

  grpc::Status RegisterModel(grpc::ServerContextBase* ctx, const v1::RegisterModelRequest* req,
                             v1::RegisterModelResponse* resp);
  grpc::Status GetModel(grpc::ServerContextBase* ctx, const v1::GetModelRequest* req,
                        v1::GetModelResponse* resp);
  grpc::Status ListModels(grpc::ServerContextBase* ctx, const v1::ListModelsRequest* req,
                          v1::ListModelsResponse* resp);
  grpc::Status DeleteModel(grpc::ServerContextBase* ctx, const v1::DeleteModelRequest* req,
                           v1::DeleteModelResponse* resp);
  grpc::Status InverseDynamics(grpc::ServerContextBase* ctx, const v1::InverseDynamicsRequest* req,
                               v1::InverseDynamicsResponse* resp);
  grpc::Status ForwardDynamics(grpc::ServerContextBase* ctx, const v1::ForwardDynamicsRequest* req,
                               v1::ForwardDynamicsResponse* resp);
  grpc::Status FullFactor(grpc::ServerContextBase* ctx, const v1::FullFactorRequest* req,
                          v1::FullFactorResponse* resp);
  grpc::Status Simulate(grpc::ServerContext* ctx, const v1::SimulateRequest* req,
                        grpc::ServerWriter<v1::SimulateResponse>* writer);
  grpc::Status Stream(grpc::ServerContext* ctx,
                      grpc::ServerReaderWriter<v1::StreamResponse, v1::StreamRequest>* stream);

 private:
  template <typename F>
  grpc::Status run(Rpc rpc, grpc::ServerContextBase* ctx, F&& handler);
  std::string authenticate(const grpc::ServerContextBase& ctx) const;
  /// per_state(k, data) for k in [0, count): on the calling thread (its cached workspace) for small batches,
  /// else in chunks over the batch pool; throws CANCELLED, having stopped part way, when the call is.
  template <typename F>
  void forEachState(grpc::ServerContextBase* ctx, const Entry& entry, std::uint32_t count, F&& per_state);

  Registry& registry_;
  Limits limits_;
  std::size_t workspaces_per_thread_;
  Admission& admission_;
  const TokenAuth* auth_;
  Metrics* metrics_;
  BatchPool* pool_;
};

/// The service on gRPC's synchronous API: every call runs to completion on a thread of the server's pool.
class DynamicsService final : public v1::Dynamics::Service {
 public:
  explicit DynamicsService(Handlers& h) : h_(h) {}

  grpc::Status RegisterModel(grpc::ServerContext* c, const v1::RegisterModelRequest* q,
                             v1::RegisterModelResponse* a) override {
    return h_.RegisterModel(c, q, a);
  }
  grpc::Status GetModel(grpc::ServerContext* c, const v1::GetModelRequest* q,
                        v1::GetModelResponse* a) override {
    return h_.GetModel(c, q, a);
  }
  grpc::Status ListModels(grpc::ServerContext* c, const v1::ListModelsRequest* q,
                          v1::ListModelsResponse* a) override {
    return h_.ListModels(c, q, a);
  }
  grpc::Status DeleteModel(grpc::ServerContext* c, const v1::DeleteModelRequest* q,
                           v1::DeleteModelResponse* a) override {
    return h_.DeleteModel(c, q, a);
  }
  grpc::Status InverseDynamics(grpc::ServerContext* c, const v1::InverseDynamicsRequest* q,
                               v1::InverseDynamicsResponse* a) override {
    return h_.InverseDynamics(c, q, a);
  }
  grpc::Status ForwardDynamics(grpc::ServerContext* c, const v1::ForwardDynamicsRequest* q,
                               v1::ForwardDynamicsResponse* a) override {
    return h_.ForwardDynamics(c, q, a);
  }
  grpc::Status FullFactor(grpc::ServerContext* c, const v1::FullFactorRequest* q,
                          v1::FullFactorResponse* a) override {
    return h_.FullFactor(c, q, a);
  }
  grpc::Status Simulate(grpc::ServerContext* c, const v1::SimulateRequest* q,
                        grpc::ServerWriter<v1::SimulateResponse>* w) override {
    return h_.Simulate(c, q, w);
  }
  grpc::Status Stream(grpc::ServerContext* c,
                      grpc::ServerReaderWriter<v1::StreamResponse, v1::StreamRequest>* s) override {
    return h_.Stream(c, s);
  }

 private:
  Handlers& h_;
};

/// The unary RPCs on gRPC's callback API (run inline on gRPC's own threads, request and response on one
/// protobuf arena per call), the two streaming ones on the synchronous API.
using CallbackBase = v1::Dynamics::WithCallbackMethod_RegisterModel<v1::Dynamics::WithCallbackMethod_GetModel<
    v1::Dynamics::WithCallbackMethod_ListModels<v1::Dynamics::WithCallbackMethod_DeleteModel<
        v1::Dynamics::WithCallbackMethod_InverseDynamics<v1::Dynamics::WithCallbackMethod_ForwardDynamics<
            v1::Dynamics::WithCallbackMethod_FullFactor<v1::Dynamics::Service>>>>>>>;

class DynamicsCallbackService final : public CallbackBase {
 public:
  explicit DynamicsCallbackService(Handlers& h);
  ~DynamicsCallbackService() override;
  // the generated synchronous versions (never called: they abort), named so that they are not hidden
  using CallbackBase::DeleteModel;
  using CallbackBase::ForwardDynamics;
  using CallbackBase::FullFactor;
  using CallbackBase::GetModel;
  using CallbackBase::InverseDynamics;
  using CallbackBase::ListModels;
  using CallbackBase::RegisterModel;

  grpc::ServerUnaryReactor* RegisterModel(grpc::CallbackServerContext* c, const v1::RegisterModelRequest* q,
                                          v1::RegisterModelResponse* a) override {
    return finish(c, h_.RegisterModel(c, q, a));
  }
  grpc::ServerUnaryReactor* GetModel(grpc::CallbackServerContext* c, const v1::GetModelRequest* q,
                                     v1::GetModelResponse* a) override {
    return finish(c, h_.GetModel(c, q, a));
  }
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* c, const v1::ListModelsRequest* q,
                                       v1::ListModelsResponse* a) override {
    return finish(c, h_.ListModels(c, q, a));
  }
  grpc::ServerUnaryReactor* DeleteModel(grpc::CallbackServerContext* c, const v1::DeleteModelRequest* q,
                                        v1::DeleteModelResponse* a) override {
    return finish(c, h_.DeleteModel(c, q, a));
  }
  grpc::ServerUnaryReactor* InverseDynamics(grpc::CallbackServerContext* c,
                                            const v1::InverseDynamicsRequest* q,
                                            v1::InverseDynamicsResponse* a) override {
    return finish(c, h_.InverseDynamics(c, q, a));
  }
  grpc::ServerUnaryReactor* ForwardDynamics(grpc::CallbackServerContext* c,
                                            const v1::ForwardDynamicsRequest* q,
                                            v1::ForwardDynamicsResponse* a) override {
    return finish(c, h_.ForwardDynamics(c, q, a));
  }
  grpc::ServerUnaryReactor* FullFactor(grpc::CallbackServerContext* c, const v1::FullFactorRequest* q,
                                       v1::FullFactorResponse* a) override {
    return finish(c, h_.FullFactor(c, q, a));
  }
  grpc::Status Simulate(grpc::ServerContext* c, const v1::SimulateRequest* q,
                        grpc::ServerWriter<v1::SimulateResponse>* w) override {
    return h_.Simulate(c, q, w);
  }
  grpc::Status Stream(grpc::ServerContext* c,
                      grpc::ServerReaderWriter<v1::StreamResponse, v1::StreamRequest>* s) override {
    return h_.Stream(c, s);
  }

 private:
  static grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* c, const grpc::Status& status) {
    grpc::ServerUnaryReactor* r = c->DefaultReactor();
    r->Finish(status);
    return r;
  }
  Handlers& h_;
  struct Allocators;
  std::unique_ptr<Allocators> allocators_;
};

}  // namespace denoc::server
