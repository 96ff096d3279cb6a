// Rollouts for planners (iLQR, DDP, shooting, sampling-based MPC): from initial states x0 = [q; qd], apply a
// torque sequence u_0 .. u_{T-1} (each held over one step of fixed length h) through a fixed-step integrator,
// and return every state x_0 .. x_T and, optionally, the linearization of every step's map x+ = f(x, u):
//   A_t = d x_{t+1} / d x_t   (2n x 2n),   B_t = d x_{t+1} / d u_t   (2n x n),
// exactly as an iLQR/DDP backward pass consumes them (the chain rule through the integrator's stages, with
// the analytic derivatives of the forward dynamics: computeForwardDynamicsDerivatives).
//
// Integrators: the fixed-step schemes of integrator.hpp, the ones the Simulator's fixed-step runs take their
// steps from (so a zero-torque RK4 rollout reproduces the Simulator's RK4 run bit for bit):
//  - semi-implicit (symplectic) Euler: qd+ = qd + h FD(q, qd, u), q+ = q + h qd+ (one evaluation per step);
//  - classical RK4 on xdot = [qd; FD(q, qd, u)] (four evaluations).
//
// Arrays are packed row-major, the layout of the service's packed repeated fields (batch.hpp): a state is
// [q_0 .. q_{n-1}, qd_0 .. qd_{n-1}]; A_t and B_t are row-major (row i: d x+_i / d x).
//
// Tree models (docs/trees.md) roll out on the configuration manifold (core/src/manifold_step.hpp): a state
// is x = [q (nq); v (nv)], u has nu = n joint torques per step (the root is unactuated), and
//  - semi-implicit Euler: v+ = v + h FD(q, v, [0; u]), q+ = integrateConfiguration(q, v+, h);
//  - RK4 in the chart at q (Runge-Kutta-Munthe-Kaas, dexp^-1 through its second commutator): 4th order in
//    the root's rotation and position as in the joints;
//  - A_t (2nv x 2nv) and B_t (2nv x nu) in the tangent space: the q part of x perturbed along
//    integrateConfiguration, the q part of x+ measured by differenceConfiguration at the nominal x+.
// Arrays: x0 (nq + nv), states (T + 1) x (nq + nv), A T x 2nv x 2nv, B T x 2nv x nu. A serial chain's
// results (nq = nv = n) are those above, unchanged. docs/planning.md, "Rollouts of a tree model".
//
// External wrenches (ExternalWrench, BatchWrench in a batch) on any frames are held constant over the whole
// rollout: every stage's forward dynamics takes them, so FD(q, v, u) above is forwardDynamics(q, v, u,
// wrenches); the linearization's dFD/dq includes their own q-dependence (a Base wrench keeps its world axes
// while its point moves with its link: tree_derivatives.hpp, eq. D.0), and B keeps its form (dFD/du = I^-1).
// A serial chain with wrenches takes its stages by the tree route, so its results agree with the serial
// route's to rounding.
//
// Errors. Arguments are checked before any step: a non-finite x0 or u entry or a bad option throws
// std::invalid_argument naming the rollout, the step and the joint. A state (or linearization) that stops
// being finite during a rollout throws DivergenceError (integrator.hpp) naming the rollout, the step and the
// joint (the states before it are written). A stop condition, when given, is polled before every step; when
// set, Stopped is thrown.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <memory>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/data.hpp"
#include "denoc/integrator.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc {

/// Options shared by all rollouts of a call.
struct RolloutOptions {
  StepScheme scheme = StepScheme::RK4;
  double step = 1e-3;     // h, s: finite, > 0
  std::size_t steps = 0;  // T: torque vectors per rollout; T + 1 states
};

/// What a rollout's steps need beside the dynamics' Data: the fixed step's stage vectors and the chain rule
/// through the stages (A and B). RolloutScratch(n) is a serial chain's of n joints; RolloutScratch(model)
/// fits any model (a tree model's also has the manifold step's stages and the tangent-space chain rule).
/// Its contents after a rollout are unspecified.
struct RolloutScratch {
  explicit RolloutScratch(int n = 0)
      : step(n),
        D(Eigen::MatrixXd::Zero(2 * n, 2 * n)),
        E(Eigen::MatrixXd::Zero(2 * n, n)),
        W(Eigen::MatrixXd::Zero(n, 2 * n)) {}
  explicit RolloutScratch(const Model& model);
  /// Whether it was made for a model of this model's sizes (and kind: serial or tree).
  bool fits(const Model& model) const;

