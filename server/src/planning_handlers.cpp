// The planners' RPCs (Kinematics, Derivatives, Rollout) of Handlers: checked by their validators
// (planning_validate.hpp), admitted as states, computed with the core's planning algorithms on the model of
// the call (the registered one, or a per-call copy with the payload), every state in a workspace of the
// batch loop; a rollout batch over the batch pool, stopped between steps on cancellation or deadline.
#include <chrono>

#include "batch_loop.hpp"
#include "convert.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/rollout.hpp"
#include "errors.hpp"
#include "handlers.hpp"
#include "planning_validate.hpp"

namespace denoc::server {

namespace {

using Clock = std::chrono::steady_clock;
using CMap = Eigen::Map<const Eigen::VectorXd>;

std::int64_t nanosSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

/// A matrix written row-major at out (rows * cols values).
template <typename M>
void rowMajor(const M& m, double* out) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) *out++ = m(i, j);
  }
}

}  // namespace

std::uint64_t Handlers::kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                                   v1::KinematicsResponse& resp, const StopCondition& stop) {
  const KinematicsInput in = validateKinematics(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  const Model& m = *in.model;
  const Eigen::Index n = m.n;
  const auto un = static_cast<std::size_t>(n);
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  double* rotation = resized(resp.mutable_rotation(), 9ull * in.count);
  double* origin = resized(resp.mutable_origin(), 3ull * in.count);
  double* jacobian = req.jacobian() ? resized(resp.mutable_jacobian(), 6 * in.total) : nullptr;
  double* jdot = req.jdot_qd() ? resized(resp.mutable_jdot_qd(), 6ull * in.count) : nullptr;
  const auto r = static_cast<std::size_t>(in.lambda_size);
  double* lambda = req.lambda() ? resized(resp.mutable_lambda(), r * r * in.count) : nullptr;
  double* frame_rotations =
      req.all_frames() ? resized(resp.mutable_frame_rotations(), 9 * (un + 1) * in.count) : nullptr;
  double* frame_origins =
      req.all_frames() ? resized(resp.mutable_frame_origins(), 3 * (un + 1) * in.count) : nullptr;
  const auto t0 = Clock::now();
  forEachState(
      pool_, in.model, in.count, workspaces_,
      [&](std::uint32_t k, Data& d) {
        const std::size_t o = static_cast<std::size_t>(k) * un;
        const CMap q(req.q().data() + o, n);
        Eigen::Matrix3d R;
        Eigen::Vector3d p;
        framePlacement(m, d, q, in.frame, R, p);
        rowMajor(R, rotation + 9 * static_cast<std::size_t>(k));
        rowMajor(p, origin + 3 * static_cast<std::size_t>(k));
        if (jacobian)
          rowMajor(computeFrameJacobian(m, d, q, in.frame, in.point, in.reference), jacobian + 6 * o);
        if (jdot) {
          const CMap qd(req.qd().data() + o, n);
          rowMajor(computeFrameJdotQd(m, d, q, qd, in.frame, in.point, in.reference),
                   jdot + 6 * static_cast<std::size_t>(k));
        }
        if (lambda) {
          const auto& L = computeOperationalSpaceInertia(m, d, q, in.frame, in.point, in.reference, in.rows);
          rowMajor(L.topLeftCorner(in.lambda_size, in.lambda_size), lambda + r * r * k);
        }
        if (frame_rotations) {
          forwardKinematics(m, d, q);
          for (std::size_t i = 0; i <= un; ++i) {
            rowMajor(d.kin_R[i], frame_rotations + 9 * ((un + 1) * k + i));
            rowMajor(d.kin_p[i], frame_origins + 3 * ((un + 1) * k + i));
          }
        }
      },
      stop);
  resp.set_compute_time_ns(nanosSince(t0));
  return in.count;
}

std::uint64_t Handlers::derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                                    v1::DerivativesResponse& resp, const StopCondition& stop) {
  const PlanningInput in = validateDerivatives(registry_, limits_, req);
  const Admission::Ticket ticket = admission_.admitStates(caller.principal, in.count);
  const Model& m = *in.model;
  const Eigen::Index n = m.n;
  const auto un = static_cast<std::size_t>(n);
  const std::size_t nn = un * un;
  const bool inverse = req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS;
  const bool wrench = !req.tip_wrench().empty();
  setHeader(resp, *in.entry);
  resp.set_count(in.count);
  resp.set_dof(req.dof());
  resp.set_of(req.of());
  double *d_q = nullptr, *d_qd = nullptr, *d_tau = nullptr, *value = nullptr;
  if (inverse) {
    d_q = resized(resp.mutable_dtau_dq(), nn * in.count);
    d_qd = resized(resp.mutable_dtau_dqd(), nn * in.count);
    value = resized(resp.mutable_tau(), in.total);
  } else {
    d_q = resized(resp.mutable_dqdd_dq(), nn * in.count);
    d_qd = resized(resp.mutable_dqdd_dqd(), nn * in.count);
    d_tau = resized(resp.mutable_dqdd_dtau(), nn * in.count);
    value = resized(resp.mutable_qdd(), in.total);
  }
  const auto t0 = Clock::now();
  forEachState(
      pool_, in.model, in.count, workspaces_,
      [&](std::uint32_t k, Data& d) {
        const std::size_t o = static_cast<std::size_t>(k) * un;
        const CMap q(req.q().data() + o, n), qd(req.qd().data() + o, n);
        Eigen::Matrix<double, 6, 1> w = Eigen::Matrix<double, 6, 1>::Zero();
        if (wrench) w = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(req.tip_wrench().data() + 6 * k);
        if (inverse) {
          const CMap qdd(req.qdd().data() + o, n);
          if (wrench) {
            computeInverseDynamicsDerivatives(m, d, q, qd, qdd, w);
          } else {
            computeInverseDynamicsDerivatives(m, d, q, qd, qdd);
          }
          rowMajor(d.dtau_dq, d_q + nn * k);
          rowMajor(d.dtau_dqd, d_qd + nn * k);
          Eigen::Map<Eigen::VectorXd>(value + o, n) = d.tau;
        } else {
          const CMap tau(req.tau().data() + o, n);
          if (wrench) {
            computeForwardDynamicsDerivatives(m, d, q, qd, tau, w);
          } else {
            computeForwardDynamicsDerivatives(m, d, q, qd, tau);
          }
          rowMajor(d.dqdd_dq, d_q + nn * k);
          rowMajor(d.dqdd_dqd, d_qd + nn * k);
          rowMajor(d.Minv, d_tau + nn * k);
          Eigen::Map<Eigen::VectorXd>(value + o, n) = d.qdd;
        }
      },
      stop);
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
