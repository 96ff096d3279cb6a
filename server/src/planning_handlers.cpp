// The planners' RPCs (Kinematics, Derivatives, Rollout) of Handlers: checked by their validators
// (planning_validate.hpp), admitted as states, computed by the core's batch functions (planning_batch.hpp,
// rollout.hpp) on the model of the call (the registered one, or a per-call copy with the payload) over the
// batch pool, stopped on cancellation or deadline; the answers are written in place into the response.
#include <chrono>

#include "convert.hpp"
#include "denoc/planning_batch.hpp"
#include "denoc/rollout.hpp"
#include "errors.hpp"
#include "handlers.hpp"
#include "planning_validate.hpp"

namespace denoc::server {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanosSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

}  // namespace

std::uint64_t Handlers::kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                                   v1::KinematicsResponse& resp, const StopCondition& stop) {
  const KinematicsInput in = validateKinematics(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  const auto un = static_cast<std::size_t>(in.model->n);
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
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
  const auto t0 = Clock::now();
  frameBatch(*pool_, in.model, in.count, req.q().data(), req.jdot_qd() ? req.qd().data() : nullptr, query,
             out, batchOptions(stop));
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

std::uint64_t Handlers::derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                                    v1::DerivativesResponse& resp, const StopCondition& stop) {
  const PlanningInput in = validateDerivatives(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  const auto un = static_cast<std::size_t>(in.model->n);
  const std::size_t nn = un * un;
  const bool inverse = req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS;
  const double* wrench = req.tip_wrench().empty() ? nullptr : req.tip_wrench().data();
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  resp.set_of(req.of());
  const auto t0 = Clock::now();
  if (inverse) {
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
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

std::uint64_t Handlers::rollout(const Caller& caller, const v1::RolloutRequest& req,
                                v1::RolloutResponse& resp, const StopCondition& stop) {
  const RolloutInput in = validateRollout(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.steps);
  const std::uint64_t x = 2ull * req.dof();
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
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
  const auto t0 = Clock::now();
  try {
    rolloutBatch(*pool_, in.model, in.options, arrays, &stop);
  } catch (const Stopped& e) {
    fail(ErrorCode::Cancelled,
         std::string("the rollouts were stopped (the client cancelled the call or its deadline passed): ") +
             e.what());
  }
  resp.set_compute_time_ns(nanosSince(t0));
  return in.steps;
}

}  // namespace denoc::server