  FixedStepWork step;  // [2n] stage state, slope and RK4 sum (integrator.hpp)
  Eigen::MatrixXd D;   // [2n x 2n] d(stage state)/dx
  Eigen::MatrixXd E;   // [2n x n] d(stage state)/du
  Eigen::MatrixXd W;   // [n x 2n] work rows of d(stage slope)/dx, then d(stage slope)/du

  // a tree model (empty for a serial chain): nv velocity coordinates, nu = n torques, m = 2 nv + nu columns
  // [dq (tangent at q), dv, du] of the stage derivatives (core/src/manifold_step.hpp)
  bool tree = false;
  ManifoldStepWork manifold;  // [nq], [nv] stage vectors of the step on the manifold (integrator.hpp)
  Eigen::VectorXd tau;        // [nv] the generalized force [0 (the root); u]
  Eigen::MatrixXd Dxi, Dv, Dq, Da, Dnu, DXi, Dvs;  // [nv x m] d(xi_s, v_s, q_s, a_s, nu_s, sum, v sum)
  Eigen::MatrixXd T6;                              // [6 x m] work rows for the root's blocks
};
/// The workspace of single rollouts of one model: the dynamics' Data and the rollout's scratch, allocated
/// once. One per thread.
struct RolloutWorkspace {
  explicit RolloutWorkspace(const Model& model) : data(model), scratch(model) {}
  Data data;
  RolloutScratch scratch;
};

/// One rollout on one workspace (made for this model). x0: 2n; u: T x n; states: (T + 1) x 2n (states[0] =
/// x0); A: T x 2n x 2n and B: T x 2n x n, or null (not computed; both or either); for a tree model x0 has
/// nq + nv entries, u T x nu, states (T + 1) x (nq + nv), A T x 2nv x 2nv and B T x 2nv x nu. No allocation
/// after the checks. Throws as the file comment says; `stop` may be null.
/// `wrenches` (wrench_count of them, or null and 0): external wrenches held constant over the whole rollout
/// (see the file comment), checked as forwardDynamics checks them.
void rollout(const Model& model, RolloutWorkspace& workspace, const RolloutOptions& options, const double* x0,
             const double* u, double* states, double* A = nullptr, double* B = nullptr,
             const StopCondition* stop = nullptr, const ExternalWrench* wrenches = nullptr,
             int wrench_count = 0);

/// The arrays of a batch of K rollouts (packed row-major).
struct RolloutArrays {
  std::size_t count = 0;         // K
  const double* x0 = nullptr;    // K x 2n (a tree model: K x (nq + nv), and so on below)
  const double* u = nullptr;     // K x T x n, or T x n shared by all when shared_controls
  bool shared_controls = false;  //
  double* states = nullptr;      // K x (T + 1) x 2n
  double* A = nullptr;           // K x T x 2n x 2n, or null
  double* B = nullptr;           // K x T x 2n x n, or null
  // external wrenches (at most kMaxBatchWrenches), each held constant over its rollout: rollout k's is the 6
  // values at values + k * stride (stride 0: the same for every rollout, 6: one per rollout)
  std::vector<BatchWrench> wrenches = {};
};

/// K rollouts across the pool's threads (BatchPool::run), each computed by the single rollout's steps in one
/// thread's workspace, so a batch gives bit for bit what rollout() gives. Of the batch options it reads
/// `stop` (polled before every step), `grain` (rollouts per chunk at least; 0: 1, a rollout is long) and
/// `max_threads`, and fills `stats` (width 1: a rollout has no SIMD lanes); `width` is not used. Errors name
/// the rollout (the lowest index of several); a stop ends the batch with Stopped counting the rollouts
/// completed.
void rolloutBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, const RolloutOptions& options,
                  const RolloutArrays& arrays, const BatchOptions& batch = {});

}  // namespace denoc
