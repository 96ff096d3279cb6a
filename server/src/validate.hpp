// Validation of requests, in one place: one validator per RPC checks a request fully, before any
// computation (the model id's form, then the model; count and dof; the limits; array lengths; finite
// values; enum values; the size of the answer), applies the optional payload to a per-call copy of the model
// (attachPayload), and returns what its handler needs. Every failure throws RequestError with a message
// naming the field and what was expected. What comes after a validator (conversion, convert.hpp; the core)
// does no checking of the request's shape. The Stream RPC checks each message with the inverse- and
// forward-dynamics checks of one state. Below the validators, the checks they are made of.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/batch.hpp"
#include "denoc/rollout.hpp"
#include "denoc/simulate.hpp"
#include "denoc/stop.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "registry.hpp"

namespace denoc::server {

using Doubles = google::protobuf::RepeatedField<double>;

/// A frame a request names, as a frame of the core (frameIndex: a link, the tip n, the root link n + 1) and
/// the named frame's placement in it: the identity for the core's own frames, the FixedFrameSpec for a link
/// merged by fixed joints.
struct NamedFrame {
  int frame = 0;
  bool fixed = false;
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // core frame <- named frame
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();        // named frame's origin in the core frame
};

// ------------------------------------------------------------------------------------------- the registry

/// RegisterModel: the name (kMaxNameLength), gravity and armature finite; a source: a DH table (1 to
/// --max-dof links, each with names within kMaxNameLength, a joint type, finite numbers, no NaN limit; no
/// request-level armature) or URDF text (not empty; base and tip link names within kMaxNameLength). The
/// model itself is the core's to judge (buildFromRequest, registration.hpp).
void validateRegisterModel(const v1::RegisterModelRequest& req, const Limits& limits);

/// GetModel: the model (requireModel).
std::shared_ptr<const Entry> validateGetModel(Registry& registry, const v1::GetModelRequest& req,
                                              const StopCondition* stop);

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

// -------------------------------------------------------------------------------------------- the batches

/// A checked batch: the registered model, the model to compute with (the registered one, or a copy with the
/// request's payload attached), the number of states and the external wrenches (LinkWrench, the frames
/// resolved; a tip_wrench given with them is among them, on the tip frame in its axes).
struct BatchInput {
  std::shared_ptr<const Entry> entry;
  std::shared_ptr<const Model> model;
  std::uint32_t count = 0;  // states (rollouts for Rollout)
  std::uint64_t total = 0;  // count * nv (count * (nq + nv) for Rollout)
  std::vector<BatchWrench> wrenches;
  std::vector<std::vector<double>> wrench_values;  // wrenches given in a fixed frame's axes, turned
};

/// InverseDynamics: model, count and dof, the lengths of q, qd, qdd (count*dof) and tip_wrench (count*6 or
/// none), finite values, the answer's size, the payload.
BatchInput validateInverseDynamics(Registry& registry, const Limits& limits,
                                   const v1::InverseDynamicsRequest& req, const StopCondition* stop);

/// ForwardDynamics: model, count and dof, route, the lengths of q, qd, tau, finite values, the answer's
/// size, the payload.
BatchInput validateForwardDynamics(Registry& registry, const Limits& limits,
                                   const v1::ForwardDynamicsRequest& req, const StopCondition* stop);

/// FullFactor: model, count and dof, the lengths of q and qd (needed for convective and bias, else optional),
/// finite values, the answer's size with the requested terms, the payload.
BatchInput validateFullFactor(Registry& registry, const Limits& limits, const v1::FullFactorRequest& req,
                              const StopCondition* stop);

/// A checked Kinematics request.
struct KinematicsInput : BatchInput {
  std::vector<NamedFrame> frames;  // L >= 1 frames
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  ReferenceFrame reference = ReferenceFrame::Base;
  TaskRows rows = TaskRows::Full;
  int lambda_size = 6;  // r: 6, or 3 for a 3-row task
};

/// Kinematics: model, count and dof, q (and qd with jdot_qd or centroidal_momentum; otherwise empty or
/// count*dof), the frames (link, or 1..kMaxFrames names of links; empty: the tip), a finite point, the
/// enums, lambda on serial chains only, the answer's size, the payload.
KinematicsInput validateKinematics(Registry& registry, const Limits& limits, const v1::KinematicsRequest& req,
                                   const StopCondition* stop);

/// Derivatives: model, count and dof, `of`, q, qd and qdd (inverse) or tau (forward), tip_wrench (count*6 or
/// none), the external wrenches (as InverseDynamics'; a tip_wrench with them is among them), finite values,
/// the answer's size, the payload.
BatchInput validateDerivatives(Registry& registry, const Limits& limits, const v1::DerivativesRequest& req,
                               const StopCondition* stop);

/// A checked Rollout request: count is K; `steps` the number of single-step evaluations K * T, admitted and
/// bounded as states are.
struct RolloutInput : BatchInput {
  RolloutOptions options;
  std::uint64_t steps = 0;  // K * T
};

/// Rollout: model, K >= 1 and T >= 1 with K * T within --max-states, dof, dt finite and > 0, the scheme,
/// x0 (K * 2 dof) and u (K * T * dof, or T * dof shared) finite, the external wrenches (frames resolved,
/// 6 values shared by the K rollouts or K * 6, finite and within range, at most max_wrenches), the answer
/// (states, and A and B when linearized: K * T * (2n)^2 + K * T * 2n * n doubles) within
/// --max-message-bytes, the payload.
RolloutInput validateRollout(Registry& registry, const Limits& limits, const v1::RolloutRequest& req,
                             const StopCondition* stop);

// ---------------------------------------------------------------------------------------------- the streams

/// A checked simulation: its model, options (toSimulationOptions, checked by the core's validateSimulation),
/// number of samples and samples per message.
struct SimulateInput {
  std::shared_ptr<const Entry> entry;
  SimulationOptions options;
  std::size_t samples = 0;
  std::uint32_t batch = 0;
};

/// Simulate: model and dof, q0 and qd0, the integrator and the route (SAHA or CHOLESKY), max_steps within the
/// core's default (10^7), the torque and damping arrays (shapes, finite values), then the options by the
/// core (validateSimulation), samples within --max-states, a message of batch_size samples within the
/// message limit.
SimulateInput validateSimulate(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                               const StopCondition* stop);

/// A checked Stream message: its registered model (null before the first computation), the model to
/// compute with (with the message's payload attached) and the message's external wrenches.
struct StreamInput {
  std::shared_ptr<const Entry> entry;
  std::shared_ptr<const Model> model;
  std::string key;  // the model id and the payload's bytes: `model` is reused while they are the same
  std::vector<ExternalWrench> wrenches;
};

/// One Stream message: COMPUTATION_ECHO needs nothing (`previous` is returned); inverse and forward dynamics
/// need a model (`previous.entry` is reused when the id is the same, `previous.model` while the payload is
/// the same) and one state checked as the batch validators check theirs (the lengths are dof, tip_wrench 6
/// or none). The caller prefixes errors with "message <i>: ".
StreamInput validateStreamMessage(Registry& registry, const v1::StreamRequest& req, StreamInput previous,
                                  const StopCondition* stop);

// ------------------------------------------------------------------------------------------------ the checks

/// The model for id: INVALID_ARGUMENT when id is not 64 lower-case hex digits, NOT_FOUND when unknown. A
/// model only in the store is built, polling `stop` (may be null).
std::shared_ptr<const Entry> requireModel(Registry& registry, const std::string& id,
                                          const StopCondition* stop);

/// Checks count (1..max_states: RESOURCE_EXHAUSTED above) and dof (equal to the model's nv) and returns
/// count * nv, checked against overflow.
std::uint64_t checkBatch(std::uint32_t count, std::uint32_t dof, const Model& model, const Limits& limits);

/// a * b, INVALID_ARGUMENT naming what when it overflows 64 bits.
std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const char* what);

