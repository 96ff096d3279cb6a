// The denoc.v1.Dynamics service on gRPC's callback API, every RPC registered raw (the server parses the
// bytes itself: decode.hpp). A unary call costs gRPC's thread only the caller's identification and a place
// in the compute executor's queue; its parsing, checks, computation and answer run on the executor, which
// then finishes the call. The streaming RPCs are reactors (reactors.hpp).
#pragma once

#include <grpcpp/grpcpp.h>

#include "denoc/v1/dynamics.grpc.pb.h"
#include "reactors.hpp"

namespace denoc::server {

using RawDynamics = v1::Dynamics::WithRawCallbackMethod_RegisterModel<
    v1::Dynamics::WithRawCallbackMethod_GetModel<v1::Dynamics::WithRawCallbackMethod_ListModels<
        v1::Dynamics::WithRawCallbackMethod_DeleteModel<v1::Dynamics::WithRawCallbackMethod_InverseDynamics<
            v1::Dynamics::WithRawCallbackMethod_ForwardDynamics<
                v1::Dynamics::WithRawCallbackMethod_FullFactor<
                    v1::Dynamics::WithRawCallbackMethod_Simulate<v1::Dynamics::WithRawCallbackMethod_Stream<
                        v1::Dynamics::WithRawCallbackMethod_GetServerInfo<
                            v1::Dynamics::WithRawCallbackMethod_Kinematics<
                                v1::Dynamics::WithRawCallbackMethod_Derivatives<
                                    v1::Dynamics::WithRawCallbackMethod_Rollout<
                                        v1::Dynamics::Service>>>>>>>>>>>>>;

class DynamicsService final : public RawDynamics {
 public:
  explicit DynamicsService(ServiceContext& s) : s_(s) {}
  // the generated synchronous versions (never called: they abort), named so that they are not hidden
  using RawDynamics::DeleteModel;
  using RawDynamics::Derivatives;
  using RawDynamics::ForwardDynamics;
  using RawDynamics::FullFactor;
  using RawDynamics::GetModel;
  using RawDynamics::GetServerInfo;
  using RawDynamics::InverseDynamics;
  using RawDynamics::Kinematics;
  using RawDynamics::ListModels;
  using RawDynamics::RegisterModel;
  using RawDynamics::Rollout;
  using RawDynamics::Simulate;
  using RawDynamics::Stream;

  grpc::ServerUnaryReactor* RegisterModel(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                          grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* GetModel(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                     grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                       grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* DeleteModel(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                        grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* InverseDynamics(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* ForwardDynamics(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* FullFactor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                       grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                          grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* Kinematics(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                       grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* Derivatives(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                        grpc::ByteBuffer* out) override;
  grpc::ServerUnaryReactor* Rollout(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                    grpc::ByteBuffer* out) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Simulate(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* in) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Stream(
      grpc::CallbackServerContext* ctx) override;

 private:
  ServiceContext& s_;
};

}  // namespace denoc::server
