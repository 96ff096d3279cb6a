// The planners' RPCs (Kinematics, Derivatives, Rollout) of Handlers: checked by their validators
// (validate.hpp, which attach the payload), admitted as states, computed by the core's batch functions
// (planning_batch.hpp, rollout.hpp) over the batch pool, stopped on cancellation or deadline; the answers are
// written in place into the response.
#include <algorithm>
#include <vector>

#include "convert.hpp"
#include "denoc/planning_batch.hpp"
#include "denoc/rollout.hpp"
#include "handlers.hpp"

namespace denoc::server {

namespace {

using RowMajor3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;

/// The answer of a fixed frame from its link's (the core frame computed with the point moved onto the
/// fixed frame): its pose (rotation and origin), and in LOCAL axes its Jacobian and (dJ/dt) qd rows turned
/// into the fixed frame's axes and its operational-space inertia T lambda T^T (T those turns). One state;
/// null pointers are not asked for.
void toFixedFrame(const NamedFrame& f, bool local, int r, std::size_t nv, double* rotation, double* origin,
                  double* jacobian, double* jdot_qd, double* lambda) {
  Eigen::Map<RowMajor3> R(rotation);
  Eigen::Map<Eigen::Vector3d> o(origin);
  if (origin) o += R * f.origin;
  if (rotation) R = (R * f.rotation).eval();
  if (!local) return;
  const Eigen::Matrix3d Rt = f.rotation.transpose();
  if (jacobian) {
    Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>> J(jacobian, 6,
                                                                            static_cast<Eigen::Index>(nv));
    J.topRows<3>() = (Rt * J.topRows<3>()).eval();
    J.bottomRows<3>() = (Rt * J.bottomRows<3>()).eval();
  }
  if (jdot_qd) {
    Eigen::Map<Eigen::Vector3d> angular(jdot_qd), linear(jdot_qd + 3);
    angular = (Rt * angular).eval();
    linear = (Rt * linear).eval();
  }
  if (lambda) {
    Eigen::MatrixXd T = Eigen::MatrixXd::Zero(r, r);
    for (int b = 0; b < r; b += 3) T.block<3, 3>(b, b) = Rt;
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> L(lambda, r, r);
    L = (T * L * T.transpose()).eval();
  }
}

}  // namespace

std::uint64_t Handlers::kinematics(const Caller& caller, const v1::KinematicsRequest& req,
                                   v1::KinematicsResponse& resp, const StopCondition& stop) {
  const KinematicsInput in = validateKinematics(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  const Model& m = *in.model;
  const auto nv = static_cast<std::size_t>(m.nv), count = static_cast<std::size_t>(in.count);
  const std::size_t L = in.frames.size();
  const auto r = static_cast<std::size_t>(in.lambda_size);
  FrameBatchOutput out;
  out.rotation = resized(resp.mutable_rotation(), 9 * L * count);
  out.origin = resized(resp.mutable_origin(), 3 * L * count);
  if (req.jacobian()) out.jacobian = resized(resp.mutable_jacobian(), 6 * nv * L * count);
  if (req.jdot_qd()) out.jdot_qd = resized(resp.mutable_jdot_qd(), 6 * L * count);
  if (req.lambda()) out.lambda = resized(resp.mutable_lambda(), r * r * L * count);
  const ComputeTime time(resp);
  FrameQuery query;
  query.reference = in.reference;
  query.rows = in.rows;
  const bool local = in.reference == ReferenceFrame::Local;
  // each frame's arrays, state after state: the answer's own with one frame, else a scratch whose blocks
  // are copied to block (state, frame) of the answer
  const std::size_t sizes[5] = {9, 3, 6 * nv, 6, r * r};
  double* const outs[5] = {out.rotation, out.origin, out.jacobian, out.jdot_qd, out.lambda};
  std::vector<double> scratch;
  if (L > 1) {
    std::size_t per_state = 0;
    for (int a = 0; a < 5; ++a) per_state += outs[a] ? sizes[a] : 0;
    scratch.resize(per_state * count);
  }
  for (std::size_t f = 0; f < L; ++f) {
    double* block[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
    double* at = scratch.data();
    for (int a = 0; a < 5; ++a) {
      if (!outs[a]) continue;
      block[a] = L == 1 ? outs[a] : at;
      at += sizes[a] * count;
    }
    FrameBatchOutput one;
    one.rotation = block[0];
    one.origin = block[1];
    one.jacobian = block[2];
    one.jdot_qd = block[3];
    one.lambda = block[4];
    if (f == 0 && req.all_frames()) {  // every frame's pose, in the same sweep as the first frame's
      const auto F = static_cast<std::size_t>(frameBatchFrames(m));
      one.frame_rotations = resized(resp.mutable_frame_rotations(), 9 * F * count);
      one.frame_origins = resized(resp.mutable_frame_origins(), 3 * F * count);
    }
    const NamedFrame& named = in.frames[f];
    query.frame = named.frame;
    query.point = named.fixed ? Eigen::Vector3d(named.origin + named.rotation * in.point) : in.point;
    frameBatch(*pool_, in.model, in.count, req.q().data(), req.jdot_qd() ? req.qd().data() : nullptr, query,
               one, batchOptions(stop));
    if (named.fixed) {
      for (std::size_t k = 0; k < count; ++k) {
        toFixedFrame(named, local, in.lambda_size, nv, block[0] + 9 * k, block[1] + 3 * k,
                     block[2] ? block[2] + 6 * nv * k : nullptr, block[3] ? block[3] + 6 * k : nullptr,
                     block[4] ? block[4] + r * r * k : nullptr);
      }
    }
    if (L == 1) continue;
    for (int a = 0; a < 5; ++a) {
      if (!outs[a]) continue;
      for (std::size_t k = 0; k < count; ++k) {
        std::copy_n(block[a] + k * sizes[a], sizes[a], outs[a] + (k * L + f) * sizes[a]);
      }
    }
  }
  if (req.center_of_mass() || req.com_jacobian() || req.centroidal() || req.centroidal_momentum()) {
    CentroidalBatchOutput c;
    if (req.center_of_mass()) {
      c.com = resized(resp.mutable_com(), 3 * count);
      c.mass = resized(resp.mutable_mass(), count);
    }
    if (req.com_jacobian()) c.com_jacobian = resized(resp.mutable_com_jacobian(), 3 * nv * count);
    if (req.centroidal()) c.centroidal = resized(resp.mutable_centroidal(), 6 * nv * count);
    if (req.centroidal_momentum()) c.momentum = resized(resp.mutable_centroidal_momentum(), 6 * count);
    centroidalBatch(*pool_, in.model, in.count, req.q().data(),
                    req.centroidal_momentum() ? req.qd().data() : nullptr, c, batchOptions(stop));
  }
  return in.count;
}

std::uint64_t Handlers::derivatives(const Caller& caller, const v1::DerivativesRequest& req,
                                    v1::DerivativesResponse& resp, const StopCondition& stop) {
  const BatchInput in = validateDerivatives(registry_, limits_, req, &stop);
  const Admission::Ticket ticket = open(caller, in, in.count, resp);
  const auto nv = static_cast<std::size_t>(in.model->nv);
  const std::size_t nn = nv * nv;
  const double* wrench = req.tip_wrench().empty() ? nullptr : req.tip_wrench().data();
  resp.set_of(req.of());
  const ComputeTime time(resp);
  if (!in.wrenches.empty()) {
    // external wrenches on named frames (a tip_wrench among them): the tree route, every model
    if (req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS) {
      inverseDynamicsDerivativesBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(),
                                      req.qdd().data(), resized(resp.mutable_dtau_dq(), nn * in.count),
                                      resized(resp.mutable_dtau_dqd(), nn * in.count),
                                      resized(resp.mutable_tau(), in.total), in.wrenches, batchOptions(stop));
    } else {
      forwardDynamicsDerivativesBatch(*pool_, in.model, in.count, req.q().data(), req.qd().data(),
                                      req.tau().data(), resized(resp.mutable_dqdd_dq(), nn * in.count),
                                      resized(resp.mutable_dqdd_dqd(), nn * in.count),
                                      resized(resp.mutable_dqdd_dtau(), nn * in.count),
                                      resized(resp.mutable_qdd(), in.total), in.wrenches, batchOptions(stop));
    }
  } else if (req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS) {
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
  const Model& m = *in.model;
  const auto x = static_cast<std::uint64_t>(m.nq + m.nv), dx = 2 * static_cast<std::uint64_t>(m.nv);
  resp.set_steps(req.steps());
  RolloutArrays arrays;
  arrays.count = in.count;
  arrays.x0 = req.x0().data();
  arrays.u = req.u().data();
  arrays.shared_controls = req.shared_controls();
  arrays.wrenches = in.wrenches;  // held over each rollout
  arrays.states = resized(resp.mutable_states(), in.count * (req.steps() + 1ull) * x);
  if (req.linearize()) {
    arrays.A = resized(resp.mutable_a(), in.steps * dx * dx);
    arrays.B = resized(resp.mutable_b(), in.steps * dx * static_cast<std::uint64_t>(m.n));
  }
  const ComputeTime time(resp);
  rolloutBatch(*pool_, in.model, in.options, arrays, batchOptions(stop));
  return in.steps;
}

}  // namespace denoc::server
