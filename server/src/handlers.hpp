// The computations behind denoc.v1.Dynamics, on messages only (no gRPC types): each checks its request with
// its validator (validate.hpp: which also applies the payload), admits its work (admission.hpp), computes
// with the core and fills the answer. Errors are thrown (RequestError, the core's exceptions, Stopped) for
// the caller to map to a status in one place (toStatus). Called on the compute executor's threads
// (reactors.hpp, service.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "admission.hpp"
#include "denoc/batch.hpp"
#include "denoc/simulate.hpp"
#include "denoc/stop.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "registry.hpp"
#include "validate.hpp"

namespace denoc::server {

/// Who a call is for.
struct Caller {
  std::string principal;       // a token's principal, or the peer's address without tokens
  bool authenticated = false;  // access control is on: principal owns what it registers
};

/// Every RPC's handler has one form: (caller, request, answer, stop) -> the states it computed (0 for the
/// registry's RPCs), `stop` being the call's cancellation and deadline, polled through every long piece of
/// work (a registration's parsing and building, a stored model built on a cache miss, batches between
/// chunks of states and within them, rollouts between steps).
class Handlers {
 public:
  /// pool: the core's batch engine, where batches are split over cores and SIMD lanes (null: a pool of the
  /// calling thread alone).
  Handlers(Registry& registry, Limits limits, Admission& admission, BatchPool* pool)
      : registry_(registry),
        limits_(limits),
        admission_(admission),
        own_pool_(pool ? nullptr : std::make_unique<BatchPool>(1)),
        pool_(pool ? pool : own_pool_.get()) {}

  Registry& registry() { return registry_; }
  const Limits& limits() const { return limits_; }

  /// Builds and checks the model (buildFromRequest), stores and caches it; with access control the caller
  /// becomes its owner (when it is new).
  std::uint64_t registerModel(const Caller& caller, const v1::RegisterModelRequest& req,
                              v1::RegisterModelResponse& resp, const StopCondition& stop);
  /// The model's description (NOT_FOUND when unknown).
  std::uint64_t getModel(const Caller& caller, const v1::GetModelRequest& req, v1::GetModelResponse& resp,
                         const StopCondition& stop);
  /// A page of the models in id order, within `page_size` and within the message limit (ListModelsRequest).
  std::uint64_t listModels(const Caller& caller, const v1::ListModelsRequest& req,
                           v1::ListModelsResponse& resp, const StopCondition& stop);
  /// Removes the model from the cache and the store; with access control only its owner may.
  std::uint64_t deleteModel(const Caller& caller, const v1::DeleteModelRequest& req,
                            v1::DeleteModelResponse& resp, const StopCondition& stop);
  /// The version and the limits this server enforces; tokens_required when the caller had to show one.
  std::uint64_t serverInfo(const Caller& caller, const v1::GetServerInfoRequest& req,
                           v1::GetServerInfoResponse& resp, const StopCondition& stop);

  /// The batch RPCs, on the core's batch functions: they return the states computed.
  std::uint64_t inverseDynamics(const Caller& caller, const v1::InverseDynamicsRequest& req,
                                v1::InverseDynamicsResponse& resp, const StopCondition& stop);
  std::uint64_t forwardDynamics(const Caller& caller, const v1::ForwardDynamicsRequest& req,
                                v1::ForwardDynamicsResponse& resp, const StopCondition& stop);
  std::uint64_t fullFactor(const Caller& caller, const v1::FullFactorRequest& req,
                           v1::FullFactorResponse& resp, const StopCondition& stop);

  /// The planners' RPCs (planning_handlers.cpp): kinematics and derivatives return the states computed,
  /// rollout the steps (count * steps).
  std::uint64_t kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                           v1::KinematicsResponse& resp, const StopCondition& stop);
  std::uint64_t derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                            v1::DerivativesResponse& resp, const StopCondition& stop);
  std::uint64_t rollout(const Caller& caller, const v1::RolloutRequest& req, v1::RolloutResponse& resp,
                        const StopCondition& stop);

 private:
  /// What every batch handler does once its request is validated: admits `states` for the caller (the
  /// ticket returned holds them until the call ends) and writes the answer's header (model id, gravity),
  /// count and dof.
  template <typename Response>
  Admission::Ticket open(const Caller& caller, const BatchInput& in, std::uint64_t states, Response& resp);

  Registry& registry_;
  Limits limits_;
  Admission& admission_;
  std::unique_ptr<BatchPool> own_pool_;  // a pool of the calling thread alone when none is given
  BatchPool* pool_;                      // never null
};

/// The core batch engine's options for a call: its stop condition (cancellation and deadline).
BatchOptions batchOptions(const StopCondition& stop);

/// Writes the time from its construction to its destruction, the core's computation of an answer, into the
/// answer's compute_time_ns.
template <typename Response>
class ComputeTime {
 public:
  explicit ComputeTime(Response& resp) : resp_(resp), t0_(std::chrono::steady_clock::now()) {}
  ~ComputeTime() {
    resp_.set_compute_time_ns(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count());
  }
  ComputeTime(const ComputeTime&) = delete;
  ComputeTime& operator=(const ComputeTime&) = delete;

 private:
  Response& resp_;
  std::chrono::steady_clock::time_point t0_;
};

/// One Simulate run, produced a message at a time so that its caller can send each before computing the
/// next (Simulator::start and advance): the run as one Simulator::run would give it.
class SimulationRun {
 public:
  /// Checks the request (validateSimulate) and starts the integration, which polls `stop` (the call's
  /// cancellation and deadline; it must outlive the run).
  SimulationRun(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                const StopCondition& stop);
  SimulationRun(const SimulationRun&) = delete;
  SimulationRun& operator=(const SimulationRun&) = delete;

  /// Fills `out` with the next batch_size samples (fewer in the last message, which has last = true and the
  /// run's step counts). Throws the core's errors: Stopped when `stop` stopped the run, DivergenceError
  /// when the integration stopped part way (step limit, step underflow, a state that stopped being finite).
  void next(v1::SimulateResponse& out);

  bool finished() const { return finished_; }
  std::uint64_t samples() const { return simulator_.stats().samples; }
  std::int64_t steps() const { return simulator_.stats().steps; }

 private:
  SimulateInput input_;
  Simulator simulator_;
  bool finished_ = false;
};

/// The state of one Stream call: its message count, the model of the previous message (with its payload)
/// and a workspace for it (messages of one stream come one at a time).
class StreamSession {
 public:
  explicit StreamSession(Registry& registry) : registry_(registry) {}

  /// Answers one message (validateStreamMessage, then the computation). Throws as the handlers do; the
  /// caller prefixes the message with "message <i>: " (i = messages() before the call).
  void answer(const v1::StreamRequest& req, v1::StreamResponse& resp, const StopCondition& stop);

  /// Messages answered so far, and of them the computations (not echoes).
  std::uint64_t messages() const { return messages_; }
  std::uint64_t computed() const { return computed_; }

 private:
  Registry& registry_;
  StreamInput input_;                        // the last message's model
  std::shared_ptr<const Model> data_model_;  // the model `data_` was made for
  std::unique_ptr<Data> data_;
  std::uint64_t messages_ = 0;
  std::uint64_t computed_ = 0;
};

}  // namespace denoc::server
