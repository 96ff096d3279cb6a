// The computations behind denoc.v1.Dynamics, on messages only (no gRPC types): each checks its request with
// its validator (validate.hpp), admits its work (admission.hpp), computes with the core and fills the
// answer. Errors are thrown (RequestError, the core's exceptions) for the caller to map to a status in one
// place (toStatus). Called on the compute executor's threads (reactors.hpp, service.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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

  /// Builds and checks the model (buildFromRequest, polling `stop`: the call's cancellation and deadline),
  /// stores and caches it; with access control the caller becomes its owner (when it is new).
  void registerModel(const Caller& caller, const v1::RegisterModelRequest& req,
                     v1::RegisterModelResponse& resp, const StopCondition& stop);
  /// The model's description (NOT_FOUND when unknown).
  void getModel(const v1::GetModelRequest& req, v1::GetModelResponse& resp);
  /// A page of the models in id order, within `page_size` and within the message limit (ListModelsRequest).
  void listModels(const v1::ListModelsRequest& req, v1::ListModelsResponse& resp);
  /// Removes the model from the cache and the store; with access control only its owner may.
  void deleteModel(const Caller& caller, const v1::DeleteModelRequest& req, v1::DeleteModelResponse& resp);

  /// The version and the limits this server enforces; tokens_required when the caller had to show one.
  void serverInfo(const Caller& caller, const v1::GetServerInfoRequest& req, v1::GetServerInfoResponse& resp);

  /// The planners' RPCs (planning_handlers.cpp), on the core's batch functions: kinematics and derivatives
  /// return the states computed, rollout the steps (count * steps); `stop` is polled between chunks of
  /// states and within them (rollouts: between steps).
  std::uint64_t kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                           v1::KinematicsResponse& resp, const StopCondition& stop);
  std::uint64_t derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                            v1::DerivativesResponse& resp, const StopCondition& stop);
  std::uint64_t rollout(const Caller& caller, const v1::RolloutRequest& req, v1::RolloutResponse& resp,
                        const StopCondition& stop);

  /// The batch RPCs: return the states computed; `stop` is polled between states.
  std::uint64_t inverseDynamics(const Caller& caller, const v1::InverseDynamicsRequest& req,
                                v1::InverseDynamicsResponse& resp, const StopCondition& stop);
  std::uint64_t forwardDynamics(const Caller& caller, const v1::ForwardDynamicsRequest& req,
                                v1::ForwardDynamicsResponse& resp, const StopCondition& stop);
  std::uint64_t fullFactor(const Caller& caller, const v1::FullFactorRequest& req,
                           v1::FullFactorResponse& resp, const StopCondition& stop);

 private:
  Registry& registry_;
  Limits limits_;
  Admission& admission_;
  std::unique_ptr<BatchPool> own_pool_;  // a pool of the calling thread alone when none is given
  BatchPool* pool_;                      // never null
};

/// The core batch engine's options for a call: its stop condition (cancellation and deadline).
BatchOptions batchOptions(const StopCondition& stop);

/// One Simulate run, produced a message at a time so that its caller can send each before computing the
/// next (Simulator::start and advance): the run as one Simulator::run would give it.
class SimulationRun {
 public:
  /// Checks the request (validateSimulate) and starts the integration; keep_going is asked every 64 steps
  /// (false stops the run: next() then throws CANCELLED).
  SimulationRun(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                std::function<bool()> keep_going);
  SimulationRun(const SimulationRun&) = delete;
  SimulationRun& operator=(const SimulationRun&) = delete;

  /// Fills `out` with the next batch_size samples (fewer in the last message, which has last = true and the
  /// run's step counts). Throws RequestError: CANCELLED when keep_going stopped the run ("the client went
  /// away during the simulation (after N samples, S steps)"), ABORTED when the core did (step limit, a state
  /// that stopped being finite).
  void next(v1::SimulateResponse& out);

  bool finished() const { return finished_; }
  std::uint64_t samples() const { return simulator_.stats().samples; }
  std::int64_t steps() const { return simulator_.stats().steps; }

 private:
  SimulateInput input_;
  Simulator simulator_;
  bool finished_ = false;
};

/// The state of one Stream call: its message count, the model of the previous message and a workspace for
/// it (messages of one stream come one at a time).
class StreamSession {
 public:
  explicit StreamSession(Registry& registry) : registry_(registry) {}

  /// Answers one message (validateStreamMessage, then the computation). Throws as the handlers do; the
  /// caller prefixes the message with "message <i>: " (i = messages() before the call).
  void answer(const v1::StreamRequest& req, v1::StreamResponse& resp);

  /// Messages answered so far, and of them the computations (not echoes).
  std::uint64_t messages() const { return messages_; }
  std::uint64_t computed() const { return computed_; }

 private:
  Registry& registry_;
  std::shared_ptr<const Entry> entry_;
  std::shared_ptr<const Model> data_model_;  // the model `data_` was made for
  std::unique_ptr<Data> data_;
  std::string payload_key_;  // model id and payload of payload_model_
  std::shared_ptr<const Model> payload_model_;
  std::unique_ptr<Data> payload_data_;
  std::uint64_t messages_ = 0;
  std::uint64_t computed_ = 0;
};

}  // namespace denoc::server