/// INVALID_ARGUMENT "q has 13 values, expected count*dof = 14" unless values.size() == expected.
void checkLength(const Doubles& values, const char* name, std::uint64_t expected, const char* expected_text);

/// INVALID_ARGUMENT "qd[5] (state 0, column 5) is nan, expected a finite number" at the first non-finite
/// entry, or "... is 1.7e+308, expected a number in [-1e12, 1e12]" at the first beyond `bound` (the core's
/// kMaxStateValue by default; positions pass the largest double: the core bounds them by kMaxPosition,
/// naming that bound); row is the number of values per state (the state and column are named when row > 0).
void checkFinite(const Doubles& values, const char* name, std::uint64_t row, double bound = 1e12);

/// RESOURCE_EXHAUSTED when an answer of this many doubles would exceed max_message_bytes.
void checkAnswerSize(std::uint64_t doubles, const Limits& limits);

/// INVALID_ARGUMENT unless v is finite and > 0 (strictly) or >= 0 (allow_zero).
void checkPositive(double v, const char* name, bool allow_zero);

/// INVALID_ARGUMENT naming `field` unless route is a ForwardRoute value (and, for a tree model, one it has:
/// not FIXMAN).
void checkRoute(v1::ForwardRoute route, const char* field, const Model& model);

/// The configurations of `count` states (nq values each, `values` already of that length and finite): for
/// a floating root, each quaternion within kQuaternionTolerance of unit norm, else INVALID_ARGUMENT naming
/// the array, the state and the norm.
void checkConfigurations(const Doubles& values, const char* name, std::uint64_t count, std::uint64_t stride,
                         std::uint64_t offset, const Model& model);

/// The frame of a name of ModelInfo.frames (a link, "tip", the root link, a fixed frame; empty: the tip
/// frame): INVALID_ARGUMENT naming `field` and the name when the model has no such frame.
NamedFrame resolveFrame(const Model& model, const std::string& name, const std::string& field);

}  // namespace denoc::server
