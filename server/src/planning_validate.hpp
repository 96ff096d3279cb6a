// Validation of the planners' requests (Kinematics, Derivatives, Rollout), one validator per RPC as in
// validate.hpp: each checks its request fully before any computation, bounds the work and the answer
// before anything is allocated for them, applies the optional payload to a per-call copy of the model
// (attachPayload) and returns what its handler needs. Failures throw RequestError naming the field.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/rollout.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"
#include "registry.hpp"

namespace denoc::server {

/// A checked planning request: the registered model, the model to compute with (the registered one, or a
/// copy with the payload attached), and the number of states.
struct PlanningInput {
  std::shared_ptr<const Entry> entry;
  std::shared_ptr<const Model> model;
  std::uint32_t count = 0;
  std::uint64_t total = 0;  // count * dof
};

/// The model a request computes with: `model` itself without a payload, else a new model with the payload
/// attached to its tip (attachPayload). The payload is checked as a link's inertia is (checkPayload):
/// INVALID_ARGUMENT naming the payload's field.
std::shared_ptr<const Model> modelWithPayload(const std::shared_ptr<const Model>& model, bool has_payload,
                                              const v1::Payload& payload);

/// A checked Kinematics request.
struct KinematicsInput : PlanningInput {
  int frame = 0;  // 0..n (n: the tip frame)
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  ReferenceFrame reference = ReferenceFrame::Base;
  TaskRows rows = TaskRows::Full;
  int lambda_size = 6;  // r: 6, or 3 for a 3-row task
};

/// Kinematics: model, count and dof, q (and qd with jdot_qd; otherwise empty or count*dof), the link (a
/// name of the model's links, or empty: the tip), a finite point, the enums, the answer's size.
KinematicsInput validateKinematics(Registry& registry, const Limits& limits,
                                   const v1::KinematicsRequest& req);

/// Derivatives: model, count and dof, `of`, q, qd and qdd (inverse) or tau (forward), tip_wrench (count*6 or
/// none), finite values, the answer's size.
PlanningInput validateDerivatives(Registry& registry, const Limits& limits,
                                  const v1::DerivativesRequest& req);

/// A checked Rollout request: count is K; `steps` the number of single-step evaluations K * T, admitted and
/// bounded as states are.
struct RolloutInput : PlanningInput {
  RolloutOptions options;
  std::uint64_t steps = 0;  // K * T
};

/// Rollout: model, K >= 1 and T >= 1 with K * T within --max-states, dof, dt finite and > 0, the scheme,
/// x0 (K * 2 dof) and u (K * T * dof, or T * dof shared) finite, the answer (states, and A and B when
/// linearized: K * T * (2n)^2 + K * T * 2n * n doubles) within --max-message-bytes.
RolloutInput validateRollout(Registry& registry, const Limits& limits, const v1::RolloutRequest& req);

}  // namespace denoc::server
