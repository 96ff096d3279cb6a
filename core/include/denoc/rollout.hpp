// Rollouts for planners (iLQR, DDP, shooting, sampling-based MPC): from initial states x0 = [q; qd], apply a
// torque sequence u_0 .. u_{T-1} (each held over one step of fixed length h) through a fixed-step integrator,
// and return every state x_0 .. x_T and, optionally, the linearization of every step's map x+ = f(x, u):
//   A_t = d x_{t+1} / d x_t   (2n x 2n),   B_t = d x_{t+1} / d u_t   (2n x n),
// exactly as an iLQR/DDP backward pass consumes them (the chain rule through the integrator's stages, with
// the analytic derivatives of the forward dynamics: computeForwardDynamicsDerivatives).
//
// Integrators:
//  - semi-implicit (symplectic) Euler: qd+ = qd + h FD(q, qd, u), q+ = q + h qd+ (one evaluation per step);
//  - classical RK4 on xdot = [qd; FD(q, qd, u)] (four evaluations), the same arithmetic as the Simulator's
//    fixed-step RK4 (simulate.hpp), so that a zero-torque rollout reproduces it bit for bit.
//
// Arrays are packed row-major, the layout of the service's packed repeated fields (batch.hpp): a state is
// [q_0 .. q_{n-1}, qd_0 .. qd_{n-1}]; A_t and B_t are row-major (row i: d x+_i / d x).
//
// Errors. Arguments are checked before any step: a non-finite x0 or u entry or a bad option throws
// std::invalid_argument naming the rollout, the step and the joint. A state that stops being finite during a
// rollout throws NumericalError naming the rollout, the step and the joint (the states before it are
// written). A stop condition, when given, is polled between steps; when set, Stopped is thrown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "denoc/batch.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc {

/// A rollout's fixed-step integrator.
enum class StepScheme : std::uint8_t {
  SemiImplicitEuler,  // qd+ = qd + h qdd, q+ = q + h qd+
  RK4,                // classical 4th-order Runge-Kutta, torque held over the step
};

/// Options shared by all rollouts of a call.
struct RolloutOptions {
  StepScheme scheme = StepScheme::RK4;
  double step = 1e-3;     // h, s: finite, > 0
  std::size_t steps = 0;  // T: torque vectors per rollout; T + 1 states
};

/// One rollout on one workspace. x0: 2n; u: T x n; states: (T + 1) x 2n (states[0] = x0); A: T x 2n x 2n and
/// B: T x 2n x n, or null (not computed; both or either). No allocation after the checks. Throws as the file
/// comment says; `stop` may be null.
void rollout(const Model& model, Data& data, const RolloutOptions& options, const double* x0, const double* u,
             double* states, double* A = nullptr, double* B = nullptr, const StopCondition* stop = nullptr);

/// The arrays of a batch of K rollouts (packed row-major).
struct RolloutArrays {
  std::size_t count = 0;         // K
  const double* x0 = nullptr;    // K x 2n
  const double* u = nullptr;     // K x T x n, or T x n shared by all when shared_controls
  bool shared_controls = false;  //
  double* states = nullptr;      // K x (T + 1) x 2n
  double* A = nullptr;           // K x T x 2n x 2n, or null
  double* B = nullptr;           // K x T x 2n x n, or null
};

/// K rollouts across the pool's threads (BatchPool::run; chunks of at least `grain` rollouts), each computed
/// by the single-rollout function in one workspace, so a batch gives bit for bit what rollout() gives. Errors
/// name the rollout (the lowest index of several); a stop ends the batch with Stopped counting the rollouts
/// completed.
void rolloutBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, const RolloutOptions& options,
                  const RolloutArrays& arrays, const StopCondition* stop = nullptr, std::size_t grain = 1);

}  // namespace denoc
