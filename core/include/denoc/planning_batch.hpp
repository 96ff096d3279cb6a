// Batches of what planners ask for, on packed row-major arrays (count x dof, the layout of the service's
// packed repeated fields), on the core's batch engine (batch.hpp: its chunks, workspaces, stop condition and
// error rules): the derivatives of the inverse and forward dynamics, and a frame's pose, Jacobian,
// (dJ/dt) qd and operational-space inertia. Rollouts have their own batch (rollout.hpp). These have no SIMD
// kernels: each state is computed by the single-state function in one workspace, so a batch gives bit for
// bit what the single-state calls give. Matrices are written row-major (row i, column j at i * cols + j).
// Every model is accepted (docs/trees.md): state k reads q at k * nq and v, a, tau at k * nv, and writes its
// nv x nv matrices at k * nv * nv and its 6 x nv Jacobian at k * 6 * nv (nq = nv = n for a serial chain).
// Errors as in batch.hpp: a bad state throws BatchError naming the batch function, the state and the
// single-state function's message (its cause() is that function's exception: std::invalid_argument, or
// NumericalError for a singular configuration of the operational-space inertia); of several, the lowest
// state wins; a stopped batch throws Stopped.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/batch.hpp"

namespace denoc {

/// dtau/dq and dtau/dqd (computeInverseDynamicsDerivatives) for each of `count` states. q: count x nq; qd,
/// qdd: count x nv; dtau_dq, dtau_dqd: count x nv x nv (for a tree, the q columns along
/// integrateConfiguration); tau: null or count x nv; tip_wrench: null or count x 6 ([moment; force] in the
/// tip frame).
void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau = nullptr,
                                     const double* tip_wrench = nullptr, const BatchOptions& options = {});

/// dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (computeForwardDynamicsDerivatives) for each of `count` states. q:
/// count x nq; qd, tau: count x nv; dqdd_dq, dqdd_dqd: count x nv x nv; dqdd_dtau: null or count x nv x nv;
/// qdd: null or count x nv; tip_wrench: null or count x 6.
void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau = nullptr,
                                     double* qdd = nullptr, const double* tip_wrench = nullptr,
                                     const BatchOptions& options = {});

/// The two batches above with external wrenches on any frames (BatchWrench, at most kMaxBatchWrenches: state
/// k's at values + k * stride), each state by computeInverseDynamicsDerivatives or
/// computeForwardDynamicsDerivatives with its wrenches (the tree route, eq. D.0 of tree_derivatives.hpp: a
/// Local wrench is fixed in its link, a Base wrench keeps its world axes). A wrench on a frame out of range
/// or without values throws std::invalid_argument before any state.
void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau,
                                     const std::vector<BatchWrench>& wrenches,
                                     const BatchOptions& options = {});
void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau, double* qdd,
                                     const std::vector<BatchWrench>& wrenches,
                                     const BatchOptions& options = {});

/// Which frame, point and axes a frame batch computes for.
struct FrameQuery {
  int frame = 0;  // 0..n + 1 (frameIndex; n: the tip frame, n + 1: the root link)
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // in the frame's coordinates
  ReferenceFrame reference = ReferenceFrame::Base;
  TaskRows rows = TaskRows::Full;  // for lambda
};

/// Row-major outputs of frameBatch; each is computed when not null.
struct FrameBatchOutput {
  double* rotation = nullptr;  // count x 3 x 3: base <- frame
  double* origin = nullptr;    // count x 3: the frame's origin in the base frame
  double* jacobian = nullptr;  // count x 6 x nv: [angular; linear] rows (computeFrameJacobian)
  double* jdot_qd = nullptr;   // count x 6 (computeFrameJdotQd; needs qd)
  double* lambda = nullptr;    // count x r x r, r = 6 or 3 (computeOperationalSpaceInertia; serial chains
                               // only: a tree model is refused)
  // every frame's pose (forwardKinematics), frames 0..F-1 of each state, F = frameBatchFrames(model): the
  // links, the tip (n) and, for a floating or planar root, the root link (n + 1)
  double* frame_rotations = nullptr;  // count x F x 3 x 3
  double* frame_origins = nullptr;    // count x F x 3; with frame_rotations or alone
};

/// The frames per state of FrameBatchOutput::frame_rotations and frame_origins: n + 1 for a fixed root (the
/// links and the tip; the root link is the world), n + 2 for a floating or planar root (its root link last).
int frameBatchFrames(const Model& model);

/// Row-major outputs of centroidalBatch; each is computed when not null (algorithm/centroidal.hpp).
struct CentroidalBatchOutput {
  double* com = nullptr;           // count x 3: the centre of mass in the world (computeCenterOfMass)
  double* mass = nullptr;          // count: the total mass
  double* com_jacobian = nullptr;  // count x 3 x nv (computeCenterOfMassJacobian)
  double* centroidal = nullptr;    // count x 6 x nv: A_G, rows [angular; linear] (computeCentroidalMap)
  double* momentum = nullptr;      // count x 6: h_G = A_G qd (needs qd; computeCentroidalMapTimeVariation)
};

/// The centre of mass, its Jacobian, the centroidal momentum matrix and momentum for each of `count`
/// states. q: count x nq; qd: count x nv, or null when the momentum is not asked for.
void centroidalBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const CentroidalBatchOutput& out,
                     const BatchOptions& options = {});

/// A frame's pose, Jacobian, (dJ/dt) qd and operational-space inertia for each of `count` states. q: count x
/// nq; qd: count x nv, or null when jdot_qd is not asked for.
void frameBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                const double* q, const double* qd, const FrameQuery& query, const FrameBatchOutput& out,
                const BatchOptions& options = {});

}  // namespace denoc
