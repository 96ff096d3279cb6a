// Batches of what planners ask for, on packed row-major arrays (count x dof, the layout of the service's
// packed repeated fields), across a BatchPool (batch.hpp): the derivatives of the inverse and forward
// dynamics, and a frame's pose, Jacobian, (dJ/dt) qd and operational-space inertia. Rollouts have their own
// batch (rollout.hpp). Each state is computed by the single-state function in one workspace, so a batch
// gives bit for bit what the single-state calls give. Matrices are written row-major (row i, column j at
// i * cols + j). Errors as in batch.hpp: a bad entry throws std::invalid_argument naming the batch function,
// the state and the argument; a NumericalError of a state (a singular configuration for the operational-space
// inertia) is rethrown naming the state; of several, the lowest state wins.
#pragma once

#include <cstddef>
#include <memory>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/batch.hpp"

namespace denoc {

/// Default minimum number of states per chunk of these batches: below it a batch runs on the calling
/// thread.
inline constexpr std::size_t kDefaultBatchGrain = 16;

/// dtau/dq and dtau/dqd (computeInverseDynamicsDerivatives) for each of `count` states. q, qd, qdd: count x
/// n; dtau_dq, dtau_dqd: count x n x n; tau: null or count x n; tip_wrench: null or count x 6 ([moment;
/// force] in the tip frame).
void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau = nullptr,
                                     const double* tip_wrench = nullptr,
                                     std::size_t grain = kDefaultBatchGrain);

/// dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (computeForwardDynamicsDerivatives) for each of `count` states. q,
/// qd, tau: count x n; dqdd_dq, dqdd_dqd: count x n x n; dqdd_dtau: null or count x n x n; qdd: null or
/// count x n; tip_wrench: null or count x 6.
void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau = nullptr,
                                     double* qdd = nullptr, const double* tip_wrench = nullptr,
                                     std::size_t grain = kDefaultBatchGrain);

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
};

/// A frame's pose, Jacobian, (dJ/dt) qd and operational-space inertia for each of `count` states. q: count x
/// n; qd: count x n, or null when jdot_qd is not asked for.
void frameBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                const double* q, const double* qd, const FrameQuery& query, const FrameBatchOutput& out,
                std::size_t grain = kDefaultBatchGrain);

}  // namespace denoc
