// The denoc.v1.Dynamics service on gRPC's synchronous API: each handler validates its request (validate.hpp),
// computes with the core in a per-thread workspace, and maps any error to a status in one place (run()).
#pragma once

#include "admission.hpp"
#include "auth.hpp"
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

class DynamicsService final : public v1::Dynamics::Service {
 public:
  /// auth: null when access control is off; metrics: null for none.
  DynamicsService(Registry& registry, Limits limits, std::size_t workspaces_per_thread, Admission& admission,
                  const TokenAuth* auth, Metrics* metrics)
      : registry_(registry),
        limits_(limits),
        workspaces_per_thread_(workspaces_per_thread),
        admission_(admission),
        auth_(auth),
        metrics_(metrics) {}

  grpc::Status RegisterModel(grpc::ServerContext* ctx, const v1::RegisterModelRequest* req,
                             v1::RegisterModelResponse* resp) override;
  grpc::Status GetModel(grpc::ServerContext* ctx, const v1::GetModelRequest* req,
                        v1::GetModelResponse* resp) override;
  grpc::Status ListModels(grpc::ServerContext* ctx, const v1::ListModelsRequest* req,
                          v1::ListModelsResponse* resp) override;
  grpc::Status DeleteModel(grpc::ServerContext* ctx, const v1::DeleteModelRequest* req,
                           v1::DeleteModelResponse* resp) override;
  grpc::Status InverseDynamics(grpc::ServerContext* ctx, const v1::InverseDynamicsRequest* req,
                               v1::InverseDynamicsResponse* resp) override;
  grpc::Status ForwardDynamics(grpc::ServerContext* ctx, const v1::ForwardDynamicsRequest* req,
                               v1::ForwardDynamicsResponse* resp) override;
  grpc::Status FullFactor(grpc::ServerContext* ctx, const v1::FullFactorRequest* req,
                          v1::FullFactorResponse* resp) override;
  grpc::Status Simulate(grpc::ServerContext* ctx, const v1::SimulateRequest* req,
                        grpc::ServerWriter<v1::SimulateResponse>* writer) override;
  grpc::Status Stream(grpc::ServerContext* ctx,
                      grpc::ServerReaderWriter<v1::StreamResponse, v1::StreamRequest>* stream) override;

 private:
  template <typename F>
  grpc::Status run(Rpc rpc, grpc::ServerContext* ctx, F&& handler);
  std::string authenticate(const grpc::ServerContext& ctx) const;

  Registry& registry_;
  Limits limits_;
  std::size_t workspaces_per_thread_;
  Admission& admission_;
  const TokenAuth* auth_;
  Metrics* metrics_;
};

}  // namespace denoc::server
