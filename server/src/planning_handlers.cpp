// The planners' RPCs (Kinematics, Derivatives, Rollout) of Handlers: checked by their validators
// (validate.hpp, which attach the payload), admitted as states, computed by the core's batch functions
// (planning_batch.hpp, rollout.hpp) over the batch pool, stopped on cancellation or deadline; the answers are
// written in place into the response.
#include "convert.hpp"
#include "denoc/planning_batch.hpp"
#include "denoc/rollout.hpp"
#include "handlers.hpp"

namespace denoc::server {

std::uint64_t Handlers::kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                                   v1::KinematicsResponse& resp, const StopCondition& stop) {
  const KinematicsInput in = validateKinematics(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  const auto un = static_cast<std::size_t>(in.model->n);
  FrameBatchOutput out;
  out.rotation = resized(resp.mutable_rotation(), 9ull * in.count);
  out.origin = resized(resp.mutable_origin(), 3ull * in.count);
  if (req.jacobian()) out.jacobian = resized(resp.mutable_jacobian(), 6 * in.total);
  if (req.jdot_qd()) out.jdot_qd = resized(resp.mutable_jdot_qd(), 6ull * in.count);
  const auto r = static_cast<std::size_t>(in.lambda_size);
  if (req.lambda()) out.lambda = resized(resp.mutable_lambda(), r * r * in.count);
  if (req.all_frames()) {
    out.frame_rotations = resized(resp.mutable_frame_rotations(), 9 * (un + 1) * in.count);
    out.frame_origins = resized(resp.mutable_frame_origins(), 3 * (un + 1) * in.count);
  }
  FrameQuery query;
  query.frame = in.frame;
  query.point = in.point;
  query.reference = in.reference;
  query.rows = in.rows;
  const ComputeTime time(resp);
  frameBatch(*pool_, in.model, in.count, req.q().data(), req.jdot_qd() ? req.qd().data() : nullptr, query,
             out, batchOptions(stop));
  return in.count;
}

std::uint64_t Handlers::derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                                    v1::DerivativesResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateDerivatives(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  const auto un = static_cast<std::size_t>(in.model->n);
  const std::size_t nn = un * un;
  const double* wrench = req.tip_wrench().empty() ? nullptr : req.tip_wrench().data();
  resp.set_of(req.of());
  const ComputeTime time(resp);
  if (req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS) {
    inverseDynamicsDerivativesBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(),
                                    req.qdd().data(), resized(resp.mutable_dtau_dq(), nn * in.count),
                                    resized(resp.mutable_dtau_dqd(), nn * in.count),
                                    resized(resp.mutable_tau(), in.total), wrench, batchOptions(stop));
  } else {
    forwardDynamicsDerivativesBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(),
                                    req.tau().data(), resized(resp.mutable_dqdd_dq(), nn * in.count),
                                    resized(resp.mutable_dqdd_dqd(), nn * in.count),
                                    resized(resp.mutable_dqdd_dtau(), nn * in.count),
                                    resized(resp.mutable_qdd(), in.total), wrench, batchOptions(stop));
  }
  return in.count;
}

std::uint64_t Handlers::rollout(const Caller& caller, const v1::RolloutRequest& req,
                                v1::RolloutResponse& resp, const StopCondition& stop) {
  const RolloutInput in = validateRollout(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.steps, resp);
  const std::uint64_t x = 2ull * req.dof();
  resp.set_steps(req.steps());
  RolloutArrays arrays;
  arrays.count = in.count;
  arrays.x0 = req.x0().data();
  arrays.u = req.u().data();
  arrays.shared_controls = req.shared_controls();
  arrays.states = resized(resp.mutable_states(), in.count * (req.steps() + 1ull) * x);
  if (req.linearize()) {
    arrays.A = resized(resp.mutable_a(), in.steps * x * x);
    arrays.B = resized(resp.mutable_b(), in.steps * x * req.dof());
  }
  const ComputeTime time(resp);
  rolloutBatch(*pool_, in.model, in.options, arrays, batchOptions(stop));
  return in.steps;
}

}  // namespace denoc::server
