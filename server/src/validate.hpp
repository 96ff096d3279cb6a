// Validation of requests, in one place: one validator per RPC checks a request fully, before any
// computation, and returns what its handler needs; every failure throws RequestError with a message naming
// the field and what was expected. The Stream RPC checks each message with the inverse- and
// forward-dynamics checks of one state. Below the validators, the checks they are made of.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <memory>
#include <string>

#include "denoc/simulate.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "registry.hpp"

namespace denoc::server {

using Doubles = google::protobuf::RepeatedField<double>;

/// A checked batch: its model and size.
struct BatchInput {
  std::shared_ptr<const Entry> entry;
  std::uint32_t count = 0;  // states
  std::uint64_t total = 0;  // count * dof
};

/// InverseDynamics: model, count and dof, the lengths of q, qd, qdd (count*dof) and tip_wrench (count*6 or
/// none), finite values, the answer's size.
BatchInput validateInverseDynamics(Registry& registry, const Limits& limits,
                                   const v1::InverseDynamicsRequest& req);

/// ForwardDynamics: model, count and dof, route, the lengths of q, qd, tau, finite values, the answer's size.
BatchInput validateForwardDynamics(Registry& registry, const Limits& limits,
                                   const v1::ForwardDynamicsRequest& req);

/// FullFactor: model, count and dof, the lengths of q and qd (needed for convective and bias, else optional),
/// finite values, the answer's size with the requested terms.
BatchInput validateFullFactor(Registry& registry, const Limits& limits, const v1::FullFactorRequest& req);

/// A checked simulation: its model, options, number of samples and samples per message.
struct SimulateInput {
  std::shared_ptr<const Entry> entry;
  SimulationOptions options;
  std::size_t samples = 0;
  std::uint32_t batch = 0;
};

/// Simulate: model and dof, q0 and qd0, the options (toSimulationOptions, then the core's
/// validateSimulation), samples within --max-states, a message of batch_size samples within the message
/// limit.
SimulateInput validateSimulate(Registry& registry, const Limits& limits, const v1::SimulateRequest& req);

/// One Stream message: COMPUTATION_ECHO needs nothing (null entry); inverse and forward dynamics need a model
/// (`previous` is reused when the id is the same) and one state checked as the batch validators check theirs
/// (the lengths are dof, tip_wrench 6 or none). The caller prefixes errors with "message <i>: ".
std::shared_ptr<const Entry> validateStreamMessage(Registry& registry, const v1::StreamRequest& req,
                                                   std::shared_ptr<const Entry> previous);

/// GetModel: the model (requireModel).
std::shared_ptr<const Entry> validateGetModel(Registry& registry, const v1::GetModelRequest& req);

/// DeleteModel: the id's form (existence and ownership are the registry's to check).
void validateDeleteModel(const v1::DeleteModelRequest& req);

/// A checked ListModels page: the models after `after` (empty: from the first), at most `page_size` of
/// them (0: as many as fit in one answer).
struct ListPage {
  std::string after;
  std::uint32_t page_size = 0;
};

/// ListModels: page_token empty or a page token this server handed out (a model id).
ListPage validateListModels(const v1::ListModelsRequest& req);

/// The model for id: INVALID_ARGUMENT when id is not 64 lower-case hex digits, NOT_FOUND when unknown.
std::shared_ptr<const Entry> requireModel(Registry& registry, const std::string& id);

/// Checks count (1..max_states: RESOURCE_EXHAUSTED above) and dof (equal to the model's) and returns
/// count * dof, checked against overflow.
std::uint64_t checkBatch(std::uint32_t count, std::uint32_t dof, const Model& model, const Limits& limits);

/// a * b, INVALID_ARGUMENT naming what when it overflows 64 bits.
std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const char* what);

/// INVALID_ARGUMENT "q has 13 values, expected count*dof = 14" unless values.size() == expected.
void checkLength(const Doubles& values, const char* name, std::uint64_t expected, const char* expected_text);

/// INVALID_ARGUMENT "qd[5] (state 0, joint 5) is nan, expected a finite number" at the first non-finite
/// entry; row is the number of values per state (the state and column are named when row > 0).
void checkFinite(const Doubles& values, const char* name, std::uint64_t row);

/// RESOURCE_EXHAUSTED when an answer of this many doubles would exceed max_message_bytes.
void checkAnswerSize(std::uint64_t doubles, const Limits& limits);

/// INVALID_ARGUMENT unless v is finite and > 0 (strictly) or >= 0 (allow_zero).
void checkPositive(double v, const char* name, bool allow_zero);

/// INVALID_ARGUMENT naming `field` unless route is a ForwardRoute value.
void checkRoute(v1::ForwardRoute route, const char* field);

}  // namespace denoc::server
