// Batches of what planners ask for, on packed row-major arrays (count x dof, the layout of the service's
// packed repeated fields), on the core's batch engine (batch.hpp: its chunks, workspaces, stop condition and
// error rules): the derivatives of the inverse and forward dynamics, and a frame's pose, Jacobian,
// (dJ/dt) qd and operational-space inertia. Rollouts have their own batch (rollout.hpp). These have no SIMD
// kernels: each state is computed by the single-state function in one workspace, so a batch gives bit for
// bit what the single-state calls give. Matrices are written row-major (row i, column j at i * cols + j).
// Errors as in batch.hpp: a bad state throws BatchError naming the batch function, the state and the
// single-state function's message (its cause() is that function's exception: std::invalid_argument, or
// NumericalError for a singular configuration of the operational-space inertia); of several, the lowest
// state wins; a stopped batch throws Stopped.
#pragma once

#include <cstddef>
#include <memory>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/batch.hpp"

namespace denoc {

/// dtau/dq and dtau/dqd (computeInverseDynamicsDerivatives) for each of `count` states. q, qd, qdd: count x
/// n; dtau_dq, dtau_dqd: count x n x n; tau: null or count x n; tip_wrench: null or count x 6 ([moment;
/// force] in the tip frame).
void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau = nullptr,
                                     const double* tip_wrench = nullptr, const BatchOptions& options = {});

/// dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (computeForwardDynamicsDerivatives) for each of `count` states. q,
/// qd, tau: count x n; dqdd_dq, dqdd_dqd: count x n x n; dqdd_dtau: null or count x n x n; qdd: null or
/// count x n; tip_wrench: null or count x 6.
void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau = nullptr,
                                     double* qdd = nullptr, const double* tip_wrench = nullptr,
                                     const BatchOptions& options = {});

/// Which frame, point and axes a frame batch computes for.
struct FrameQuery {
  int frame = 0;                                    // 0..n (frameIndex; n: the tip frame)
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // in the frame's coordinates
  ReferenceFrame reference = ReferenceFrame::Base;
  TaskRows rows = TaskRows::Full;  // for lambda
};

/// Row-major outputs of frameBatch; each is computed when not null.
struct FrameBatchOutput {
  double* rotation = nullptr;  // count x 3 x 3: base <- frame
  double* origin = nullptr;    // count x 3: the frame's origin in the base frame
  double* jacobian = nullptr;  // count x 6 x n: [angular; linear] rows (computeFrameJacobian)
  double* jdot_qd = nullptr;   // count x 6 (computeFrameJdotQd; needs qd)
  double* lambda = nullptr;    // count x r x r, r = 6 or 3 (computeOperationalSpaceInertia)
  // every frame's pose (forwardKinematics), frames 0..n (n: the tip) of each state
  double* frame_rotations = nullptr;  // count x (n + 1) x 3 x 3
  double* frame_origins = nullptr;    // count x (n + 1) x 3; with frame_rotations or alone
};

/// A frame's pose, Jacobian, (dJ/dt) qd and operational-space inertia for each of `count` states. q: count x
/// n; qd: count x n, or null when jdot_qd is not asked for.
void frameBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                const double* q, const double* qd, const FrameQuery& query, const FrameBatchOutput& out,
                const BatchOptions& options = {});

}  // namespace denoc
